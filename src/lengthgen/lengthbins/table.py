"""Length-bin tables of any trained models (from scratch, fine-tuned): accuracy per (system, task,
bin) as mean and spread over seeds, beside the theory and the mirror task, and the verdict on the
theory's split. `system` is what was trained: a positional encoding or a model name."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.tables import to_markdown
from ..stats import interval_text, p_text, seed_level_accuracy, seed_level_comparison
from ..tasks import FAMILIES, MIRROR_PAIRS, TASK_NAMES, LengthBin, get_task
from ..tasks.datafile import read_examples
from ..tasks.lengths import bins_beyond
from ..tasks.theory import theory_table

EVAL_COLUMNS = ["system", "task", "seed", "bin", "length", "teacher_forced", "greedy"]
# How far apart an expressible mirror pair may be and still agree: the theory split's verdict and
# the findings' equivalence margin.
MIRROR_TOLERANCE = 0.1


def read_evals(eval_paths, columns=EVAL_COLUMNS) -> pl.DataFrame:
    """The per-example columns the tables need, read once from every evaluation file."""
    return pl.concat([read_frame(p, columns=columns) for p in eval_paths])


def outcomes_by_seed(cell: pl.DataFrame, measure: str, seeds: list | None = None) -> list[list[bool]]:
    """A cell's per-example outcomes, one list per seed (in `seeds`' order, else sorted)."""
    seeds = sorted(cell["seed"].unique().to_list()) if seeds is None else seeds
    return [cell.filter(pl.col("seed") == seed)[measure].to_list() for seed in seeds]


def accuracy_intervals(evals: pl.DataFrame) -> pl.DataFrame:
    """Per (system, task, bin), the 95% interval of teacher-forced exact match with the training run
    as the unit (`lengthgen.stats.seed_level_accuracy`: Wilson's over examples for one seed, the
    seed-level t interval for more)."""
    rows = []
    for (system, task, length_bin), cell in evals.group_by(["system", "task", "bin"], maintain_order=True):
        _, low, high = seed_level_accuracy(outcomes_by_seed(cell, "teacher_forced"))
        rows.append({"system": system, "task": task, "bin": length_bin, "examples": cell.height,
                     "accuracy_low": low, "accuracy_high": high})
    return pl.DataFrame(rows, schema={"system": pl.String, "task": pl.String, "bin": pl.String,
                                      "examples": pl.Int64, "accuracy_low": pl.Float64, "accuracy_high": pl.Float64})


def per_run_accuracy(evals: pl.DataFrame) -> pl.DataFrame:
    """One row per (system, task, seed, bin): the share of examples right."""
    return evals.group_by(["system", "task", "seed", "bin"]).agg(
        pl.col("teacher_forced").mean(), pl.col("greedy").cast(pl.Float64).mean())


def bin_table(results: pl.DataFrame, bins: dict[str, list[str]], reference=None,
              intervals: pl.DataFrame | None = None) -> pl.DataFrame:
    """Mean and spread over seeds per (system, task, bin), with the theory prediction, the mirror task
    and the paper's number where it reports one.

    results: one row per (system, task, seed, bin) with teacher_forced and greedy accuracy;
    bins: the bins of each task family, in order (the last is the family's longest bin);
    reference: (system, task, bin) -> the paper's accuracy or None;
    intervals: `accuracy_intervals` of the examples (examples and a 95% interval per cell), or None.
    """
    per_cell = results.group_by(["system", "task", "bin"]).agg(
        pl.col("teacher_forced").mean().alias("accuracy"),
        pl.col("teacher_forced").std().alias("accuracy_std"),
        pl.col("greedy").mean().alias("greedy_accuracy"),
        pl.len().alias("seeds"),
    )
    theory = theory_table().select("task", "family", "mirror", "expressible")
    table = per_cell.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), "system", "bin", pl.col("accuracy").alias("mirror_accuracy"))
    table = table.join(mirror, on=["mirror", "system", "bin"], how="left")
    spread = []
    if intervals is not None:
        table = table.join(intervals, on=["system", "task", "bin"], how="left")
        spread = ["examples", "accuracy_low", "accuracy_high"]
    task_order = {t: i for i, t in enumerate(t for pair in MIRROR_PAIRS for t in reversed(pair))}
    bin_order = pl.struct("family", "bin").map_elements(lambda r: bins[r["family"]].index(r["bin"]),
                                                        return_dtype=pl.Int32)
    return (table.with_columns(bin_order.alias("_bin"),
                               pl.col("task").replace_strict(task_order, return_dtype=pl.Int32).alias("_task"))
            .sort(["system", "_task", "_bin"]).drop("_bin", "_task")
            .select("system", "task", "family", "bin", "accuracy", "accuracy_std", *spread, "greedy_accuracy",
                    "seeds", "expressible", "mirror", "mirror_accuracy")
            .with_columns(pl.struct("system", "task", "bin").map_elements(
                lambda r: reference(r["system"], r["task"], r["bin"]) if reference else None,
                return_dtype=pl.Float64).alias("paper")))


def accuracy_by_length(evals: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per (system, task, length): mean over seeds of each seed's share right at that length."""
    per_seed = evals.group_by(["system", "task", "seed", "length"]).agg(
        pl.col("teacher_forced").mean(), pl.col("greedy").cast(pl.Float64).mean(), pl.len().alias("examples"))
    return per_seed.group_by(["system", "task", "length"]).agg(
        pl.col("teacher_forced").mean().alias("accuracy"), pl.col("teacher_forced").std().alias("accuracy_std"),
        pl.col("greedy").mean().alias("greedy_accuracy"), pl.col("examples").sum(), pl.len().alias("seeds"),
    ).sort(["system", "task", "length"])


def theory_split(table: pl.DataFrame, bins: dict[str, list[str]], tolerance: float = MIRROR_TOLERANCE) -> list[str]:
    """What contradicts the theory on each family's longest bin: an inexpressible task at or above an
    expressible one of its family, or an expressible mirror pair further apart than `tolerance`.
    Empty = the split holds."""
    problems = []
    for (system, family), cell in table.group_by(["system", "family"], maintain_order=True):
        cell = cell.filter(pl.col("bin") == bins[family][-1])
        expressible = cell.filter(pl.col("expressible"))
        inexpressible = cell.filter(~pl.col("expressible"))
        if expressible.height and inexpressible.height:
            low = expressible.sort("accuracy").row(0, named=True)
            high = inexpressible.sort("accuracy").row(-1, named=True)
            if low["accuracy"] <= high["accuracy"]:
                problems.append(f"{system}: {low['task']} ({low['accuracy']:.2f}) is not above "
                                f"{high['task']} ({high['accuracy']:.2f})")
        for row in expressible.iter_rows(named=True):
            if row["mirror_accuracy"] is None or not get_task(row["task"]).induction:
                continue
            gap = abs(row["accuracy"] - row["mirror_accuracy"])
            if gap > tolerance:
                problems.append(f"{system}: {row['task']} and {row['mirror']} differ by {gap:.2f}")
    return problems


def _mean_spread(row: dict) -> str:
    """"0.93 ± 0.02" over seeds (just the mean with one seed), the 95% interval over examples where
    the table has one, and "(paper 0.97)" where the paper reports one."""
    std = row["accuracy_std"]
    text = f"{row['accuracy']:.2f}" if std is None else f"{row['accuracy']:.2f} ± {std:.2f}"
    if row.get("accuracy_low") is not None:
        text += f" {interval_text(row['accuracy_low'], row['accuracy_high'])}"
    return text if row.get("paper") is None else f"{text} (paper {row['paper']:.2f})"


def bin_markdown(table: pl.DataFrame, bins: dict[str, list[str]], provenance: dict, title: str,
                 system_label: str, pairs_name: str = "") -> str:
    """Per family: accuracy per bin (mean ± std over seeds), mirror pairs on adjacent rows; then the verdict."""
    lines = [f"# {title}: teacher-forced exact match per length bin (mean ± std over seeds)", "",
             "The first bin of each family is in distribution. Greedy-decoding accuracy is in the parquet table."]
    if "accuracy_low" in table.columns:
        lines[-1] += (" Brackets: the 95% interval with the training run as the unit (Wilson's over examples for "
                      "one seed, a t interval over seeds for more); the tests of each pair of tasks are in "
                      f"`{pairs_name}.md`.")
    for family in FAMILIES:
        rows_of_family = table.filter(pl.col("family") == family)
        if rows_of_family.is_empty():
            continue
        family_bins = bins[family]
        lines += ["", f"## {family}", "", f"| {system_label} | task | C-RASP[pos] | " + " | ".join(family_bins) + " |",
                  "|---|---|---|" + "---|" * len(family_bins)]
        for (system, task), rows in rows_of_family.group_by(["system", "task"], maintain_order=True):
            by_bin = {r["bin"]: r for r in rows.iter_rows(named=True)}
            cells = [_mean_spread(by_bin[b]) if b in by_bin else "" for b in family_bins]
            expressible = "yes" if rows["expressible"][0] else "no"
            lines.append(f"| {system} | {task} | {expressible} | " + " | ".join(cells) + " |")
    problems = theory_split(table, bins)
    longest = ", ".join(f"{f} {b[-1]}" for f, b in bins.items())
    lines += ["", f"Theory split on the longest bins ({longest}): "
              + ("holds (every expressible task above every inexpressible one of its family; "
                 f"expressible mirror pairs within {MIRROR_TOLERANCE})." if not problems
                 else "does NOT hold: " + "; ".join(problems)),
              "", f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(lines)


# -- paired comparisons ---------------------------------------------------------------------------
PAIR_EVAL_COLUMNS = EVAL_COLUMNS + ["example"]
INPUT_COLUMNS = ["task", "seed", "bin", "example", "context", "query"]
MEASURES = (("teacher_forced", "teacher-forced exact match"), ("greedy", "greedy exact match"))


# The columns of one comparison of two accuracies (what the pairs tables hold after their keys).
COMPARISON_SCHEMA = {
    "test": pl.String, "pairs": pl.Int64, "first_value": pl.Float64, "first_low": pl.Float64,
    "first_high": pl.Float64, "second_value": pl.Float64, "second_low": pl.Float64, "second_high": pl.Float64,
    "difference": pl.Float64, "p": pl.Float64, "significant": pl.Boolean, "verdict": pl.String,
    "first_examples": pl.Int64, "second_examples": pl.Int64, "difference_low": pl.Float64,
    "difference_high": pl.Float64, "seeds": pl.Int64, "seeds_first_above": pl.Int64,
    "seeds_second_above": pl.Int64, "pooled_p": pl.Float64, "pooled_low": pl.Float64, "pooled_high": pl.Float64,
    "first_per_seed": pl.List(pl.Float64), "second_per_seed": pl.List(pl.Float64), "spread": pl.Float64,
    "df": pl.Int64,
}
PAIRS_SCHEMA = {
    "system": pl.String, "family": pl.String, "bin": pl.String, "comparison": pl.String, "first": pl.String,
    "second": pl.String, "measure": pl.String, **COMPARISON_SCHEMA, "beyond_training": pl.Boolean,
}


def read_inputs(data_paths) -> pl.DataFrame:
    """Each evaluated example's input (context and query), read from the data files, so a comparison
    knows whether two tasks were asked the same examples."""
    return pl.concat([pl.from_arrow(read_examples(p, columns=INPUT_COLUMNS)) for p in data_paths])


def comparisons(tasks: set[str]) -> list[tuple[str, str, str]]:
    """(first, second, kind) of every comparison the theory makes among `tasks`, the side expected
    higher (or, for a mirror pair, the right/forward task) first: each mirror pair, and each
    expressible task against each inexpressible one of its family."""
    pairs = [(right, left, "mirror pair") for left, right in MIRROR_PAIRS if left in tasks and right in tasks]
    for family in FAMILIES:
        of_family = [get_task(t) for t in TASK_NAMES if t in tasks and get_task(t).family == family]
        pairs += [(high.name, low.name, "expressible above inexpressible") for high in of_family if high.expressible
                  for low in of_family if not low.expressible]
    return pairs


def _same_inputs(inputs: pl.DataFrame | None, first: pl.DataFrame, second: pl.DataFrame) -> bool:
    """Whether the two tasks' examples are the same inputs, index for index (mirror tasks of the
    controlled generator are; the authors' unique retrieval places the query one position apart)."""
    keys = ["seed", "example"]
    if inputs is None or first.height != second.height:
        return False
    joined = first.select(keys).join(second.select(keys), on=keys)
    if joined.height != first.height:
        return False
    length_bin = first["bin"][0]
    side = lambda task: inputs.filter((pl.col("task") == task) & (pl.col("bin") == length_bin)).select(
        *keys, pl.col("context").alias(f"context_{task}"), pl.col("query").alias(f"query_{task}"))
    a, b = first["task"][0], second["task"][0]
    both = joined.join(side(a), on=keys).join(side(b), on=keys)
    return both.height == first.height and both.select(
        ((pl.col(f"context_{a}") == pl.col(f"context_{b}")) & (pl.col(f"query_{a}") == pl.col(f"query_{b}"))).all()
    ).item()


def beyond_training(length_bin: str, train_lengths: str) -> bool:
    """Whether a test bin lies wholly beyond the training lengths (out of distribution)."""
    return bool(bins_beyond([length_bin], train_lengths))


def bin_pairs(evals: pl.DataFrame, inputs: pl.DataFrame | None = None,
              train_lengths: dict[str, str] | str | None = None) -> pl.DataFrame:
    """Per system, bin and comparison (`comparisons`), the two tasks' accuracies with the training
    run (seed) as the unit (`lengthgen.stats.seed_level_comparison`): with several seeds, means over
    seeds with t intervals and a t test on the seeds' differences; with one, each accuracy's Wilson
    interval, the difference's Newcombe interval, and McNemar's test on the same examples where the
    two tasks were asked the same inputs (paired by seed and index), else Fisher's. Beside them, the
    pooled test and interval and how many seeds lean each way. Only seeds both tasks ran are
    compared. Teacher-forced exact match, and greedy where it was scored.

    evals: the per-example rows (PAIR_EVAL_COLUMNS); inputs: `read_inputs` of their data files
    (None: nothing is paired); train_lengths: family -> the training lengths ("3-20"), or one for
    every family, which mark each bin `beyond_training` (null without them)."""
    if isinstance(train_lengths, str):
        train_lengths = dict.fromkeys(FAMILIES, train_lengths)
    rows = []
    for (system,), of_system in evals.group_by(["system"], maintain_order=True):
        bins = sorted(of_system["bin"].unique().to_list(), key=lambda b: (LengthBin.parse(b).high, b))
        for first, second, kind in comparisons(set(of_system["task"])):
            for length_bin in bins:
                a = of_system.filter((pl.col("task") == first) & (pl.col("bin") == length_bin)).sort("seed", "example")
                b = of_system.filter((pl.col("task") == second) & (pl.col("bin") == length_bin)).sort("seed", "example")
                if not a.height or not b.height:
                    continue
                seeds = sorted(set(a["seed"]) & set(b["seed"]))
                a, b = (side.filter(pl.col("seed").is_in(seeds)) for side in (a, b))
                if not seeds:
                    continue
                paired = _same_inputs(inputs, a, b)
                family = get_task(first).family
                outside = beyond_training(length_bin, train_lengths[family]) if train_lengths else None
                for measure, _ in MEASURES:
                    if a[measure].null_count() or b[measure].null_count():
                        continue  # not scored (greedy decoding off)
                    rows.append({"system": system, "family": family, "bin": length_bin, "beyond_training": outside,
                                 "comparison": kind, "first": first, "second": second, "measure": measure,
                                 **seed_level_comparison(outcomes_by_seed(a, measure, seeds),
                                                         outcomes_by_seed(b, measure, seeds), paired,
                                                         f"{first} above", f"{second} above").row()})
    return pl.DataFrame(rows, schema=PAIRS_SCHEMA) if rows else pl.DataFrame(schema=PAIRS_SCHEMA)


def _leaning(row: dict) -> str:
    """How the seeds lean: "3 of 3 seeds first above" (and the other way, where any does)."""
    text = f"{row['seeds_first_above']} of {row['seeds']} {row['first']} above"
    if row["seeds_second_above"]:
        text += f", {row['seeds_second_above']} {row['second']} above"
    if row["seeds"] > 1:
        text += f"; pooled {p_text(row['pooled_p'])}"
    return text


def pairs_markdown(pairs: pl.DataFrame, title: str, system_label: str, provenance: dict) -> str:
    """The pairs table, one line per comparison with both accuracies, the difference and the test."""
    def cell(row, side):
        return f"{row[side]} {row[f'{side}_value']:.2f} {interval_text(row[f'{side}_low'], row[f'{side}_high'])}"

    shown = pl.DataFrame([{
        system_label: r["system"], "bin": r["bin"], "measure": r["measure"], "comparison": r["comparison"],
        "first": cell(r, "first"), "second": cell(r, "second"),
        "difference": f"{r['difference']:+.2f} {interval_text(r['difference_low'], r['difference_high'])}",
        "test": f"{r['test']}, {p_text(r['p'])}" + (f", {r['pairs']} pairs" if r["pairs"] is not None else
                                                      f", {r['first_examples']} / {r['second_examples']} examples"),
        "seeds": _leaning(r),
        "verdict": r["verdict"]} for r in pairs.iter_rows(named=True)])
    return (f"# {title}: pairs of tasks on each length bin (95% intervals, tests)\n\n"
            "The training run (seed) is the unit. With several seeds: each accuracy is the mean over seeds with "
            "its t interval, the difference (first minus second) the mean of the seeds' differences with its t "
            "interval, and the test a t test on those differences (its interval never narrower than the seeds' "
            "own sampling error); `pooled p` is what pooling every seed's examples as one sample would say. "
            "With one seed (between-seed variation not measured): Wilson intervals, Newcombe's for the "
            "difference, McNemar's exact test where both tasks were asked the same inputs (paired by seed and "
            "example), Fisher's exact test otherwise. `seeds`: how many seeds lean each way. A mirror pair puts "
            "the right/forward task first; the theory's split the expressible task.\n\n"
            + (to_markdown(shown) if shown.height else "(nothing to compare)\n")
            + f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}\n")
