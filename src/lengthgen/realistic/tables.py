"""The realistic-tasks table: per (model, task, length), mean over samples and seeds."""

from __future__ import annotations

import polars as pl

from ..results.provenance import collect
from ..results.references import lorem_reference
from ..results.tables import to_markdown, write_table

LOREM = ["exact", "too_short", "unambiguous", "ambiguous", "tf_unambiguous", "tf_ambiguous"]
GIT = ["exact", "line_share", "tf_token_accuracy", "tf_line_start"]


def realistic_table(paths, models: dict[str, dict]) -> pl.DataFrame:
    """models: registry name -> entry (its hub path finds the paper's numbers)."""
    frame = pl.concat([pl.read_parquet(p) for p in paths], how="diagonal")
    measures = [c for c in dict.fromkeys(LOREM + GIT) if c in frame.columns]
    table = (frame.group_by(["model", "task", "length"], maintain_order=True)
             .agg(*(pl.col(c).cast(pl.Float64).mean() for c in measures), pl.col("seed").n_unique().alias("seeds"),
                  pl.len().alias("samples")))
    reference = [lorem_reference(models[m]["path"], n) if t == "lorem" else None
                 for m, t, n in table.select("model", "task", "length").rows()]
    return table.with_columns(pl.Series("paper_unambiguous", [r[0] if r else None for r in reference], pl.Float64),
                              pl.Series("paper_ambiguous", [r[1] if r else None for r in reference], pl.Float64))


def realistic_markdown(table: pl.DataFrame, provenance: dict) -> str:
    lorem = table.filter(pl.col("task") == "lorem").select(
        "model", "length", *(c for c in LOREM if c in table.columns), "paper_unambiguous", "paper_ambiguous")
    git = table.filter(pl.col("task") != "lorem").select("model", "task", "length",
                                                         *(c for c in GIT if c in table.columns))
    parts = ["# Realistic tasks (paper 4.2)", "",
             "## Lorem-ipsum echo", "",
             "exact: the output contains the paragraph; too_short: at most 0.75 of its length (scored 0). "
             "unambiguous / ambiguous: 1 - breaks after a token of that class / its distinct types, over every "
             "sample (exact copies 1, short outputs 0). tf_*: teacher-forced next-token accuracy where the current "
             "token is unambiguous / ambiguous. paper_*: the paper's numbers for the model and length.", ""]
    parts += [to_markdown(lorem) if lorem.height else "(not run)", "", "## Git revert (forward copy) and "
              "cherry-pick (backward copy)", "",
              "exact: the stripped non-empty lines equal the answer; line_share: lines right at their place; "
              "tf_token_accuracy: teacher-forced, the share of answer tokens ranked first; tf_line_start: the same at "
              "the first token of every line after the first, where the next line must be found (forward or backward).", ""]
    parts += [to_markdown(git) if git.height else "(not run)", "",
              f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(parts)


def write_realistic_table(paths, section: dict, outputs) -> None:
    provenance = collect(section)
    table = realistic_table(paths, section["models"])
    write_table(table, outputs, provenance, markdown=realistic_markdown(table, provenance))
