"""What the corpus experiment reads of the fine-tuning stage's evaluation files.

The stage evaluates every model on one data file per (task, bin, seed), so every model of every arm
is asked the same test examples after the same short fine-tuning.
"""

from __future__ import annotations

import polars as pl

from ..tasks import LengthBin

COLUMNS = ["system", "task", "seed", "bin", "length", "example", "teacher_forced"]  # read of each eval file


def bins_of(evals: pl.DataFrame, task: str) -> list[str]:
    """The task's test bins, shortest first (the stage's first bin holds the training lengths)."""
    return sorted(evals.filter(pl.col("task") == task)["bin"].unique().to_list(),
                  key=lambda b: (LengthBin.parse(b).high, b))
