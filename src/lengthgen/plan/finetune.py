"""The fine-tuning stage (paper 4.3): per (model, protocol, task, seed) a fine-tuned model and the
evaluation of every bin; a protocol is a named complete training and test setting
(`finetune.protocols`), a grid axis like the seeds."""

from __future__ import annotations

from itertools import product

from ..config import finetune_bins
from ..config.sections import (
    DEFAULT_PROTOCOL,
    curve_bin,
    finetune_protocols,
    held_out,
    protocol_section,
    protocol_seeds,
    training_steps,
)
from ..layout import FINETUNE, data_path
from ..settings import FinetuneEvalSettings, FinetuneTaskSettings
from ..tasks import LengthBin, get_task
from . import icl, scratch


def enabled(config: dict) -> bool:
    return bool(config["finetune"]["models"])


def comparison_enabled(config: dict) -> bool:
    """The comparison needs all three experiments."""
    return enabled(config) and scratch.enabled(config) and icl.enabled(config)


def protocols(config: dict) -> list[str]:
    return finetune_protocols(config["finetune"])


def train_params(config: dict, model: str, task_name: str, protocol: str = DEFAULT_PROTOCOL,
                 fixed: dict | None = None) -> FinetuneTaskSettings:
    """Everything one fine-tuning (model, protocol, task) depends on, typed, from the protocol's
    section as validation resolved it: the model entry, its task's data settings, format, lengths
    and training (`fixed`: a caller's own training settings, such as the corpora's short run's steps
    and evaluations). Its `as_config()` is the job's params."""
    section, task = protocol_section(config["finetune"], protocol), get_task(task_name)
    training = {**section["training"], **(fixed or {})}
    if "max_steps" not in (fixed or {}):
        training["max_steps"] = training_steps(section, task.family, training)
    holdout = held_out(section)
    return FinetuneTaskSettings.from_config({
        "model": config["models"][model],
        "data": config["data"]["finetune"][task.generator],
        "format": section["format"],
        "train_lengths": str(section["train_lengths"][task.family]),
        "max_length": max(LengthBin.parse(b).high for b in finetune_bins(section)[task.family]),
        "curve_lengths": curve_bin(section, task.family),
        "train_examples": section["train_examples"],
        "training": training,
        # the rest only where it differs from the usual run, so older runs' parameters (and their
        # cached jobs) stay as they were: a stream-validated run, the pretrained model's best weights
        "holdout": holdout or None,
        "keep": None if section.get("keep", "best") == "best" else section["keep"],
        "init": None if section.get("init", "pretrained") == "pretrained" else section["init"],
        "position_offsets": None if section.get("position_offsets", True) is not False else False,
    })


def eval_params(config: dict, task_name: str, protocol: str = DEFAULT_PROTOCOL) -> FinetuneEvalSettings:
    task = get_task(task_name)
    section = protocol_section(config["finetune"], protocol)
    return FinetuneEvalSettings.from_config({
        "data": config["data"]["finetune"][task.generator], "format": section["format"],
        "batch_size": section["training"]["eval_batch_size"], "precision": section["training"]["precision"],
        "bins": finetune_bins(section)[task.family]})


def eval_data(config: dict, task_name: str, seed, protocol: str = DEFAULT_PROTOCOL) -> list[str]:
    bins = finetune_bins(protocol_section(config["finetune"], protocol))[get_task(task_name).family]
    return [data_path("finetune", task_name, b, seed) for b in bins]


def run_folders(config: dict) -> list[str]:
    """The output folder of every fine-tuning the config makes: (model, protocol, task, seed)."""
    return [FINETUNE.format(model=model, protocol=protocol, task=task, seed=seed)
            for model, protocol in product(config["finetune"]["models"], protocols(config))
            for task, seed in product(config["tasks"], protocol_seeds(config, protocol))]


def evals(config: dict) -> list[str]:
    return [f"{folder}/eval.parquet" for folder in run_folders(config)]


def histories(config: dict) -> list[str]:
    """Every fine-tuning's training history (its learning curve), in the order of `evals`."""
    return [f"{folder}/training.parquet" for folder in run_folders(config)]


def eval_inputs(config: dict) -> list[str]:
    """Every data file the fine-tuned models are evaluated on (for the pairs table, as from scratch)."""
    files = [f for protocol in protocols(config) for name in config["tasks"] for seed in protocol_seeds(config, protocol)
             for f in eval_data(config, name, seed, protocol)]
    return list(dict.fromkeys(files))


def protocol_lengths(config: dict) -> dict[str, dict]:
    """protocol -> its training lengths and test bins per family (what the tables read of each)."""
    sections = {p: protocol_section(config["finetune"], p) for p in protocols(config)}
    return {p: {"train_lengths": {f: str(v) for f, v in s["train_lengths"].items()}, "bins": finetune_bins(s)}
            for p, s in sections.items()}


def tables_params(config: dict) -> dict:
    """The fine-tuning tables' one config slice: the stage, each protocol's lengths, seeds, tasks and models."""
    return {"finetune": config["finetune"], "seeds": config["seeds"],
            "tasks": config["tasks"], "models": {m: config["models"][m] for m in config["finetune"]["models"]},
            "protocols": protocol_lengths(config)}
