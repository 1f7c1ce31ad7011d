"""Each prompt's score of a model's best heads, so two models can be compared prompt by prompt.

The mechanism stage asks every registry model the same copy prompts (one character tokenizer, the
same lengths, seeds and counts), and prompt i of a forward and a backward set copies the same
letters: (length, seed, prompt index) pairs prompts across directions and across models.
"""

from __future__ import annotations

import polars as pl

from ..mechanism.tables import best_head

SUBJECT = "model-"  # how the mechanism stage names a registry model (lengthgen.plan.mechanism.subjects)


def of_model(heads: pl.DataFrame, name: str) -> pl.DataFrame:
    """The rows of one registry model, under its own name or its mechanism subject's."""
    return heads.filter(pl.col("model").is_in([name, SUBJECT + name]))


def gap(rows: pl.DataFrame) -> tuple[str, dict[tuple, float]]:
    """Per prompt, the best induction head's score on the forward prompt minus the best
    anti-induction head's on its backward twin: how far the model prefers the induction direction."""
    (induction, forward), (anti, backward) = best_head(rows, "forward"), best_head(rows, "backward")
    return f"{induction} minus {anti}", {k: forward[k] - backward[k] for k in sorted(set(forward) & set(backward))}
