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


def validate_config(config: dict, schema: dict | None = None) -> dict:
    """Return a validated copy of `config` with schema defaults filled in, or raise ConfigError."""
    config = copy.deepcopy(config)
    validator = _DefaultingValidator(schema if schema is not None else load_schema())
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), e.message))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise ConfigError(f"config key {_key(error.absolute_path)}: {error.message}")
    check_grid(config)
    return config


def _length_settings(config: dict):
    """Yield (key, encoding, lengths) for every length the grid asks a generator for."""
    scratch = config["scratch"]
    yield "scratch.train_lengths", "tokens", scratch["train_lengths"], None
    for i, lengths in enumerate(scratch["test_bins"]):
        yield f"scratch.test_bins[{i}]", "tokens", lengths, None
    for family, lengths in config["icl"]["lengths"].items():
        for i, length in enumerate(lengths):
            yield f"icl.lengths.{family}[{i}]", "chars", length, family


def check_grid(config: dict) -> None:
    """Settings that are each valid but cannot work together (e.g. a unique copy longer than its alphabet)."""
    for key, encoding, lengths, family in _length_settings(config):
        try:
            spec = LengthSpec.parse(lengths)
        except ValueError as error:
            raise ConfigError(f"config key {key}: {error}") from None
        for name in config["tasks"]:
            task = get_task(name)
            if family is not None and task.family != family:
                continue
            settings = config["data"][encoding][task.generator]
            try:
                check_settings(task, encoding, settings, spec)
            except ValueError as error:
                raise ConfigError(f"config key {key} (with data.{encoding}.{task.generator}): {error}") from None
