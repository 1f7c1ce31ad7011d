"""Each prompt's score of a model's best heads, so two models can be compared prompt by prompt.

The mechanism stage asks every registry model the same copy prompts (one character tokenizer, the
same lengths, seeds and counts), and prompt i of a forward and a backward set copies the same
letters: (length, seed, prompt index) pairs prompts across directions and across models.
"""

from __future__ import annotations

import polars as pl

SUBJECT = "model-"  # how the mechanism stage names a registry model (lengthgen.plan.mechanism.subjects)
BEST = {"forward": "induction", "backward": "anti_induction"}  # the score each direction's circuit is judged by


def of_model(heads: pl.DataFrame, name: str) -> pl.DataFrame:
    """The rows of one registry model, under its own name or its mechanism subject's."""
    return heads.filter(pl.col("model").is_in([name, SUBJECT + name]))


def per_prompt(rows: pl.DataFrame, column: str) -> dict[tuple, float]:
    """Each prompt's value of a per-prompt column, keyed by (length, seed, prompt index)."""
    return {(r["length"], r["seed"], i): v for r in rows.iter_rows(named=True) for i, v in enumerate(r[column])}


def best_head(rows: pl.DataFrame, direction: str) -> tuple[str, dict[tuple, float]]:
    """The head with the highest mean score of `direction`'s circuit over lengths and seeds (ties:
    the later head, as `mechanism_pairs` picks it), named, with its score on each prompt."""
    score = BEST[direction]
    rows = rows.filter(pl.col("direction") == direction)
    top = rows.group_by(["layer", "head"]).agg(pl.col(score).mean()).sort([score, "layer", "head"]).row(-1, named=True)
    head = rows.filter((pl.col("layer") == top["layer"]) & (pl.col("head") == top["head"]))
    return f"{score.replace('_', '-')} head {top['layer']}.{top['head']}", per_prompt(head, f"{score}_per_prompt")


def gap(rows: pl.DataFrame) -> tuple[str, dict[tuple, float]]:
    """Per prompt, the best induction head's score on the forward prompt minus the best
    anti-induction head's on its backward twin: how far the model prefers the induction direction."""
    (induction, forward), (anti, backward) = best_head(rows, "forward"), best_head(rows, "backward")
    return f"{induction} minus {anti}", {k: forward[k] - backward[k] for k in sorted(set(forward) & set(backward))}
