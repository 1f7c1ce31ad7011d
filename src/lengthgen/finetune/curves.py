"""Fine-tuning's learning curves: every evaluation of every run (validation accuracy in distribution,
and the first test bin beyond training where the run scored it), read from the runs' histories."""

from __future__ import annotations

import polars as pl

from ..config.sections import DEFAULT_PROTOCOL
from ..records.files import read_frame
from ..records.tables import read_provenance

CURVE_COLUMNS = {"model": pl.String, "protocol": pl.String, "task": pl.String, "seed": pl.Int64, "step": pl.Int64,
                 "validation_accuracy": pl.Float64, "beyond_accuracy": pl.Float64, "train_lengths": pl.String,
                 "curve_lengths": pl.String}


def read_learning_curves(history_paths) -> pl.DataFrame:
    """One row per evaluation of each run: who it is (from the job's wildcards), the step, and the
    two accuracies (beyond_accuracy null where the run did not score a bin beyond training)."""
    parts = []
    for path in history_paths:
        provenance, history = read_provenance(path), read_frame(path)
        wildcards, section = provenance["wildcards"], provenance["config"]
        if "beyond_accuracy" not in history.columns:
            history = history.with_columns(pl.lit(None, pl.Float64).alias("beyond_accuracy"))
        parts.append(history.select("step", "validation_accuracy", "beyond_accuracy").with_columns(
            pl.lit(wildcards["model"]).alias("model"),
            pl.lit(wildcards.get("protocol", DEFAULT_PROTOCOL)).alias("protocol"),
            pl.lit(wildcards["task"]).alias("task"), pl.lit(int(wildcards["seed"])).alias("seed"),
            pl.lit(section["train_lengths"]).alias("train_lengths"),
            pl.lit(section.get("curve_lengths"), pl.String).alias("curve_lengths")))
    if not parts:
        return pl.DataFrame(schema=CURVE_COLUMNS)
    return pl.concat(parts).select(list(CURVE_COLUMNS)).cast(CURVE_COLUMNS)
