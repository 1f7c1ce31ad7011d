"""The in-context table: accuracy per (task, model, length, variant), mean and spread over seeds and
variants, the mirror task beside each row, and for left/backward tasks the share of wrong answers
that equal the right-hand neighbour (the paper's signature of an induction bias)."""

from __future__ import annotations

import polars as pl

from ..results.provenance import collect
from ..results.tables import to_markdown, write_table
from ..tasks.theory import theory_table


def per_file_accuracy(paths) -> pl.DataFrame:
    columns = ["model", "task", "bin", "seed", "variant", "correct", "right_neighbour_error"]
    frames = [pl.read_parquet(p, columns=columns) for p in paths]
    return pl.concat(frames).group_by(["model", "task", "bin", "seed", "variant"]).agg(
        pl.col("correct").mean().alias("accuracy"),
        pl.col("right_neighbour_error").mean().alias("right_neighbour_share"))


def icl_table(paths) -> pl.DataFrame:
    runs = per_file_accuracy(paths)
    per_variant = runs.group_by(["model", "task", "bin", "variant"]).agg(
        pl.col("accuracy").mean(), pl.col("accuracy").std().alias("accuracy_std_over_seeds"),
        pl.col("right_neighbour_share").mean())
    overall = runs.group_by(["model", "task", "bin"]).agg(
        pl.col("accuracy").mean(), pl.col("accuracy").std().alias("accuracy_std_over_seeds"),
        pl.col("right_neighbour_share").mean()).with_columns(pl.lit("all").alias("variant"))
    table = pl.concat([per_variant, overall.select(per_variant.columns)])
    theory = theory_table().select("task", "mirror", pl.col("c_rasp_pos").alias("predicted_to_generalise"))
    table = table.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), "model", "bin", "variant",
                          pl.col("accuracy").alias("mirror_accuracy"))
    return (table.join(mirror, on=["mirror", "model", "bin", "variant"], how="left")
            .with_columns(pl.col("bin").str.extract(r"(\d+)$").cast(pl.Int64).alias("_high"))
            .sort(["model", "task", "_high", "variant"]).drop("_high"))


def icl_markdown(table: pl.DataFrame, provenance: dict) -> str:
    shown = table.filter(pl.col("variant") == "all").select(
        "model", "task", "bin", "accuracy", "accuracy_std_over_seeds", "mirror", "mirror_accuracy",
        "right_neighbour_share", "predicted_to_generalise")
    return ("# In context: exact match per task, model and length (mean over seeds and prompt variants)\n\n"
            + to_markdown(shown) + "\nright_neighbour_share: of the wrong answers of a left/backward task, the share "
            "that equal the right-hand neighbour (induction bias).\n\n"
            f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")


def write_icl_table(paths, section: dict, outputs) -> None:
    provenance = collect(section)
    table = icl_table(paths)
    write_table(table, outputs, provenance, markdown=icl_markdown(table, provenance))
