"""The fine-tuning stage (paper 4.3): per (model, task, seed) a fine-tuned model and the evaluation of every bin."""

from __future__ import annotations

from itertools import product

from ..config import finetune_bins, finetune_task_section
from ..tasks import get_task
from . import icl, scratch
from .paths import FINETUNE, data_path


def enabled(config: dict) -> bool:
    return bool(config["finetune"]["models"])


def comparison_enabled(config: dict) -> bool:
    """The comparison needs all three experiments."""
    return enabled(config) and scratch.enabled(config) and icl.enabled(config)


def train_params(config: dict, model: str, task: str) -> dict:
    """Only what this fine-tuning depends on: the model entry, its task's data settings, lengths, training."""
    return {"model": config["models"][model], **finetune_task_section(config, task)}


def eval_params(config: dict, task_name: str) -> dict:
    task = get_task(task_name)
    section = config["finetune"]
    return {"data": config["data"]["finetune"][task.generator], "format": section["format"],
            "batch_size": section["training"]["eval_batch_size"], "precision": section["training"]["precision"],
            "bins": finetune_bins(section)[task.family]}


def eval_data(config: dict, task_name: str, seed) -> list[str]:
    bins = finetune_bins(config["finetune"])[get_task(task_name).family]
    return [data_path("finetune", task_name, b, seed) for b in bins]


def evals(config: dict) -> list[str]:
    return [f"{FINETUNE.format(model=model, task=task, seed=seed)}/eval.parquet" for model, task, seed in
            product(config["finetune"]["models"], config["tasks"], config["seeds"])]


def eval_inputs(config: dict) -> list[str]:
    """Every data file the fine-tuned models are evaluated on (for the pairs table, as from scratch)."""
    return [f for name in config["tasks"] for seed in config["seeds"] for f in eval_data(config, name, seed)]


def tables_params(config: dict) -> dict:
    """The fine-tuning tables' one config slice: bins, the stage, seeds, tasks and its models."""
    return {"bins": finetune_bins(config["finetune"]), "finetune": config["finetune"], "seeds": config["seeds"],
            "tasks": config["tasks"], "models": {m: config["models"][m] for m in config["finetune"]["models"]}}
