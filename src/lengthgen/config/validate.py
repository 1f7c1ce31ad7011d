"""Config validation: JSON Schema (with defaults filled in) plus the checks a schema cannot express.

Runs when the workflow starts, so a bad config stops everything before any job, with one
message that names the offending key.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from ..settings import ConfigError
from ..tasks import FAMILIES, TASK_NAMES, LengthBin, get_task
from ..tasks.generate import check_settings
from .sections import (
    corpus_models,
    finetune_protocols,
    held_out,
    protocol_key,
    protocol_section,
    scratch_family_settings,
    scratch_lengths,
)


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


_DefaultingValidator = _with_defaults(jsonschema.Draft202012Validator)


def _key(path, nested: bool = False) -> str:
    """A config key as it is written in messages: `scratch.test_bins[1]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text or nested else str(part))
    return text or ("" if nested else "(top level)")


@lru_cache(maxsize=1)
def _schema_text() -> str:
    return resources.files(__package__).joinpath("config.schema.yaml").read_text()


def load_schema() -> dict:
    """The config schema, shipped inside the package (found the same way installed or editable)."""
    return yaml.safe_load(_schema_text())


def resolve_refs(schema: dict, root: dict) -> dict:
    """A schema with its local `$ref` followed (the rest of its keys kept)."""
    while "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


_SCALARS = {"integer": int, "number": float}


def _coerce_scalar(value: str, types: list[str]):
    """A string that stands for the integer, number, boolean or null the schema asks for."""
    if "string" in types:
        return value
    for name in ("integer", "number"):
        if name in types:
            try:
                return _SCALARS[name](value)
            except ValueError:
                pass
    if "boolean" in types and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if "null" in types and value in ("null", "None", "~"):
        return None
    return value


def coerce_strings(instance, schema: dict, root: dict):
    """`instance` with strings turned into the scalars its schema asks for. Snakemake's
    `--config seeds=[0,1]` hands over ['0', '1']; so a command-line override means what it says."""
    schema = resolve_refs(schema, root)
    for part in schema.get("allOf", []):
        instance = coerce_strings(instance, part, root)
    if isinstance(instance, str) and "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return _coerce_scalar(instance, types)
    if isinstance(instance, dict):
        properties, extra = schema.get("properties", {}), schema.get("additionalProperties")
        return {key: coerce_strings(value, properties[key], root) if key in properties
                else coerce_strings(value, extra, root) if isinstance(extra, dict) else value
                for key, value in instance.items()}
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        return [coerce_strings(item, schema["items"], root) for item in instance]
    return instance


def _first_error(errors):
    """The error to report. A value that fails a shared block (e.g. `lr: 0`) also leaves that
    block's keys "unevaluated": report the value, not the consequence."""
    errors = list(errors)
    causes = [e for e in errors if e.validator != "unevaluatedProperties"] or errors
    return jsonschema.exceptions.best_match(sorted(causes, key=lambda e: (len(e.absolute_path), e.message)))


def _subschema(schema: dict, definition: str) -> dict:
    """A `$defs` entry as a schema of its own, with the definitions its references need."""
    return {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}


# Each distinct registry entry, validated: its repr -> the entry with the schema's defaults.
_CHECKED_ENTRIES: dict[str, dict] = {}


def _checked_entry(spec) -> dict:
    """`spec` validated against the schema's `model_entry`, with its defaults filled in (a copy),
    or the ValidationError that says what is wrong. Validated once per distinct entry: planning
    asks for the same few entries for every job it plans."""
    key = repr(spec)
    if key not in _CHECKED_ENTRIES:
        entry = copy.deepcopy(spec)
        error = _first_error(_DefaultingValidator(_subschema(load_schema(), "model_entry")).iter_errors(entry))
        if error is not None:
            raise error
        _CHECKED_ENTRIES[key] = entry
    return copy.deepcopy(_CHECKED_ENTRIES[key])


def model_entry(name: str, spec: dict, search=(".",)):
    """A registry entry validated against the schema, with its defaults filled in."""
    from ..models.registry import ModelEntry

    try:
        spec = _checked_entry(spec)
    except jsonschema.ValidationError as error:
        raise ConfigError(f"config key models.{name}{_key(error.absolute_path, nested=True)}: {error.message}") from None
    return ModelEntry.from_config(name, spec, search)


def job_model_entry(name: str, spec: dict, model_input: str | None):
    """The registry entry a job loads: its `model` input (a local directory, a GGUF conversion)
    where it has one, else the entry's own path (a hub id)."""
    return model_entry(name, {**spec, "path": model_input or spec.get("path")})


def validate_config(config: dict, schema: dict | None = None, check_availability: bool = True,
                    search=(".",)) -> dict:
    """Return a validated copy of `config` with schema defaults filled in, or raise ConfigError.

    check_availability=False checks model names but not that the models can be loaded here; the
    workflow checks that in `onstart`, which a dry run skips, so a cluster grid can be previewed
    on a machine without the weights.
    """
    schema = schema if schema is not None else load_schema()
    config = coerce_strings(copy.deepcopy(config), schema, schema)
    error = _first_error(_DefaultingValidator(schema).iter_errors(config))
    if error is not None:
        raise ConfigError(f"config key {_key(error.absolute_path)}: {error.message}")
    check_family_overrides(config, schema)
    check_stacking(config)
    check_protocols(config, schema)
    check_architectures(config)
    check_corpora(config)
    check_grid(config)
    add_shipped_models(config)
    check_models(config, check_availability, search)
    check_positions(config, search)
    return canonical(set_order(config))


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


SHIPPED_REGISTRY = "shipped_models.yaml"  # beside the schema, in the package


def read_registry(path) -> dict[str, dict]:
    """A registry file (a path, or a package resource: a `models:` block of its own) validated
    against the schema, each entry with its defaults filled in. A broken entry is one ConfigError
    naming the file and the entry."""
    try:
        registry = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"model registry {path}: not readable YAML ({' '.join(str(error).split())})") from None
    schema = load_schema()
    error = _first_error(_DefaultingValidator({**schema["properties"]["models"], "$defs": schema["$defs"]})
                         .iter_errors(registry))
    if error is not None:
        name, *key = list(error.absolute_path) or [None]  # none: the file as a whole
        where = f"entry {name}{_key(key, nested=True)}: " if name is not None else ""
        raise ConfigError(f"model registry {path}: {where}{error.message}")
    return registry


@lru_cache(maxsize=1)
def _shipped_registry() -> dict[str, dict]:
    return read_registry(resources.files(__package__).joinpath(SHIPPED_REGISTRY))


def shipped_models() -> dict[str, dict]:
    """The models the repository ships (shipped_models.yaml: what each is and where it comes from),
    known to every preset under these names; a preset's own entry of the same name wins."""
    return copy.deepcopy(_shipped_registry())


def add_shipped_models(config: dict) -> None:
    """The shipped entries joined to a config's registry (a new mapping: the entries are not touched)."""
    config["models"] = {**shipped_models(), **config["models"]}


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
            validator = jsonschema.Draft202012Validator(_subschema(schema, definitions[part]))
            error = _first_error(validator.iter_errors(merged[part]))
            if error is not None:
                raise ConfigError(f"config key scratch.family_overrides.{family}.{part}"
                                  f"{_key(error.absolute_path, nested=True)}: {error.message}")


def check_corpora(config: dict) -> None:
    """The corpora experiment compares different models: one named for two corpora is a mistake."""
    named = list(corpus_models(config).items())
    for i, (role, name) in enumerate(named):
        for other, same in named[:i]:
            if same == name:
                raise ConfigError(f"config key corpora.{role}: {name!r} is already corpora.{other}; each corpus "
                                  "needs its own model")


def used_models(config: dict) -> list[tuple[str, str]]:
    """(config key, registry name) of every model a stage uses."""
    used = [(f"{stage}.models[{i}]", name) for stage in ("icl", "finetune", "mechanism", "realistic")
            for i, name in enumerate(config[stage]["models"])]
    return used + [(f"corpora.{role}", name) for role, name in corpus_models(config).items()]


def check_models(config: dict, check_availability: bool = True, search=(".",)) -> None:
    """Every model a stage names is in the registry and (unless told not to) can be loaded here;
    relative local paths are looked up in the folders of `search`."""
    from ..models.registry import ModelUnavailable, check_available, check_model_directory

    for key, name in used_models(config):  # names first: a typo is reported before slow checks
        if name not in config["models"]:
            known = ", ".join(sorted(config["models"])) or "none"
            raise ConfigError(f"config key {key}: {name!r} is not in the model registry (models: {known})")
    for name in dict.fromkeys(name for _, name in used_models(config)):
        entry = model_entry(name, config["models"][name], search)
        try:
            if check_availability:
                check_available(entry)
            elif entry.is_local and entry.gguf is None:  # checked in a dry run too: a few reads
                check_model_directory(name, Path(entry.path))
        except ModelUnavailable as error:
            raise ConfigError(f"config key models.{name}: {error}") from None


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
            section = protocol_section(config["finetune"], protocol)
            train, bins = (protocol_key(config["finetune"], protocol, k) for k in ("train_lengths", "test_bins"))
            for family in FAMILIES:
                yield f"{train}.{family}", "finetune", section["train_lengths"][family], family
                for i, length_bin in enumerate(section["test_bins"][family]):
                    yield f"{bins}.{family}[{i}]", "finetune", length_bin, family


def check_protocols(config: dict, schema: dict) -> None:
    """Each fine-tuning protocol's merged section against the schema of the section."""
    node = schema["properties"]["finetune"]
    validator = _DefaultingValidator({**schema, **node, "properties": {
        k: v for k, v in node["properties"].items() if k != "protocols"}})
    if config["finetune"]["models"] and not finetune_protocols(config["finetune"]):
        raise ConfigError("config key finetune.protocols: every protocol has `seeds: []`, so nothing is fine-tuned "
                          "(give one protocol seeds, or set finetune.models: [] to turn the stage off)")
    for protocol in config["finetune"]["protocols"]:
        seeds = config["finetune"]["protocols"][protocol].get("seeds", [])
        if not set(seeds) <= set(config["seeds"]):
            raise ConfigError(f"config key finetune.protocols.{protocol}.seeds: {sorted(seeds)} are not all among the "
                              f"run's seeds {sorted(config['seeds'])}")
        merged = protocol_section(config["finetune"], protocol)
        error = _first_error(validator.iter_errors(merged))
        if error is not None:
            path = list(error.absolute_path)
            where = protocol_key(config["finetune"], protocol, path[0]) + _key(path[1:], nested=True) if path else (
                f"finetune.protocols.{protocol}")
            raise ConfigError(f"config key {where}: {error.message}")
        check_finetune_validation(merged)


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
    from ..engine.settings import TrainSettings

    training = dict(validate_config({}, check_availability=False)[stage]["training"])
    if isinstance(training["schedule"], dict):
        training["schedule"] = "constant"
    keep = overrides.pop("keep", "last")
    return TrainSettings.from_config({**training, **overrides}, keep=keep)
