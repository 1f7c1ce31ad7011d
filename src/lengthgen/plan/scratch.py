"""The from-scratch stage (paper Appendix B): training per (task, PE, seed), or stacked per task and
mirror, and the evaluation of every bin of each model."""

from __future__ import annotations

from itertools import product

from ..config import per_family, scratch_bins, scratch_family_settings, scratch_lengths
from ..layout import SCRATCH, SCRATCH_CHECKPOINTS, data_path
from ..settings import ScratchEvalSettings, ScratchRunSettings
from ..tasks import LengthBin, Task, get_task
from .grid import tasks

# Model settings that only one positional encoding reads.
PE_ONLY = {"max_positions": "ape", "rope_theta": "rope", "rope_scaling": "rope"}


def enabled(config: dict) -> bool:
    return config["scratch"]["enabled"]


def eos(config: dict, task: Task) -> dict:
    return {"train": per_family(config["scratch"]["train_on_eos"], task.family),
            "score": per_family(config["scratch"]["score_eos"], task.family)}


def train_params(config: dict, task_name: str, pe: str) -> ScratchRunSettings:
    """Only what this model depends on: its generator's settings, lengths, model and training."""
    section, task = config["scratch"], get_task(task_name)
    settings = scratch_family_settings(section, task.family)
    training = {k: v for k, v in settings["training"].items() if k != "schedule"}
    training["schedule"] = settings["training"]["schedule"][pe]
    longest = max(LengthBin.parse(b).high for b in scratch_bins(section)[task.family])
    return ScratchRunSettings.from_config({
        "data": config["data"]["tokens"][task.generator],
        "train_lengths": scratch_lengths(section, task.family)[0],
        # Only learned absolute positions sized to the longest test length (max_positions null)
        # depend on it: a fixed table takes added bins without retraining (checked at start).
        "max_length": longest if pe == "ape" and settings["model"]["max_positions"] is None else None,
        "model": {k: v for k, v in settings["model"].items() if PE_ONLY.get(k, pe) == pe},
        "training": training,
        "eos": eos(config, task),
    })


def stacks(config: dict) -> list[list[str]]:
    """With scratch.stack, the tasks trained together, one job per positional encoding: each task
    with its mirror where both are in the grid and train with the same settings, every seed."""
    if not (config["scratch"]["enabled"] and config["scratch"]["stack"]):
        return []
    grid = tasks(config)

    def same(a, b):
        return all(train_params(config, a, pe) == train_params(config, b, pe)
                   for pe in config["scratch"]["positional_encodings"])

    result, placed = [], set()
    for name in config["tasks"]:
        if name in placed:
            continue
        mirror = grid[name].mirror
        stack = [name, mirror] if mirror in grid and mirror not in placed and same(name, mirror) else [name]
        placed.update(stack)
        result.append(stack)
    return result


def stack_members(config: dict, stack: list[str], pe: str) -> list[dict]:
    """Every run of a stack: its task, seed, settings and where its model and checkpoints go."""
    return [{"task": task, "seed": seed, "section": train_params(config, task, pe).as_config(),
             "checkpoint_dir": SCRATCH_CHECKPOINTS.format(task=task, pe=pe, seed=seed)}
            for task in stack for seed in config["seeds"]]


def train_cost(config: dict, task_name: str, pe: str) -> float:
    """Expected work of a training job (layers x longest training sequence x steps), as its
    scheduling priority: the longest jobs start first, so the short ones (and the evaluations
    after them) fill the cores at the end instead of one long job running alone."""
    settings = train_params(config, task_name, pe)
    width = LengthBin.parse(settings.train_lengths).high * (2 if get_task(task_name).family == "copying" else 1)
    return settings.model["layers"] * width * settings.training.max_steps / 1e6


def eval_params(config: dict, task_name: str) -> ScratchEvalSettings:
    task = get_task(task_name)
    training = scratch_family_settings(config["scratch"], task.family)["training"]
    return ScratchEvalSettings.from_config({
        "greedy": config["scratch"]["greedy"], "batch_size": training["eval_batch_size"],
        "precision": training["precision"], "bins": scratch_bins(config["scratch"])[task.family],
        "eos": eos(config, task)})


def eval_data(config: dict, task_name: str, seed) -> list[str]:
    """The test data of every bin of the model's family."""
    bins = scratch_bins(config["scratch"])[get_task(task_name).family]
    return [data_path("tokens", task_name, b, seed) for b in bins]


def _every_model(config: dict, filename: str) -> list[str]:
    """One file of every from-scratch model of the grid (task, PE, seed)."""
    return [f"{SCRATCH.format(task=task, pe=pe, seed=seed)}/{filename}" for task, pe, seed in
            product(config["tasks"], config["scratch"]["positional_encodings"], config["seeds"])]


def evals(config: dict) -> list[str]:
    return _every_model(config, "eval.parquet")


def histories(config: dict) -> list[str]:
    return _every_model(config, "training.parquet")


def eval_inputs(config: dict) -> list[str]:
    """Every data file the from-scratch models are evaluated on (the pairs table reads each example's
    input, to pair two tasks' examples only where they are the same)."""
    return [f for name in config["tasks"] for seed in config["seeds"] for f in eval_data(config, name, seed)]


def tables_params(config: dict) -> dict:
    """What the from-scratch tables read of the config (one slice for every table rule of the stage)."""
    return {"bins": scratch_bins(config["scratch"]), "scratch": config["scratch"], "seeds": config["seeds"],
            "tasks": config["tasks"]}
