"""Figures are drawn from the tables: bar = mean (never mean + std), one bar per task and pair."""

import polars as pl

from lengthgen.results import figures


def icl_table():
    rows = []
    for task, accuracy, std in (("UL", 0.25, 0.1), ("UR", 0.95, 0.05), ("UB", 0.5, 0.2), ("UF", 1.0, 0.0)):
        mirror = {"UL": "UR", "UR": "UL", "UB": "UF", "UF": "UB"}[task]
        rows.append({"model": "m", "task": task, "bin": "30", "variant": "all", "accuracy": accuracy,
                     "accuracy_std_over_seeds": std, "mirror": mirror})
    return pl.DataFrame(rows)


def test_mirror_bars_are_means_with_the_spread_as_error_bars(tmp_path):
    figure = figures.mirror_bars(icl_table())
    heights = sorted(round(p.get_height(), 6) for p in figure.axes[0].patches if p.get_height() > 0)
    assert heights == [0.25, 0.5, 0.95, 1.0]  # the table's means, not mean + std
    png, pdf = figures.save(figure, tmp_path / "mirror")
    assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")


def test_comparison_draws_every_experiment_of_each_pair():
    rows = pl.DataFrame({"task": ["UL", "UR", "UL", "UR"], "experiment": ["from scratch"] * 2 + ["in context"] * 2,
                         "system": ["ape", "ape", "m", "m"], "bin": ["31-45", "31-45", "30", "30"],
                         "accuracy": [0.9, 0.95, 0.2, 0.9]})
    figure = figures.comparison(rows)
    assert sorted(round(p.get_height(), 6) for p in figure.axes[0].patches) == [0.2, 0.9, 0.9, 0.95]
