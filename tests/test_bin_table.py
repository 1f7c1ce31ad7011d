"""Length-bin tables (from scratch, fine-tuned): means and spreads over seeds, mirror columns, the theory-split verdict."""

import polars as pl
import pytest

from lengthgen.lengthbins.table import bin_table, theory_split


def results(accuracies: dict[tuple[str, str], list[float]]) -> pl.DataFrame:
    rows = []
    for (task, bin_), per_seed in accuracies.items():
        for seed, value in enumerate(per_seed):
            rows.append({"task": task, "system": "ape", "seed": seed, "bin": bin_, "teacher_forced": value,
                         "greedy": value / 2})
    return pl.DataFrame(rows)


BINS = {"retrieval": ["short", "long"], "copying": ["short", "long"]}
GOOD = {("UR", "long"): [1.0, 0.9], ("UL", "long"): [0.94, 0.94], ("NRLast", "long"): [0.5, 0.3],
        ("UR", "short"): [1.0, 1.0]}


def test_mean_spread_and_mirror():
    table = bin_table(results(GOOD), BINS)
    ur = table.filter((pl.col("task") == "UR") & (pl.col("bin") == "long")).row(0, named=True)
    assert ur["accuracy"] == pytest.approx(0.95) and ur["accuracy_std"] == pytest.approx(0.0707107, rel=1e-4)
    assert ur["greedy_accuracy"] == pytest.approx(0.475) and ur["seeds"] == 2
    assert ur["mirror"] == "UL" and ur["mirror_accuracy"] == pytest.approx(0.94)
    assert ur["predicted_to_generalise"] is True
    # Right/forward task first, then its mirror; bins in the given order.
    assert table.get_column("task").to_list() == ["UR", "UR", "UL", "NRLast"]
    assert table.get_column("bin").to_list()[:2] == ["short", "long"]


def test_split_holds():
    assert theory_split(bin_table(results(GOOD), BINS), BINS) == []


def test_split_fails_when_an_inexpressible_task_is_not_below():
    bad = {**GOOD, ("NRLast", "long"): [0.95, 0.95]}
    problems = theory_split(bin_table(results(bad), BINS), BINS)
    assert problems == ["ape: UL (0.94) is not above NRLast (0.95)"]


def test_split_fails_when_an_expressible_mirror_pair_differs():
    bad = {**GOOD, ("UL", "long"): [0.7, 0.7]}
    problems = theory_split(bin_table(results(bad), BINS), BINS)
    assert problems == ["ape: UR and UL differ by 0.25"]
