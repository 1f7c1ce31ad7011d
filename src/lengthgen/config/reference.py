"""The config reference (docs/config.md), written from the schema so that it cannot drift from it.

`python -m lengthgen config-reference > docs/config.md` remakes it; a test fails when the file is stale.
"""

from __future__ import annotations

import json

from .schema import load_schema, resolve_refs

_NONE = object()  # a key without a default
HEADER = """# Config reference

Generated from `src/lengthgen/config/config.schema.yaml` by `python -m lengthgen config-reference`
(a test fails when this file is stale): every key, its type, its default (the paper's value; the
default run's own values are in `config.yaml`) and what it means. `NAME` stands for a name you
choose (a registry model).
"""


def _resolve(node: dict, root: dict) -> dict:
    """A schema node with local `$ref`s followed and `allOf` parts merged (the node's own keys win)."""
    node = resolve_refs(node, root)
    if "allOf" not in node:
        return node
    merged = {key: value for key, value in node.items() if key != "allOf"}
    properties: dict = {}
    for part in node["allOf"]:
        part = _resolve(part, root)
        for name, sub in part.get("properties", {}).items():
            properties[name] = {**_resolve(sub, root), **properties.get(name, {})}
        merged.update({key: value for key, value in part.items() if key not in ("properties", *merged)})
    merged["properties"] = {**properties, **merged.get("properties", {})}
    return merged


def _type_text(node: dict, root: dict) -> str:
    node = _resolve(node, root)
    if "enum" in node:
        return " | ".join(json.dumps(value) for value in node["enum"])
    for choice in ("oneOf", "anyOf"):
        if choice in node and "type" not in node:
            return " or ".join(_type_text(option, root) for option in node[choice])
    kinds = node.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds and "items" in node:
        kinds = [f"list of {_type_text(node['items'], root)}" if kind == "array" else kind for kind in kinds]
    if "object" in kinds and "properties" in node:
        kinds = ["mapping" if kind == "object" else kind for kind in kinds]
    return " or ".join(kinds)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _rows(node: dict, root: dict, prefix: str, inherited: dict) -> list[tuple[str, str, str, str]]:
    """One row per key below `node`; `inherited` is the enclosing key's default, which wins over its keys' own."""
    rows = []
    node = _resolve(node, root)
    for name, sub in node.get("properties", {}).items():
        sub = _resolve(sub, root)
        key = f"{prefix}{name}"
        default = inherited.get(name, sub.get("default", _NONE))
        nested = sub.get("properties")
        if not nested or sub.get("description"):
            shown = "" if default is _NONE or nested else f"`{json.dumps(default)}`"
            rows.append((f"`{key}`", _cell(_type_text(sub, root)), shown, _cell(sub.get("description", ""))))
        if nested:
            rows += _rows(sub, root, f"{key}.", default if isinstance(default, dict) else {})
        entry = sub.get("additionalProperties")
        if isinstance(entry, dict) and _resolve(entry, root).get("properties"):
            rows += _rows(entry, root, f"{key}.NAME.", {})
    return rows


def config_reference(schema: dict | None = None) -> str:
    """The markdown reference: one table per top-level section."""
    schema = schema or load_schema()
    parts = [HEADER]
    for name, sub in schema["properties"].items():
        parts.append(f"## `{name}`\n")
        rows = _rows({"properties": {name: sub}}, schema, "", {})
        parts.append("| key | type | default | meaning |\n|---|---|---|---|\n"
                     + "".join(f"| {' | '.join(row)} |\n" for row in rows))
    return "\n".join(parts)
