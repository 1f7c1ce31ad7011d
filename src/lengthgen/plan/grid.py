"""What every stage's plan shares: the configured tasks as records, and targets checked against the config."""

from __future__ import annotations

from ..tasks import Task, get_task


class UnknownTarget(SystemExit):
    """A target whose wildcard names something the config does not make: Snakemake stops with this
    one line (a SystemExit, as `sys.exit(message)` would raise), never a KeyError."""


def tasks(config: dict) -> dict[str, Task]:
    """The configured tasks as records, in the config's order."""
    return {name: get_task(name) for name in config["tasks"]}


def known(what: str, value, valid):
    """valid[value]: a typo or another stage's model stops with one line naming the valid values."""
    if value not in valid:
        raise UnknownTarget(f"lengthgen: no {what} {value!r} in this config; valid: {', '.join(valid) or 'none'}")
    return valid[value]


def stage_model(config: dict, stage: str, name: str) -> str:
    """A {model} wildcard of one stage's rules, checked: a model that stage does not run stops with its models."""
    known(f"{stage} model", name, dict.fromkeys(config[stage]["models"]))
    return name
