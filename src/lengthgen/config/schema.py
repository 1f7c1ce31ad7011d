"""The config schema (config.schema.yaml, shipped inside the package) and the JSON Schema plumbing
the checks share: a validator that fills in the schema's defaults, command-line strings turned into
the scalars the schema asks for, the one error to report and its config key as messages write it."""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources

import jsonschema
import yaml

from ..tasks import TASK_NAMES
from ..tasks.generators import ENCODINGS, GENERATORS


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


DefaultingValidator = _with_defaults(jsonschema.Draft202012Validator)


def config_key(path, nested: bool = False) -> str:
    """A config key as it is written in messages: `scratch.test_bins[1]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text or nested else str(part))
    return text or ("" if nested else "(top level)")


@lru_cache(maxsize=1)
def _parsed_schema() -> dict:
    """The schema file as parsed once a process: every Snakemake job's process plans its rule from
    the config, and parsing the YAML for each model entry cost seconds of CPU a job."""
    text = resources.files(__package__).joinpath("config.schema.yaml").read_text()
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_schema() -> dict:
    """The config schema, shipped inside the package (found the same way installed or editable),
    with the task records' names where it says `TASK_NAMES` (a task is one record,
    lengthgen.tasks.definitions: the schema never lists them itself)."""
    return _with_generators(_with_task_names(_parsed_schema()))  # fresh containers each call


def _with_generators(schema: dict) -> dict:
    """Each generator record's settings under every encoding of `data:`, with its defaults there, and
    its styles as the `style` enum (the schema never lists generators itself)."""
    definitions = schema["$defs"]
    encodings = schema["properties"]["data"]["properties"]
    sections = {"tokens": definitions["encoding_tokens"]} | {e: encodings[e] for e in ENCODINGS if e != "tokens"}
    for generator in GENERATORS.values():
        name = generator.settings_schema
        if not isinstance(name, str):
            name = f"generator_{generator.name}"
            definitions[name] = copy.deepcopy(dict(generator.settings_schema))
        style = definitions[name]["properties"].setdefault("style", {"default": "controlled"})
        style["enum"] = list(generator.styles)
        for encoding, section in sections.items():
            section["properties"][generator.name] = {"$ref": f"#/$defs/{name}",
                                                     "default": copy.deepcopy(dict(generator.defaults[encoding]))}
    return schema


def _with_task_names(node):
    if node == "TASK_NAMES":
        return list(TASK_NAMES)
    if isinstance(node, dict):
        return {key: _with_task_names(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_with_task_names(item) for item in node]
    return node


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


def first_error(errors):
    """The error to report. A value that fails a shared block (e.g. `lr: 0`) also leaves that
    block's keys "unevaluated": report the value, not the consequence."""
    errors = list(errors)
    causes = [e for e in errors if e.validator != "unevaluatedProperties"] or errors
    return jsonschema.exceptions.best_match(sorted(causes, key=lambda e: (len(e.absolute_path), e.message)))


def subschema(schema: dict, definition: str) -> dict:
    """A `$defs` entry as a schema of its own, with the definitions its references need."""
    return {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}

