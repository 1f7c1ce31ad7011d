"""The mechanism stage's heads files as the corpus experiment reads them.

The stage asks every registry model the same copy prompts (one character tokenizer, the same
lengths, seeds and counts), and prompt i of a forward and a backward set copies the same letters:
(length, seed, prompt index) pairs prompts across directions and across models.
"""

from __future__ import annotations

import polars as pl

SUBJECT = "model-"  # how the mechanism stage names a registry model (lengthgen.plan.mechanism.subjects)


def of_model(heads: pl.DataFrame, name: str) -> pl.DataFrame:
    """The rows of one registry model, under its own name or its mechanism subject's."""
    return heads.filter(pl.col("model").is_in([name, SUBJECT + name]))
