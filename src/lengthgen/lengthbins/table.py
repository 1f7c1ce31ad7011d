"""Length-bin tables of any trained models (from scratch, fine-tuned): accuracy per (system, task,
bin) as mean and spread over seeds, beside the theory and the mirror task, and the verdict on the
theory's split. `system` is what was trained: a positional encoding or a model name."""

from __future__ import annotations

import polars as pl

from ..results.files import read_frame
from ..tasks import FAMILIES, MIRROR_PAIRS, get_task
from ..tasks.theory import theory_table

EVAL_COLUMNS = ["system", "task", "seed", "bin", "length", "teacher_forced", "greedy"]


def read_evals(eval_paths) -> pl.DataFrame:
    """The per-example columns the tables need, read once from every evaluation file."""
    return pl.concat([read_frame(p, columns=EVAL_COLUMNS) for p in eval_paths])


def per_run_accuracy(evals: pl.DataFrame) -> pl.DataFrame:
    """One row per (system, task, seed, bin): the share of examples right."""
    return evals.group_by(["system", "task", "seed", "bin"]).agg(
        pl.col("teacher_forced").mean(), pl.col("greedy").cast(pl.Float64).mean())


def bin_table(results: pl.DataFrame, bins: dict[str, list[str]], reference=None) -> pl.DataFrame:
    """Mean and spread over seeds per (system, task, bin), with the theory prediction, the mirror task
    and the paper's number where it reports one.

    results: one row per (system, task, seed, bin) with teacher_forced and greedy accuracy;
    bins: the bins of each task family, in order (the last is the family's longest bin);
    reference: (system, task, bin) -> the paper's accuracy or None.
    """
    per_cell = results.group_by(["system", "task", "bin"]).agg(
        pl.col("teacher_forced").mean().alias("accuracy"),
        pl.col("teacher_forced").std().alias("accuracy_std"),
        pl.col("greedy").mean().alias("greedy_accuracy"),
        pl.len().alias("seeds"),
    )
    theory = theory_table().select("task", "family", "mirror", pl.col("c_rasp_pos").alias("predicted_to_generalise"))
    table = per_cell.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), "system", "bin", pl.col("accuracy").alias("mirror_accuracy"))
    table = table.join(mirror, on=["mirror", "system", "bin"], how="left")
    task_order = {t: i for i, t in enumerate(t for pair in MIRROR_PAIRS for t in reversed(pair))}
    bin_order = pl.struct("family", "bin").map_elements(lambda r: bins[r["family"]].index(r["bin"]),
                                                        return_dtype=pl.Int32)
    return (table.with_columns(bin_order.alias("_bin"),
                               pl.col("task").replace_strict(task_order, return_dtype=pl.Int32).alias("_task"))
            .sort(["system", "_task", "_bin"]).drop("_bin", "_task")
            .select("system", "task", "family", "bin", "accuracy", "accuracy_std", "greedy_accuracy", "seeds",
                    "predicted_to_generalise", "mirror", "mirror_accuracy")
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


def theory_split(table: pl.DataFrame, bins: dict[str, list[str]], tolerance: float = 0.1) -> list[str]:
    """What contradicts the theory on each family's longest bin: an inexpressible task at or above an
    expressible one of its family, or an expressible mirror pair further apart than `tolerance`.
    Empty = the split holds."""
    problems = []
    for (system, family), cell in table.group_by(["system", "family"], maintain_order=True):
        cell = cell.filter(pl.col("bin") == bins[family][-1])
        expressible = cell.filter(pl.col("predicted_to_generalise"))
        inexpressible = cell.filter(~pl.col("predicted_to_generalise"))
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
    """"0.93 ± 0.02" over seeds (just the mean with one seed), and "(paper 0.97)" where it reports one."""
    std = row["accuracy_std"]
    text = f"{row['accuracy']:.2f}" if std is None else f"{row['accuracy']:.2f} ± {std:.2f}"
    return text if row.get("paper") is None else f"{text} (paper {row['paper']:.2f})"


def bin_markdown(table: pl.DataFrame, bins: dict[str, list[str]], provenance: dict, title: str,
                 system_label: str) -> str:
    """Per family: accuracy per bin (mean ± std over seeds), mirror pairs on adjacent rows; then the verdict."""
    lines = [f"# {title}: teacher-forced exact match per length bin (mean ± std over seeds)", "",
             "The first bin of each family is in distribution. Greedy-decoding accuracy is in the parquet table."]
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
            expressible = "yes" if rows["predicted_to_generalise"][0] else "no"
            lines.append(f"| {system} | {task} | {expressible} | " + " | ".join(cells) + " |")
    problems = theory_split(table, bins)
    longest = ", ".join(f"{f} {b[-1]}" for f, b in bins.items())
    lines += ["", f"Theory split on the longest bins ({longest}): "
              + ("holds (every expressible task above every inexpressible one of its family; "
                 "expressible mirror pairs within 0.1)." if not problems else "does NOT hold: " + "; ".join(problems)),
              "", f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(lines)
