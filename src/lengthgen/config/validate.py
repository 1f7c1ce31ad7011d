"""Config validation: the schema (with defaults filled in) plus the checks a schema cannot express.

Runs when the workflow starts, so a bad config stops everything before any job, with one
message that names the offending key.
"""

from __future__ import annotations

import copy

import jsonschema

from ..settings import ConfigError
from ..tasks import FAMILIES, TASK_NAMES, LengthBin, get_task
from ..tasks.generate import check_settings
from ..tasks.generators import get_generator
from .models_check import add_shipped_models, check_models, model_entry
from .schema import DefaultingValidator, coerce_strings, config_key, first_error, load_schema, subschema
from .sections import (
    corpus_model_keys,
    finetune_protocols,
    held_out,
    merged_protocol,
    protocol_key,
    resolve_protocols,
    scratch_family_settings,
    scratch_lengths,
)


def validate_config(config: dict, schema: dict | None = None, check_availability: bool = True,
                    search=(".",)) -> dict:
    """Return a validated copy of `config` with schema defaults filled in, or raise ConfigError.

    check_availability=False checks model names but not that the models can be loaded here; the
    workflow checks that in `onstart`, which a dry run skips, so a cluster grid can be previewed
    on a machine without the weights.
    """
    schema = schema if schema is not None else load_schema()
    config = coerce_strings(copy.deepcopy(config), schema, schema)
    error = first_error(DefaultingValidator(schema).iter_errors(config))
    if error is not None:
        raise ConfigError(f"config key {config_key(error.absolute_path)}: {error.message}")
    check_family_overrides(config, schema)
    check_stacking(config)
    check_protocols(config, schema)
    check_architectures(config)
    check_corpora(config)
    check_grid(config)
    check_shots(config)
    add_shipped_models(config)
    check_models(config, check_availability, search)
    check_positions(config, search)
    return canonical(resolve_protocols(set_order(config)))


def set_order(config: dict) -> dict:
    """The lists that are sets (the tasks, the seeds, the corpora's fine-tuning tasks) in one order:
    the tasks' own and ascending seeds, so a reordered list is not a change and reruns nothing."""
    ordered = lambda tasks: [task for task in TASK_NAMES if task in tasks]  # noqa: E731
    config["tasks"], config["seeds"] = ordered(config["tasks"]), sorted(config["seeds"])
    config["corpora"]["finetune"]["tasks"] = ordered(config["corpora"]["finetune"]["tasks"])
    return config


