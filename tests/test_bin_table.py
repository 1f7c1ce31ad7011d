"""Length-bin tables (from scratch, fine-tuned): means and spreads over seeds, mirror columns, the theory-split verdict."""

import polars as pl
import pytest

from lengthgen.lengthbins.table import accuracy_intervals, bin_pairs, bin_table, per_run_accuracy, theory_split
from lengthgen.stats import difference_interval, fisher_exact, mcnemar, wilson


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
    assert ur["expressible"] is True
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


# -- intervals and pairs --------------------------------------------------------------------------
def evals(outcomes: dict[str, list[bool]], length_bin="9-12", greedy=True) -> pl.DataFrame:
    """Per-example rows of one system and seed: task -> each example's teacher-forced outcome."""
    return pl.DataFrame([{"system": "ape", "task": task, "seed": 0, "bin": length_bin, "length": 5,
                          "teacher_forced": right, "greedy": right if greedy else None, "example": k}
                         for task, per_example in outcomes.items() for k, right in enumerate(per_example)],
                        schema_overrides={"greedy": pl.Boolean})


def inputs(contexts: dict[str, list[list[int]]], length_bin="9-12") -> pl.DataFrame:
    return pl.DataFrame([{"task": task, "seed": 0, "bin": length_bin, "example": k, "context": context, "query": 1}
                         for task, per_example in contexts.items() for k, context in enumerate(per_example)])


def test_a_cells_interval_is_wilsons_for_one_seed_and_over_seeds_for_more():
    one = evals({"UR": [True] * 8 + [False] * 2}, "long")
    cell = accuracy_intervals(one).row(0, named=True)
    assert cell["examples"] == 10 and (cell["accuracy_low"], cell["accuracy_high"]) == pytest.approx(wilson(8, 10))
    # Two runs at 0.8 and 1.0: the run is the unit, t with 1 degree of freedom, not 20 examples' Wilson.
    two = pl.concat([one, evals({"UR": [True] * 10}, "long").with_columns(pl.lit(1, pl.Int64).alias("seed"))])
    cell = accuracy_intervals(two).row(0, named=True)
    assert cell["examples"] == 20
    assert (cell["accuracy_low"], cell["accuracy_high"]) == pytest.approx((max(0, 0.9 - 12.7062 * 0.1), 1.0), abs=1e-3)
    table = bin_table(per_run_accuracy(two), BINS, intervals=accuracy_intervals(two))
    assert table.select("examples", "accuracy_low").row(0) == (20, pytest.approx(cell["accuracy_low"]))


def test_pairs_judge_seeds_as_the_unit_and_say_how_they_lean():
    """Three seeds, UR above UL in two of them and below in one: the seed-level test does not call it,
    though the pooled one (every example as independent) does."""
    rows = []
    for seed, (ur, ul) in enumerate(((290, 150), (280, 160), (120, 200))):
        rows.append(evals({"UR": [True] * ur + [False] * (300 - ur), "UL": [True] * ul + [False] * (300 - ul)})
                    .with_columns(pl.lit(seed, pl.Int64).alias("seed")))
    pair = bin_pairs(pl.concat(rows)).filter(pl.col("measure") == "teacher_forced").row(0, named=True)
    assert pair["test"] == "t over 3 seeds" and pair["seeds"] == 3
    assert (pair["seeds_first_above"], pair["seeds_second_above"]) == (2, 1)
    assert pair["difference"] == pytest.approx((140 + 120 - 80) / 900) and pair["p"] > 0.05
    assert pair["difference_low"] < 0 < pair["difference_high"]
    assert pair["pooled_p"] < 1e-6 and pair["pooled_low"] > 0
    one = bin_pairs(rows[0]).filter(pl.col("measure") == "teacher_forced").row(0, named=True)
    assert (one["seeds"], one["seeds_first_above"], one["seeds_second_above"]) == (1, 1, 0)
    assert one["pooled_p"] == one["p"]


def test_pairs_test_on_the_same_examples_only_where_the_inputs_are_the_same():
    same = [[k, k + 1, k + 2] for k in range(12)]
    outcomes = {"UR": [True] * 12, "UL": [False] * 10 + [True] * 2, "NRLast": [False] * 6 + [True] * 6}
    pairs = bin_pairs(evals(outcomes), inputs({"UR": same, "UL": same, "NRLast": [[9, 9, 9]] * 12}))
    assert pairs.select("comparison", "first", "second").unique(maintain_order=True).rows() == [
        ("mirror pair", "UR", "UL"), ("expressible above inexpressible", "UR", "NRLast"),
        ("expressible above inexpressible", "UL", "NRLast")]
    teacher = {(r["first"], r["second"]): r for r in pairs.filter(pl.col("measure") == "teacher_forced")
               .iter_rows(named=True)}
    mirror = teacher[("UR", "UL")]
    assert (mirror["test"], mirror["pairs"]) == ("McNemar exact", 12)
    assert mirror["p"] == pytest.approx(mcnemar(outcomes["UR"], outcomes["UL"])["p"])
    assert (mirror["difference_low"], mirror["difference_high"]) == pytest.approx(
        difference_interval(outcomes["UR"], outcomes["UL"], paired=True))
    split = teacher[("UR", "NRLast")]
    assert (split["test"], split["pairs"]) == ("Fisher exact", None)
    assert split["p"] == pytest.approx(fisher_exact(12, 12, 6, 12)) and split["significant"]
    assert split["difference"] == pytest.approx(0.5) and split["verdict"].startswith("UR above")
    # The authors' unique retrieval puts the left task's query one place further: not the same inputs.
    moved = bin_pairs(evals(outcomes), inputs({"UR": same, "UL": [c[1:] + [0] for c in same], "NRLast": same}))
    assert moved.filter(pl.col("second") == "UL")["test"].unique().to_list() == ["Fisher exact"]
    same_inputs = moved.filter((pl.col("first") == "UR") & (pl.col("second") == "NRLast"))
    assert same_inputs["test"].unique().to_list() == ["McNemar exact"]
    assert bin_pairs(evals(outcomes))["test"].unique().to_list() == ["Fisher exact"]  # no inputs: nothing paired


def test_pairs_leave_out_a_measure_not_scored():
    pairs = bin_pairs(evals({"UR": [True] * 4, "UL": [True] * 4}, greedy=False))
    assert pairs["measure"].to_list() == ["teacher_forced"]


def test_pairs_of_tasks_without_a_comparison_are_an_empty_table_with_its_columns():
    pairs = bin_pairs(evals({"UR": [True] * 4, "UF": [True] * 4}))
    assert pairs.is_empty() and {"system", "measure", "difference_low", "p"} <= set(pairs.columns)


def test_each_bin_is_marked_beyond_the_training_lengths_or_not():
    outcomes = {"UR": [True] * 4, "UL": [True] * 4}
    for train_lengths, beyond in (({"retrieval": "1-8"}, True), ({"retrieval": "1-9"}, False), ("1-8", True),
                                  (None, None)):
        pairs = bin_pairs(evals(outcomes), train_lengths=train_lengths)  # the examples' bin: 9-12
        assert pairs.height > 0 and pairs["beyond_training"].to_list() == [beyond] * pairs.height
