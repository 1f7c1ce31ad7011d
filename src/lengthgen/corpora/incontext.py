"""Two models' in-context answers to the same examples, side by side.

The in-context stage's data files depend on the task, length and seed, never on the model, and the
corpus models share one tokenizer and kind (so one set of prompt variants): (task, bin, seed,
variant, example) names the same prompt for each of them. A model against itself, forward against
backward copy, is the stage's own mirror-pair test (`lengthgen.icl.table.pair_tests`).
"""

from __future__ import annotations

import polars as pl

from ..icl.table import pair_tests
from ..stats import paired_comparison

KEYS = ["task", "bin", "seed", "variant", "example"]
COLUMNS = ["model", *KEYS, "correct", "tf_symbol_accuracy"]  # what is read of each prediction file
# The measures compared: greedy exact match (binary: McNemar) and teacher-forced symbol accuracy.
MEASURES = (("accuracy", "correct", True), ("tf_symbol_accuracy", "tf_symbol_accuracy", False))


def between_models(examples: pl.DataFrame, first: str, second: str, task: str) -> list[dict]:
    """`first` against `second` on the examples both were asked of `task`, pooled over lengths,
    seeds and prompt variants; one example's variants resampled together (as `pair_tests` does)."""
    side = lambda model, name: examples.filter((pl.col("model") == model) & (pl.col("task") == task)).select(
        *KEYS, *(pl.col(c).alias(f"{name}_{c}") for _, c, _ in MEASURES))
    paired = side(first, "first").join(side(second, "second"), on=KEYS).sort(KEYS)
    if paired.is_empty():
        return []
    clusters = [f"{b}/{s}/{e}" for b, s, e in zip(paired["bin"], paired["seed"], paired["example"])]
    return [{"model": f"{first} vs {second}", "first": f"{task} on {first}", "second": f"{task} on {second}",
             "measure": measure, "task": task,
             **paired_comparison(paired[f"first_{column}"].to_list(), paired[f"second_{column}"].to_list(), binary,
                                 clusters, f"{first} above", f"{second} above")}
            for measure, column, binary in MEASURES]


def forward_over_backward(examples: pl.DataFrame, model: str, forward: str = "UF", backward: str = "UB") -> list[dict]:
    """One model's forward copy against its backward copy, exactly as the in-context stage's pairs
    table compares them (same examples: the two tasks share their inputs)."""
    mine = examples.filter((pl.col("model") == model) & pl.col("task").is_in([forward, backward]))
    if set(mine["task"]) != {forward, backward}:
        return []
    rows = pair_tests(mine)  # a copying pair: no neighbour preference, so no p_right / p_left read
    return [{**r, "task": None} for r in rows.iter_rows(named=True) if (r["first"], r["second"]) == (forward, backward)]
