"""The realistic tasks (paper 4.2): one job per (model, task) runs every length and seed."""

from __future__ import annotations

from itertools import product

from ..layout import REALISTIC
from ..realistic import TASKS
from ..settings import RealisticPredictSettings


def enabled(config: dict) -> bool:
    return bool(config["realistic"]["models"])


def settings(config: dict, task: str) -> dict:
    """lorem's settings for "lorem", git's for revert and cherry-pick."""
    return config["realistic"]["lorem" if task == "lorem" else "git"]


def params(config: dict, model: str, task: str) -> RealisticPredictSettings:
    """The model entry, the seeds and the task's own settings: another task's settings never rerun it."""
    return RealisticPredictSettings.from_config({"model": config["models"][model],
                                                 "batch_size": config["realistic"]["batch_size"],
                                                 "seeds": config["seeds"], "settings": settings(config, task)})


def predictions(config: dict) -> list[str]:
    return [REALISTIC.format(model=model, realistic=task) for model, task in product(config["realistic"]["models"], TASKS)]


def pairs_params(config: dict) -> dict:
    return {"realistic": config["realistic"], "seeds": config["seeds"]}


def table_params(config: dict) -> dict:
    """The pairs' slice and the models' entries (the table names each model's hub path)."""
    return {**pairs_params(config), "models": {m: config["models"][m] for m in config["realistic"]["models"]}}
