"""The mechanism of one model: head scores and patching over copy lengths, directions and seeds.

polars is imported where the tables are made, so the measures here run on a machine without it
(the GPU machine: the pretraining probe reads `copy_accuracy`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from tqdm.auto import tqdm

from ..devices import input_device
from ..inference.measures import next_tokens, top_tokens
from .heads import prompt_head_scores
from .patching import measure, patching
from .prompts import CopyPrompts
from .scores import PER_PROMPT, SCORES

if TYPE_CHECKING:
    import polars as pl

DIRECTIONS = ("forward", "backward")


@torch.no_grad()
def copy_accuracy(model, prompts: CopyPrompts, batch_size: int = 32) -> float:
    """Teacher-forced: the share of copied tokens the model ranks first."""
    right = total = 0
    for start in range(0, len(prompts.ids), batch_size):
        ids = prompts.ids[start:start + batch_size].to(input_device(model))
        hits = top_tokens(*next_tokens(model(input_ids=ids).logits, ids, prompts.scored))[1]
        right, total = right + int(hits.sum()), total + hits.numel()
    return right / total


def analyse(model, make_prompts: Callable[[int, str, int], CopyPrompts], lengths: list[int], seeds: list[int],
            ablate: int, batch_size: int = 32, progress: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(heads, patching): per (direction, length, seed), every head's scores with the prompt set's
    teacher-forced copy accuracy, and the accuracy and loss under each patching condition; with the
    per-prompt values the tables' intervals and paired tests read (lists, in prompt order: prompt i
    of a forward and a backward set copies the same letters). The clean run is one pass: head
    scores, copy accuracy and the unpatched condition read its attention and logits."""
    import polars as pl

    model.eval()
    heads, conditions = [], []
    grid = [(d, n, s) for s in seeds for n in lengths for d in DIRECTIONS]
    for direction, length, seed in tqdm(grid, disable=not progress, desc="mechanism", unit="set"):
        prompts = make_prompts(length, direction, seed)
        clean = {"correct": [], "losses": [], "hits": 0, "tokens": 0}

        def read(logits, ids, prompts=prompts, clean=clean):
            correct, loss = measure(logits, prompts, ids)
            clean["correct"] += correct
            clean["losses"] += loss
            hits = top_tokens(*next_tokens(logits, ids, prompts.scored))[1]
            clean["hits"] += int(hits.sum())
            clean["tokens"] += hits.numel()

        per_prompt = prompt_head_scores(model, prompts, batch_size, read)
        scores = {name: values.mean(0) for name, values in per_prompt.items()}
        accuracy = clean["hits"] / clean["tokens"]
        layers, count = scores["induction"].shape
        for layer in range(layers):
            for head in range(count):
                heads.append({"direction": direction, "length": length, "seed": seed, "layer": layer, "head": head,
                              **{name: float(scores[name][layer, head]) for name in SCORES},
                              **{f"{name}_per_prompt": per_prompt[name][:, layer, head].tolist() for name in PER_PROMPT},
                              "copy_accuracy": accuracy})
        measured = patching(model, prompts, scores, ablate, batch_size, clean=(clean["correct"], clean["losses"]))
        for condition, result in measured.items():
            conditions.append({"direction": direction, "length": length, "seed": seed, "condition": condition,
                               **result})
    return pl.DataFrame(heads), pl.DataFrame(conditions)
