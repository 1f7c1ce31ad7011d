"""The realistic-tasks table: per (model, task, length), mean over samples and seeds."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import to_markdown, write_table
from ..references import lorem_reference
from ..stats import interval_text, mean_interval, paired_comparison

LOREM = ["exact", "too_short", "unambiguous", "ambiguous", "tf_unambiguous", "tf_ambiguous"]
GIT = ["exact", "line_share", "tf_token_accuracy", "tf_line_start"]


BINARY = {"exact", "too_short"}


def predictions(paths) -> pl.DataFrame:
    return pl.concat([read_frame(p) for p in paths], how="diagonal")


def _intervals(frame: pl.DataFrame, measures: list[str]) -> pl.DataFrame:
    """Per (model, task, length), each measure's 95% interval over samples (Wilson for yes/no
    outcomes, else a bootstrap over samples; samples where a measure is undefined left out)."""
    rows = []
    for key, cell in frame.group_by(["model", "task", "length"], maintain_order=True):
        row = dict(zip(["model", "task", "length"], key))
        for measure in measures:
            values = cell[measure].drop_nulls().to_list()
            low, high = mean_interval(values, measure in BINARY) if values else (None, None)
            row.update({f"{measure}_low": low, f"{measure}_high": high})
        rows.append(row)
    return pl.DataFrame(rows, schema_overrides={f"{m}_{e}": pl.Float64 for m in measures for e in ("low", "high")})


def realistic_table(paths, models: dict[str, dict]) -> pl.DataFrame:
    """models: registry name -> entry (its hub path finds the paper's numbers)."""
    frame = predictions(paths)
    measures = [c for c in dict.fromkeys(LOREM + GIT) if c in frame.columns]
    table = (frame.group_by(["model", "task", "length"], maintain_order=True)
             .agg(*(pl.col(c).cast(pl.Float64).mean() for c in measures), pl.col("seed").n_unique().alias("seeds"),
                  pl.len().alias("samples")))
    table = table.join(_intervals(frame, measures), on=["model", "task", "length"], how="left")
    reference = [lorem_reference(models[m].get("path"), n) if t == "lorem" else None
                 for m, t, n in table.select("model", "task", "length").rows()]
    return table.with_columns(pl.Series("paper_unambiguous", [r[0] if r else None for r in reference], pl.Float64),
                              pl.Series("paper_ambiguous", [r[1] if r else None for r in reference], pl.Float64))


def realistic_markdown(table: pl.DataFrame, pairs: pl.DataFrame, provenance: dict) -> str:
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
              "Intervals (the `_low` / `_high` columns of the parquet table): 95% over samples. The paper's findings "
              "on the same samples, over every length (`realistic_pairs.md` has each length):", "",
              *(pair_lines(pairs) or ["(nothing to compare)"]), "",
              f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(parts)


# (first, second) of each comparison, the paper's expectation first: per task, the measures compared.
LOREM_PAIRS = (("greedy", "unambiguous", "ambiguous"), ("teacher_forced", "tf_unambiguous", "tf_ambiguous"))
GIT_MEASURES = (("exact", True), ("line_share", False), ("tf_token_accuracy", False), ("tf_line_start", False))


def realistic_pairs(frame: pl.DataFrame) -> pl.DataFrame:
    """The paper's two realistic findings on the same samples, per model, per length and over all
    lengths: copying after unambiguous tokens against after ambiguous ones (each sample scores
    both), and revert against cherry-pick (both tasks see the same histories and demonstrations)."""
    rows = []
    for (model,), of_model in frame.group_by(["model"], maintain_order=True):
        lorem = of_model.filter(pl.col("task") == "lorem")
        for length, cell in _by_length(lorem):
            for measure, first, second in LOREM_PAIRS:
                both = cell.filter(pl.col(first).is_not_null() & pl.col(second).is_not_null())
                if both.height:
                    rows.append({"model": model, "task": "lorem", "length": length, "first": first,
                                 "second": second, "measure": measure,
                                 **paired_comparison(both[first].to_list(), both[second].to_list(), False,
                                                     above="unambiguous above", below="ambiguous above").row()})
        git = of_model.filter(pl.col("task").is_in(["revert", "cherrypick"]))
        if set(git["task"].unique()) != {"revert", "cherrypick"}:
            continue
        keys = ["length", "seed", "example"]
        paired = (git.filter(pl.col("task") == "revert").select(*keys, *(pl.col(m).alias(f"revert_{m}")
                                                                        for m, _ in GIT_MEASURES))
                  .join(git.filter(pl.col("task") == "cherrypick").select(
                      *keys, *(pl.col(m).alias(f"cherrypick_{m}") for m, _ in GIT_MEASURES)), on=keys))
        for length, cell in _by_length(paired):
            for measure, binary in GIT_MEASURES:
                both = cell.filter(pl.col(f"revert_{measure}").is_not_null()
                                   & pl.col(f"cherrypick_{measure}").is_not_null())
                if both.height:
                    rows.append({"model": model, "task": "git", "length": length, "first": "revert",
                                 "second": "cherrypick", "measure": measure,
                                 **paired_comparison(both[f"revert_{measure}"].to_list(),
                                                     both[f"cherrypick_{measure}"].to_list(), binary,
                                                     above="revert above", below="cherry-pick above").row()})
    return pl.DataFrame(rows, schema_overrides={"p": pl.Float64, "length": pl.String})


def _by_length(frame: pl.DataFrame):
    """Each length's rows, then all of them ("all")."""
    for length in sorted(frame["length"].unique().to_list()) if frame.height else []:
        yield str(length), frame.filter(pl.col("length") == length)
    if frame.height:
        yield "all", frame


def pair_lines(pairs: pl.DataFrame) -> list[str]:
    """One line per model, task and measure over all lengths: the two means, intervals and verdict."""
    lines = []
    for row in pairs.filter(pl.col("length") == "all").iter_rows(named=True):
        lines.append(f"- {row['model']}, {row['task']} {row['measure']}: {row['first']} {row['first_value']:.2f} "
                     f"{interval_text(row['first_low'], row['first_high'])} vs {row['second']} "
                     f"{row['second_value']:.2f} {interval_text(row['second_low'], row['second_high'])} "
                     f"({row['test']}, n = {row['pairs']}): {row['verdict']}.")
    return lines


def write_realistic_table(paths, pairs_path, models: dict[str, dict], provenance: Provenance, outputs) -> None:
    table = realistic_table(paths, models)
    provenance = provenance.record()
    write_table(table, outputs, provenance,
                markdown=realistic_markdown(table, read_frame(pairs_path), provenance))


def write_realistic_pairs(paths, provenance: Provenance, outputs) -> None:
    write_table(realistic_pairs(predictions(paths)), outputs, provenance.record(),
                title="Realistic tasks: unambiguous against ambiguous, revert against cherry-pick, on the same "
                      "samples (95% intervals, paired tests)")
