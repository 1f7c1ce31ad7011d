"""The in-context stage (paper 4.1): one job per (model, task family) runs every prompt of that family's grid."""

from __future__ import annotations

from itertools import product

from ..config import icl_variants
from ..layout import ICL, data_path
from ..settings import IclPredictSettings
from ..tasks import FAMILIES
from .grid import tasks


def enabled(config: dict) -> bool:
    return bool(config["icl"]["models"])


def files(config: dict, family: str, model: str) -> list[dict]:
    """(task, length bin, seed, variant, data file) of one family's in-context grid for one model."""
    section = config["icl"]
    return [{"task": name, "bin": str(length), "seed": seed, "variant": variant,
             "data": data_path("chars", name, length, seed)}
            for name, task in tasks(config).items() if task.family == family
            for length in section["lengths"][family]
            for seed in config["seeds"]
            for variant in icl_variants(section, family, config["models"][model]["kind"])]


def data_inputs(config: dict, family: str, model: str) -> list[str]:
    """The data files one in-context job reads, each once."""
    return list(dict.fromkeys(f["data"] for f in files(config, family, model)))


def families(config: dict) -> list[str]:
    grid = tasks(config).values()
    return [f for f in FAMILIES if any(t.family == f for t in grid) and config["icl"]["lengths"][f]]


def predict_params(config: dict, model: str, family: str) -> IclPredictSettings:
    entry = config["models"][model]
    return IclPredictSettings.from_config({
            "model": entry, "files": files(config, family, model),
            "chat": config["icl"]["chat"] if entry["kind"] == "chat" else None,
            "settings": {name: config["data"]["chars"][task.generator] for name, task in tasks(config).items()
                         if task.family == family},
            "shots": config["icl"]["shots"], "batch_size": config["icl"]["batch_size"]})


def predictions(config: dict) -> list[str]:
    return [ICL.format(model=model, family=family) for model, family in product(config["icl"]["models"], families(config))]


def tables_params(config: dict) -> dict:
    """What the in-context tables read of the config (one slice for every table rule of the stage)."""
    return {"icl": config["icl"], "models": {m: config["models"][m] for m in config["icl"]["models"]},
            "seeds": config["seeds"], "tasks": config["tasks"]}
