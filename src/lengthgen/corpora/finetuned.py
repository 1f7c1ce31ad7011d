"""Two models fine-tuned alike, on the same test examples, bin by bin.

The fine-tuning stage evaluates every model on one data file per (task, bin, seed), so (seed,
example) names the same test input for each; the two are paired (McNemar's test, as
`lengthgen.lengthbins.table.bin_pairs` pairs tasks that share inputs) where both were asked the
same examples at the same lengths, and compared as independent samples (Fisher's) otherwise.
"""

from __future__ import annotations

import polars as pl

from ..lengthbins.table import MEASURES, outcomes_by_seed
from ..stats import seed_level_comparison
from ..tasks import LengthBin

KEYS = ["seed", "example"]
COLUMNS = ["system", "task", "seed", "bin", "length", "example", "teacher_forced", "greedy"]  # read of each eval file


def _same_examples(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    """Whether the two sides hold the same (seed, example) keys, each at the same input length."""
    if a.height != b.height:
        return False
    joined = a.select(*KEYS, "length").join(b.select(*KEYS, pl.col("length").alias("other")), on=KEYS)
    return joined.height == a.height and bool((joined["length"] == joined["other"]).all())


def bins_of(evals: pl.DataFrame, task: str) -> list[str]:
    """The task's test bins, shortest first (the stage's first bin holds the training lengths)."""
    return sorted(evals.filter(pl.col("task") == task)["bin"].unique().to_list(),
                  key=lambda b: (LengthBin.parse(b).high, b))


def between_models(evals: pl.DataFrame, first: str, second: str, task: str) -> list[dict]:
    """Per test bin and measure (teacher-forced exact match; greedy where scored), `first` against
    `second` on `task`, the fine-tuning run (seed) as the unit (`seed_level_comparison`: the corpora
    have one pretraining seed each, so between-pretraining variation is not measured);
    `beyond_training`: every bin but the shortest."""
    rows = []
    bins = bins_of(evals, task)
    for length_bin in bins:
        a, b = (evals.filter((pl.col("system") == model) & (pl.col("task") == task) & (pl.col("bin") == length_bin))
                .sort(KEYS) for model in (first, second))
        seeds = sorted(set(a["seed"]) & set(b["seed"]))  # only runs both models made are compared
        a, b = (side.filter(pl.col("seed").is_in(seeds)) for side in (a, b))
        if not seeds:
            continue
        paired = _same_examples(a, b)
        for measure, _ in MEASURES:
            if a[measure].null_count() or b[measure].null_count():
                continue  # not scored (greedy decoding off)
            rows.append({"model": f"{first} vs {second}", "first": f"{task} on {first}",
                         "second": f"{task} on {second}", "measure": measure, "task": task, "bin": length_bin,
                         "beyond_training": length_bin != bins[0],
                         **seed_level_comparison(outcomes_by_seed(a, measure, seeds), outcomes_by_seed(b, measure, seeds),
                                                 paired,
                                                 f"{first} above", f"{second} above")})
    return rows
