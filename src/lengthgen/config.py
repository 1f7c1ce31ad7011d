"""Config validation: JSON Schema (with defaults filled in) plus the checks a schema cannot express.

Runs when the workflow starts, so a bad config stops everything before any job, with one
message that names the offending key.
"""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import yaml

from .generate import LengthSpec, check_settings
from .tasks import get_task

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config that cannot run; the message names the key."""


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


def _key(path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def load_schema(path: str | Path = SCHEMA_PATH) -> dict:
    return yaml.safe_load(Path(path).read_text())


def validate_config(config: dict, schema: dict | None = None, check_availability: bool = True) -> dict:
    """Return a validated copy of `config` with schema defaults filled in, or raise ConfigError.

    check_availability=False checks model names but not that the models can be loaded here; the
    workflow checks that in `onstart`, which a dry run skips, so a cluster grid can be previewed
    on a machine without the weights.
    """
    config = copy.deepcopy(config)
    validator = _DefaultingValidator(schema if schema is not None else load_schema())
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), e.message))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise ConfigError(f"config key {_key(error.absolute_path)}: {error.message}")
    check_family_overrides(config, schema if schema is not None else load_schema())
    check_grid(config)
    check_models(config, check_availability)
    return config


def scratch_family_settings(scratch: dict, family: str) -> dict:
    """The from-scratch `model` and `training` settings of one task family (overrides applied)."""
    override = scratch["family_overrides"].get(family, {})
    return {part: {**scratch[part], **override.get(part, {})} for part in ("model", "training")}


def check_family_overrides(config: dict, schema: dict) -> None:
    scratch_schema = schema["properties"]["scratch"]["properties"]
    for family, override in config["scratch"]["family_overrides"].items():
        merged = scratch_family_settings(config["scratch"], family)
        for part in override:
            error = jsonschema.exceptions.best_match(
                jsonschema.Draft202012Validator(scratch_schema[part]).iter_errors(merged[part]))
            if error is not None:
                inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
                raise ConfigError(f"config key scratch.family_overrides.{family}.{part}{inner}: {error.message}")


def used_models(config: dict) -> list[tuple[str, str]]:
    """(config key, registry name) of every model a stage uses."""
    return [(f"{stage}.models[{i}]", name) for stage in ("icl", "finetune")
            for i, name in enumerate(config[stage]["models"])]


def check_models(config: dict, check_availability: bool = True) -> None:
    """Every model a stage names is in the registry and (unless told not to) can be loaded here."""
    from .registry import ModelEntry, ModelUnavailable, check_available

    for key, name in used_models(config):  # names first: a typo is reported before slow checks
        if name not in config["models"]:
            known = ", ".join(sorted(config["models"])) or "none"
            raise ConfigError(f"config key {key}: {name!r} is not in the model registry (models: {known})")
    for name in dict.fromkeys(name for _, name in used_models(config)) if check_availability else []:
        try:
            check_available(ModelEntry.from_config(name, config["models"][name]))
        except ModelUnavailable as error:
            raise ConfigError(f"config key models.{name}: {error}") from None


FAMILIES = ("retrieval", "copying")


def per_family(value, family: str):
    """A setting given once for all tasks, or as {retrieval: ..., copying: ...}."""
    return value[family] if isinstance(value, dict) else value


def scratch_lengths(scratch: dict, family: str) -> tuple[str, list[str]]:
    """(training lengths, test bins) of a task family in the from-scratch stage."""
    return str(per_family(scratch["train_lengths"], family)), [str(b) for b in per_family(scratch["test_bins"], family)]


def _length_settings(config: dict):
    """Yield (key, encoding, lengths, family) for every length the grid asks a generator for."""
    scratch = config["scratch"]
    for family in FAMILIES:
        train_key = "scratch.train_lengths" + (f".{family}" if isinstance(scratch["train_lengths"], dict) else "")
        bins_key = "scratch.test_bins" + (f".{family}" if isinstance(scratch["test_bins"], dict) else "")
        train, bins = scratch_lengths(scratch, family)
        yield train_key, "tokens", train, family
        for i, lengths in enumerate(bins):
            yield f"{bins_key}[{i}]", "tokens", lengths, family
    for family, lengths in config["icl"]["lengths"].items():
        for i, length in enumerate(lengths):
            yield f"icl.lengths.{family}[{i}]", "chars", length, family
    if config["finetune"]["models"]:
        for family in FAMILIES:
            yield f"finetune.train_lengths.{family}", "chars", config["finetune"]["train_lengths"][family], family
            for i, lengths in enumerate(config["finetune"]["test_bins"][family]):
                yield f"finetune.test_bins.{family}[{i}]", "chars", lengths, family


def check_grid(config: dict) -> None:
    """Settings that are each valid but cannot work together (e.g. a unique copy longer than its alphabet)."""
    for key, encoding, lengths, family in _length_settings(config):
        try:
            spec = LengthSpec.parse(lengths)
        except ValueError as error:
            raise ConfigError(f"config key {key}: {error}") from None
        for name in config["tasks"]:
            task = get_task(name)
            if task.family != family:
                continue
            settings = config["data"][encoding][task.generator]
            try:
                check_settings(task, encoding, settings, spec)
            except ValueError as error:
                raise ConfigError(f"config key {key} (with data.{encoding}.{task.generator}): {error}") from None