def canonical(value):
    """`value` with every mapping's keys sorted, recursively.

    Snakemake compares a job's params by their repr, and a dict's repr follows insertion order:
    sorted keys make key order in a preset, or a default restated with `--config`, rerun nothing.
    """
    if isinstance(value, dict):
        return {key: canonical(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


def check_architectures(config: dict) -> None:
    """Model shapes that pass the schema but that a model cannot be built with."""
    shapes = [(f"scratch.family_overrides.{family}.model" if family in config["scratch"]["family_overrides"]
               else "scratch.model", scratch_family_settings(config["scratch"], family)["model"])
              for family in FAMILIES]
    shapes.append(("pretrain.model", config["pretrain"]["model"]))
    for key, model in shapes:
        if model["d_model"] % model["heads"]:
            raise ConfigError(f"config key {key}.d_model: {model['d_model']} is not a multiple of heads "
                              f"({model['heads']}): every head gets d_model / heads dimensions")
    rotary = {"rope"} & set(config["scratch"]["positional_encodings"])
    for key, model in shapes[:-1] if rotary else []:
        if (model["d_model"] // model["heads"]) % 2:
            raise ConfigError(f"config key {key}.d_model: RoPE rotates pairs of dimensions, so d_model / heads "
                              f"({model['d_model']} / {model['heads']}) must be even")


def check_stacking(config: dict) -> None:
    """A stack pads every row to one width: micro-batches by length cannot be stacked."""
    if not config["scratch"]["stack"]:
        return
    for family in FAMILIES:
        buckets = scratch_family_settings(config["scratch"], family)["training"]["length_buckets"]
        if buckets > 1:
            key = ("scratch.family_overrides." + family if family in config["scratch"]["family_overrides"]
                   else "scratch") + ".training.length_buckets"
            raise ConfigError(f"config key {key}: {buckets} with scratch.stack: a stacked run pads every row to "
                              "one width, so it takes length_buckets 1 (or set scratch.stack: false)")


def check_finetune_validation(finetune: dict) -> None:
    """A held-out validation set comes from a fixed training set, and must leave some of it to train on."""
    if finetune["validation"] != "holdout":
        return
    if not finetune["train_examples"]:
        raise ConfigError("config key finetune.validation: holdout needs a fixed training set (finetune.train_examples "
                          "is null: every step draws fresh examples)")
    held = held_out(finetune)
    if not 0 < held < finetune["train_examples"]:
        raise ConfigError(f"config key finetune.validation_fraction: {finetune['validation_fraction']} of "
                          f"{finetune['train_examples']} training examples holds out {held}; at least one must be "
                          "held out and one left to train on")


def check_family_overrides(config: dict, schema: dict) -> None:
    """Each family's merged `model` / `training` settings against the schema of those blocks."""
    definitions = {"model": "scratch_model", "training": "scratch_training"}
    for family, override in config["scratch"]["family_overrides"].items():
        merged = scratch_family_settings(config["scratch"], family)
        for part in override:
            validator = jsonschema.Draft202012Validator(subschema(schema, definitions[part]))
            error = first_error(validator.iter_errors(merged[part]))
            if error is not None:
                raise ConfigError(f"config key scratch.family_overrides.{family}.{part}"
                                  f"{config_key(error.absolute_path, nested=True)}: {error.message}")


def check_corpora(config: dict) -> None:
    """The corpora experiment compares different models: one named twice (for two corpora, or two
    seeds of one) is a mistake."""
    named = corpus_model_keys(config)
    for i, (key, name) in enumerate(named):
        for other, same in named[:i]:
            if same == name:
                raise ConfigError(f"config key {key}: {name!r} is already {other}; each corpus and pretraining "
                                  "seed needs its own model")
    longest, context = config["pretrain"]["insertion"]["passage_chars"][1], config["corpora"]["manipulation"]["context"]
    if named and 2 * longest >= context:
        raise ConfigError(f"config key corpora.manipulation.context: {context} cannot hold a passage of {longest} "
                          "characters (pretrain.insertion.passage_chars) and its copy")


def check_positions(config: dict, search=(".",)) -> None:
    """No stage asks a local model with learned absolute positions for more positions than it has."""
    from ..records.files import DamagedFile
    from .limits import position_problems, scratch_problems

    def directory_of(name):
        entry = model_entry(name, config["models"][name], search)
        return entry.path if entry.is_local else None

    try:
        problems = position_problems(config, directory_of)
    except DamagedFile as damaged:
        raise ConfigError(f"config key models: {damaged}") from None
    problems = scratch_problems(config) + problems
    if problems:
        raise ConfigError(problems[0])


def _length_settings(config: dict):
    """Yield (key, encoding, length bin, family) for every length bin the grid asks a generator for."""
    scratch = config["scratch"]
    for family in FAMILIES:
        train_key = "scratch.train_lengths" + (f".{family}" if isinstance(scratch["train_lengths"], dict) else "")
        bins_key = "scratch.test_bins" + (f".{family}" if isinstance(scratch["test_bins"], dict) else "")
        train, bins = scratch_lengths(scratch, family)
        yield train_key, "tokens", train, family
        for i, length_bin in enumerate(bins):
            yield f"{bins_key}[{i}]", "tokens", length_bin, family
    for family, lengths in config["icl"]["lengths"].items():
        for i, length in enumerate(lengths):
            yield f"icl.lengths.{family}[{i}]", "chars", length, family
    if config["finetune"]["models"]:
        for protocol in finetune_protocols(config["finetune"]):
            section = merged_protocol(config["finetune"], protocol)
            train, bins = (protocol_key(config["finetune"], protocol, k) for k in ("train_lengths", "test_bins"))
            for family in FAMILIES:
                yield f"{train}.{family}", "finetune", section["train_lengths"][family], family
                for i, length_bin in enumerate(section["test_bins"][family]):
                    yield f"{bins}.{family}[{i}]", "finetune", length_bin, family


def check_protocols(config: dict, schema: dict) -> None:
    """Each fine-tuning protocol's merged section against the schema of the section."""
    node = schema["properties"]["finetune"]
    validator = DefaultingValidator({**schema, **node, "properties": {
        k: v for k, v in node["properties"].items() if k != "protocols"}})
    if config["finetune"]["models"] and not finetune_protocols(config["finetune"]):
        raise ConfigError("config key finetune.protocols: every protocol has `seeds: []`, so nothing is fine-tuned "
                          "(give one protocol seeds, or set finetune.models: [] to turn the stage off)")
    for protocol in config["finetune"]["protocols"]:
        seeds = config["finetune"]["protocols"][protocol].get("seeds", [])
        if not set(seeds) <= set(config["seeds"]):
            raise ConfigError(f"config key finetune.protocols.{protocol}.seeds: {sorted(seeds)} are not all among the "
                              f"run's seeds {sorted(config['seeds'])}")
        merged = merged_protocol(config["finetune"], protocol)
        error = first_error(validator.iter_errors(merged))
        if error is not None:
            path = list(error.absolute_path)
            where = (protocol_key(config["finetune"], protocol, path[0]) + config_key(path[1:], nested=True) if path
                     else f"finetune.protocols.{protocol}")
            raise ConfigError(f"config key {where}: {error.message}")
        check_finetune_validation(merged)


def check_shots(config: dict) -> None:
    """`icl.shots` demonstrations must fit each of the run's tasks' pools besides the test example
    (the pools' sizes: each generator record's `pool`; the corpora's in-context runs read it too);
    never silently fewer."""
    for task in config["tasks"]:
        generator = get_task(task).generator
        size = get_generator(generator).pool[1]
        if config["icl"]["shots"] > size - 1:
            raise ConfigError(f"config key icl.shots: {config['icl']['shots']} demonstrations, but task {task}'s pool "
                              f"({generator}) holds {size} examples, {size - 1} besides the test example")


def check_grid(config: dict) -> None:
    """Settings that are each valid but cannot work together (e.g. a unique copy longer than its alphabet)."""
    for key, encoding, text, family in _length_settings(config):
        try:
            length_bin = LengthBin.parse(text)
        except ValueError as error:
            raise ConfigError(f"config key {key}: {error}") from None
        for name in config["tasks"]:
            task = get_task(name)
            if task.family != family:
                continue
            settings = config["data"][encoding][task.generator]
            try:
                check_settings(task, encoding, settings, length_bin)
            except ValueError as error:
                raise ConfigError(f"config key {key} (with data.{encoding}.{task.generator}): {error}") from None


def train_settings(stage: str = "scratch", **overrides):
    """Engine settings with a stage's schema defaults (the from-scratch schedule resolved to
    "constant") and the last weights kept, unless `overrides` say otherwise: for notebooks,
    benchmarks and tests that drive the engine directly."""
    from ..settings import TrainSettings

    training = dict(validate_config({}, check_availability=False)[stage]["training"])
    if isinstance(training["schedule"], dict):
        training["schedule"] = "constant"
    return TrainSettings.from_config({**training, "keep": "last", **overrides})
