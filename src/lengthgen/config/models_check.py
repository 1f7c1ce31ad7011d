"""The config's model registry: each entry validated against the schema (with its defaults), the
models the repository ships, and the check that every model a stage names is in the registry and
(unless told not to) can be loaded here."""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from ..settings import ConfigError
from .schema import DefaultingValidator, config_key, first_error, load_schema, subschema
from .sections import corpus_model_keys

# Each distinct registry entry, validated: its repr -> the entry with the schema's defaults.
_CHECKED_ENTRIES: dict[str, dict] = {}


def _checked_entry(spec) -> dict:
    """`spec` validated against the schema's `model_entry`, with its defaults filled in (a copy),
    or the ValidationError that says what is wrong. Validated once per distinct entry: planning
    asks for the same few entries for every job it plans."""
    key = repr(spec)
    if key not in _CHECKED_ENTRIES:
        entry = copy.deepcopy(spec)
        error = first_error(DefaultingValidator(subschema(load_schema(), "model_entry")).iter_errors(entry))
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
        where = f"models.{name}{config_key(error.absolute_path, nested=True)}"
        raise ConfigError(f"config key {where}: {error.message}") from None
    return ModelEntry.from_config(name, spec, search)


def job_model_entry(name: str, spec: dict, model_input: str | None):
    """The registry entry a job loads: its `model` input (a local directory, a GGUF conversion)
    where it has one, else the entry's own path (a hub id)."""
    return model_entry(name, {**spec, "path": model_input or spec.get("path")})


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
    error = first_error(DefaultingValidator({**schema["properties"]["models"], "$defs": schema["$defs"]})
                        .iter_errors(registry))
    if error is not None:
        name, *key = list(error.absolute_path) or [None]  # none: the file as a whole
        where = f"entry {name}{config_key(key, nested=True)}: " if name is not None else ""
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


def used_models(config: dict) -> list[tuple[str, str]]:
    """(config key, registry name) of every model a stage uses."""
    used = [(f"{stage}.models[{i}]", name) for stage in ("icl", "finetune", "mechanism", "realistic")
            for i, name in enumerate(config[stage]["models"])]
    return used + corpus_model_keys(config)


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

