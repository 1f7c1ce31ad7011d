"""Figures are drawn from the tables: bar = mean (never mean + std), one bar per task and pair."""

import polars as pl
import pytest
from matplotlib.colors import to_hex

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
    legend = figure.axes[0].get_legend()
    colours = {t.get_text(): to_hex(h.get_facecolor()) for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert colours == {"left / backward": figures.LEFT, "right / forward": figures.RIGHT}
    png, pdf = figures.save(figure, tmp_path / "mirror")
    assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")


def test_comparison_draws_every_experiment_of_each_pair():
    rows = pl.DataFrame({"task": ["UL", "UR", "UL", "UR"], "experiment": ["from scratch"] * 2 + ["in context"] * 2,
                         "system": ["ape", "ape", "m", "m"], "bin": ["31-45", "31-45", "30", "30"],
                         "accuracy": [0.9, 0.95, 0.2, 0.9]})
    figure = figures.comparison(rows)
    assert sorted(round(p.get_height(), 6) for p in figure.axes[0].patches) == [0.2, 0.9, 0.9, 0.95]


def test_realistic_bars_pair_each_measure_per_length():
    """Lorem: unambiguous (blue) beside ambiguous (red), greedy then teacher-forced, one pair per
    length; git: revert beside cherry-pick per measure and length; a missing measure draws as 0."""
    lorem = [{"model": "m", "task": "lorem", "length": n, "unambiguous": u, "ambiguous": a, "tf_unambiguous": tu,
              "tf_ambiguous": ta} for n, u, a, tu, ta in ((90, 0.8, 0.1, 0.6, 0.3), (60, 0.9, 0.2, 0.7, 0.4))]
    git = [{"model": "m", "task": task, "length": n, "exact": e, "tf_token_accuracy": t, "tf_line_start": s}
           for task, n, e, t, s in (("revert", 2, 0.5, 0.45, 0.05), ("cherrypick", 2, 0.25, 0.4, None),
                                    ("revert", 3, 0.125, 0.35, 0.02), ("cherrypick", 3, 0.0, 0.3, 0.01))]
    figure = figures.realistic_bars(pl.concat([pl.DataFrame(lorem), pl.DataFrame(git)], how="diagonal"))
    heights = [[round(p.get_height(), 6) for p in ax.patches] for ax in figure.axes]
    assert heights[0] == [0.9, 0.2, 0.8, 0.1, 0.7, 0.4, 0.6, 0.3]  # lengths 60 then 90
    assert heights[1] == [0.5, 0.25, 0.125, 0.0, 0.45, 0.4, 0.35, 0.3, 0.05, 0.0, 0.02, 0.01]
    labels = [t.get_text() for t in figure.axes[0].texts]
    assert labels == ["greedy\n60", "greedy\n90", "teacher-forced\n60", "teacher-forced\n90"]


def test_head_maps_show_each_models_mean_scores_on_whole_layers_and_heads():
    """One row per model (a 2-layer and a 4-layer one), each map the mean over lengths of that
    score, ticks on whole layers and heads, the score named once per column."""
    rows = []
    for model, layers in (("small", 2), ("large", 4)):
        for length in (3, 5):
            for direction in ("forward", "backward"):
                for layer in range(layers):
                    for head in range(2):
                        value = 0.1 * layer + 0.01 * head + (0.2 if length == 5 else 0.0)
                        rows.append({"model": model, "direction": direction, "length": length, "layer": layer,
                                     "head": head, "induction": value, "anti_induction": value / 2})
    figure = figures.head_maps(pl.DataFrame(rows))
    small_induction, small_anti, large_induction = figure.axes[0], figure.axes[1], figure.axes[2]
    assert small_induction.get_images()[0].get_array()[1][1] == pytest.approx(0.1 + 0.01 + 0.1)
    assert small_anti.get_images()[0].get_array()[1][1] == pytest.approx((0.1 + 0.01 + 0.1) / 2)
    assert list(small_induction.get_yticks()) == [0, 1] and list(large_induction.get_yticks()) == [0, 1, 2, 3]
    assert list(small_induction.get_xticks()) == [0, 1]
    assert [a.get_title() for a in figure.axes[:4]] == ["induction (forward copies)",
                                                         "anti-induction (backward copies)", "", ""]


def test_a_figure_rule_draws_each_of_its_images_to_its_png_and_pdf(tmp_path):
    """What a figure job does (workflow/scripts/figures.py): the drawing its record names, every image
    written under the output the record gives it."""
    from lengthgen.plan.figures import FIGURE_RULES
    from lengthgen.records.tables import write_parquet

    table = icl_table().with_columns(tf_symbol_accuracy=pl.col("accuracy"), tf_symbol_accuracy_std_over_seeds=0.0)
    write_parquet(table, tmp_path / "icl.parquet", {})
    record = FIGURE_RULES["figure_icl"]
    outputs = {key: str(tmp_path / path.rsplit("/", 1)[1]) for key, path in record.outputs().items()}
    figures.draw("figure_icl", {"icl": str(tmp_path / "icl.parquet")}, {}, outputs)
    assert sorted(outputs) == ["icl_mirror_pairs", "icl_mirror_pairs_pdf", "icl_teacher_forced",
                               "icl_teacher_forced_pdf"]
    for key, path in outputs.items():
        assert open(path, "rb").read(4) == (b"%PDF" if key.endswith("_pdf") else b"\x89PNG"), key
