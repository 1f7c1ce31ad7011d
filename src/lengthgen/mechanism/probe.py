"""The induction probe: the mechanism's head scores and copy accuracy of a model on the authors'
copy prompts (10 demonstrations), in both directions. Pretraining runs it at every evaluation (the
history shows when induction heads form) and on the saved model (rule `pretrain`).

Without polars (`probe_rows`, `probe_summary`): the pretraining probe also runs on the GPU machine,
which lacks it.
"""

from __future__ import annotations

import torch

from ..inference.text import symbol_separator
from ..models.loading import load_trained, load_trained_tokenizer
from .analyse import copy_accuracy
from .heads import head_scores
from .prompts import few_shot_prompts


@torch.no_grad()
def probe_rows(model, tokenizer, length: int = 5, count: int = 32, seed: int = 0) -> tuple[list[dict], dict]:
    """One row per head and direction with its scores, and the copy accuracy per direction (no
    polars: the pretraining probe also runs on the GPU machine, which lacks it)."""
    separator, rows, accuracy = symbol_separator(tokenizer), [], {}
    for direction in ("forward", "backward"):
        prompts = few_shot_prompts(tokenizer, length, direction, count, 10, seed, separator)
        scores = head_scores(model, prompts)
        accuracy[f"{direction}_copy_accuracy"] = copy_accuracy(model, prompts)
        layers, heads = scores["induction"].shape
        rows += [{"direction": direction, "layer": layer, "head": head,
                  **{name: float(values[layer, head]) for name, values in scores.items()}}
                 for layer in range(layers) for head in range(heads)]
    return rows, accuracy


def probe_heads(model, tokenizer, length: int = 5, count: int = 32, seed: int = 0):
    """The mechanism's head scores on copy prompts (10 demonstrations, segments of `length`
    letters): a table with one row per head and direction, and the teacher-forced copy accuracy per
    direction."""
    import polars as pl

    rows, accuracy = probe_rows(model, tokenizer, length, count, seed)
    return pl.DataFrame(rows), accuracy


def probe_summary(model, tokenizer, length: int = 5) -> dict:
    """Best induction score (forward copy prompts) and best anti-induction score (backward ones),
    and the teacher-forced copy accuracy of each direction."""
    rows, accuracy = probe_rows(model, tokenizer, length)
    best = {score: max(r[score] for r in rows if r["direction"] == direction)
            for score, direction in (("induction", "forward"), ("anti_induction", "backward"))}
    return {"best_induction": best["induction"], "best_anti_induction": best["anti_induction"], **accuracy}


def induction_probe(model_dir, length: int = 5, count: int = 32, seed: int = 0):
    """`probe_heads` of a saved model (in float32)."""
    return probe_heads(load_trained(model_dir), load_trained_tokenizer(model_dir), length, count, seed)
