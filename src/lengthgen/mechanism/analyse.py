"""The mechanism of one model: head scores and patching over copy lengths, directions and seeds.

polars is imported where the tables are made, so the measures here run on a machine without it
(the GPU machine: the pretraining probe reads `copy_accuracy`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from tqdm.auto import tqdm

from ..runtime import input_device
from .heads import SCORES, head_scores
from .patching import patching
from .prompts import CopyPrompts

if TYPE_CHECKING:
    import polars as pl

DIRECTIONS = ("forward", "backward")


@torch.no_grad()
def copy_accuracy(model, prompts: CopyPrompts, batch_size: int = 32) -> float:
    """Teacher-forced: the share of copied tokens the model ranks first."""
    right = total = 0
    for start in range(0, len(prompts.ids), batch_size):
        ids = prompts.ids[start:start + batch_size].to(input_device(model))
        predicted = model(input_ids=ids).logits[:, prompts.scored].argmax(-1)
        right += int((predicted == ids[:, prompts.scored + 1].to(predicted.device)).sum())
        total += predicted.numel()
    return right / total


def analyse(model, make_prompts: Callable[[int, str, int], CopyPrompts], lengths: list[int], seeds: list[int],
            ablate: int, batch_size: int = 32, progress: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(heads, patching): per (direction, length, seed), every head's scores with the prompt set's
    teacher-forced copy accuracy, and the accuracy and loss under each patching condition."""
    import polars as pl

    model.eval()
    heads, conditions = [], []
    grid = [(d, n, s) for s in seeds for n in lengths for d in DIRECTIONS]
    for direction, length, seed in tqdm(grid, disable=not progress, desc="mechanism", unit="set"):
        prompts = make_prompts(length, direction, seed)
        scores = head_scores(model, prompts, batch_size)
        accuracy = copy_accuracy(model, prompts, batch_size)
        layers, count = scores["induction"].shape
        for layer in range(layers):
            for head in range(count):
                heads.append({"direction": direction, "length": length, "seed": seed, "layer": layer, "head": head,
                              **{name: float(scores[name][layer, head]) for name in SCORES},
                              "copy_accuracy": accuracy})
        for condition, measured in patching(model, prompts, scores, ablate, batch_size).items():
            conditions.append({"direction": direction, "length": length, "seed": seed, "condition": condition,
                               **measured})
    return pl.DataFrame(heads), pl.DataFrame(conditions)
