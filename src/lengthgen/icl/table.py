"""The in-context table: per (model, task, length bin, prompt variant) exact match (the authors'
scoring, and strict), the teacher-forced measures, mean and spread over seeds and over variants, the
mirror task beside each row, and the two signatures of an induction bias: the share of a left task's
wrong answers that equal the right-hand neighbour, and how often the model puts more probability on
the right-hand neighbour than on the left-hand one."""

from __future__ import annotations

import polars as pl

from ..results.provenance import collect
from ..results.tables import to_markdown, write_table
from ..tasks import MIRROR_PAIRS, get_task
from ..tasks.theory import theory_table

KEYS = ["model", "task", "bin", "seed", "variant"]
MEASURES = {
    "accuracy": pl.col("correct").cast(pl.Float64).mean(),
    "accuracy_strict": pl.col("correct_strict").cast(pl.Float64).mean(),
    "tf_symbol_accuracy": pl.col("tf_symbol_accuracy").mean(),
    "tf_exact": pl.col("tf_exact").cast(pl.Float64).mean(),
    "target_logprob": pl.col("target_logprob").mean(),
    "right_neighbour_share": pl.col("right_neighbour_error").cast(pl.Float64).mean(),
    # Defined where the two neighbours differ: which one the model gives more probability.
    "right_preference": (pl.col("p_right") > pl.col("p_left")).cast(pl.Float64).mean(),
    "right_probability": (pl.col("p_right") / (pl.col("p_right") + pl.col("p_left"))).mean(),
}
MIRRORED = ("accuracy", "tf_symbol_accuracy", "right_preference")


def per_run(paths) -> pl.DataFrame:
    """One row per (model, task, bin, seed, variant), read from the prediction files."""
    columns = KEYS + ["correct", "correct_strict", "right_neighbour_error", "tf_symbol_accuracy", "tf_exact",
                      "target_logprob", "p_right", "p_left"]
    frame = pl.concat([pl.read_parquet(p, columns=columns) for p in paths])
    return frame.group_by(KEYS).agg(**MEASURES)


def _over_seeds(runs: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return runs.group_by(keys).agg(
        *(pl.col(m).mean() for m in MEASURES), pl.col("accuracy").std().alias("accuracy_std_over_seeds"),
        pl.col("tf_symbol_accuracy").std().alias("tf_symbol_accuracy_std_over_seeds"), pl.len().alias("runs"))


def icl_table(paths) -> pl.DataFrame:
    runs = per_run(paths)
    per_variant = _over_seeds(runs, ["model", "task", "bin", "variant"])
    # "all": each seed's mean over variants first, so the spread is over seeds (not variants).
    seeds = runs.group_by(["model", "task", "bin", "seed"]).agg(pl.col(m).mean() for m in MEASURES)
    overall = _over_seeds(seeds, ["model", "task", "bin"]).with_columns(pl.lit("all").alias("variant"))
    table = pl.concat([per_variant, overall.select(per_variant.columns)])
    theory = theory_table().select("task", "family", "mirror", pl.col("c_rasp_pos").alias("predicted_to_generalise"))
    table = table.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), "model", "bin", "variant",
                          *(pl.col(m).alias(f"mirror_{m}") for m in MIRRORED))
    return (table.join(mirror, on=["mirror", "model", "bin", "variant"], how="left")
            .with_columns(pl.col("bin").str.extract(r"(\d+)$").cast(pl.Int64).alias("_high"))
            .sort(["model", "task", "_high", "variant"]).drop("_high"))


def asymmetry(table: pl.DataFrame) -> list[str]:
    """Per model, the paper's in-context finding on the teacher-forced measures (over all variants
    and lengths): forward copy above backward copy, and on left retrieval tasks the right-hand
    neighbour preferred."""
    lines = []
    overall = table.filter(pl.col("variant") == "all")
    for (model,), rows in overall.group_by(["model"], maintain_order=True):
        parts = []
        for left, right in MIRROR_PAIRS:
            pair = rows.filter(pl.col("task").is_in([left, right]))
            means = dict(pair.group_by("task").agg(pl.col("tf_symbol_accuracy").mean()).rows())
            if left in means and right in means:
                parts.append(f"{right} {means[right]:.2f} vs {left} {means[left]:.2f} "
                             f"({'right/forward above' if means[right] > means[left] else 'NOT above'})")
        preference = rows.filter(pl.col("task").map_elements(lambda t: not get_task(t).induction, pl.Boolean)
                                 & (pl.col("family") == "retrieval"))
        if preference.height:
            share = preference.get_column("right_preference").mean()
            parts.append(f"left retrieval tasks prefer the right-hand neighbour in {share:.0%} of examples")
        lines.append(f"- {model}: teacher-forced symbol accuracy " + "; ".join(parts) + ".")
    return lines


def icl_markdown(table: pl.DataFrame, provenance: dict) -> str:
    shown = table.filter(pl.col("variant") == "all").select(
        "model", "task", "bin", "accuracy", "accuracy_strict", "mirror", "mirror_accuracy", "tf_symbol_accuracy",
        "mirror_tf_symbol_accuracy", "target_logprob", "right_preference", "right_neighbour_share",
        "predicted_to_generalise")
    return ("# In context: per task, model and length (mean over seeds and prompt variants)\n\n"
            "accuracy: exact match as the authors score it (spaces and <eos> removed); accuracy_strict: the answer "
            "exactly as the prompt writes it. tf_symbol_accuracy: teacher-forced, the share of target symbols "
            "the model ranks first; target_logprob: log-probability of the target. right_preference: how often "
            "the model gives the right-hand neighbour of the used occurrence more probability than the left-hand "
            "one (retrieval); right_neighbour_share: of a left/backward task's wrong answers, the share that "
            "equal the right-hand neighbour.\n\n"
            + to_markdown(shown) + "\nInduction asymmetry (the paper: right/forward easier than left/backward):\n\n"
            + "\n".join(asymmetry(table)) + "\n\n"
            f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")


def write_icl_table(paths, section: dict, outputs) -> None:
    provenance = collect(section)
    table = icl_table(paths)
    write_table(table, outputs, provenance, markdown=icl_markdown(table, provenance))
