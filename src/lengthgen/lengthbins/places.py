"""Copying scored place by place: how often each output symbol is right, by the place in the source
string it copies. Why a model fails beyond its training lengths: a copy that finds each symbol by
matching (the induction or anti-induction rule) is right at every place; one that finds it by its
position is right only at the places it was trained on."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.tables import to_markdown
from ..stats import interval_text, wilson
from ..tasks import LengthBin, get_task

PLACE_EVAL_COLUMNS = ["system", "task", "seed", "bin", "target", "teacher_forced_prediction"]
PLACES_SCHEMA = {"system": pl.String, "task": pl.String, "place": pl.Int64, "beyond_training": pl.Boolean,
                 "symbols": pl.Int64, "right": pl.Int64, "accuracy": pl.Float64, "accuracy_low": pl.Float64,
                 "accuracy_high": pl.Float64}


def source_place(task_name: str, output_index: int, length: int) -> int:
    """The place (1 = first symbol of the source) that output symbol `output_index` (0-based) of a
    copy of `length` symbols reproduces: the same place forward, the mirrored one backward."""
    return output_index + 1 if get_task(task_name).induction else length - output_index


def read_copying_evals(eval_paths) -> pl.DataFrame:
    """The columns `place_accuracy` needs from the evaluation files of copying tasks (a retrieval
    file's target is one symbol, not a string: its files are left out)."""
    frames = [frame for frame in (read_frame(p, columns=PLACE_EVAL_COLUMNS) for p in eval_paths)
              if frame.height and get_task(frame["task"][0]).family == "copying"]
    return pl.concat(frames) if frames else pl.DataFrame(schema={c: pl.String for c in PLACE_EVAL_COLUMNS})


def place_accuracy(evals: pl.DataFrame, train_lengths: str) -> pl.DataFrame:
    """Per (system, copying task, source place): the share of output symbols right under teacher
    forcing, pooled over seeds and bins, with its Wilson interval; `beyond_training` for the places no
    training string reaches (train_lengths: the copying family's, e.g. "2-12")."""
    longest_trained = LengthBin.parse(train_lengths).high
    counts: dict[tuple, list[int]] = {}
    copying = evals.filter(pl.col("task").map_elements(lambda t: get_task(t).family == "copying",
                                                       return_dtype=pl.Boolean))
    for system, task, target, predicted in copying.select("system", "task", "target",
                                                          "teacher_forced_prediction").iter_rows():
        for index, symbol in enumerate(target):
            cell = counts.setdefault((system, task, source_place(task, index, len(target))), [0, 0])
            cell[0] += index < len(predicted) and predicted[index] == symbol
            cell[1] += 1
    rows = []
    for (system, task, place), (right, symbols) in sorted(counts.items()):
        low, high = wilson(right, symbols)
        rows.append({"system": system, "task": task, "place": place, "beyond_training": place > longest_trained,
                     "symbols": symbols, "right": right, "accuracy": right / symbols, "accuracy_low": low,
                     "accuracy_high": high})
    return pl.DataFrame(rows, schema=PLACES_SCHEMA)


def places_markdown(table: pl.DataFrame, bins: list[str], train_lengths: str, provenance: dict,
                    system_label: str = "model") -> str:
    """Per (system, task), the accuracy over the places of each test bin's range (the first: the
    trained places), with the 95% interval."""
    groups = [(LengthBin.parse(b).low if k else 1, LengthBin.parse(b).high) for k, b in enumerate(bins)]
    rows = []
    for (system, task), cell in table.group_by(["system", "task"], maintain_order=True):
        row = {system_label: system, "task": task}
        for low, high in groups:
            of_group = cell.filter(pl.col("place").is_between(low, high))
            right = int(of_group["right"].sum())
            symbols = int(of_group["symbols"].sum())
            row[f"places {low}-{high}"] = (f"{right / symbols:.2f} {interval_text(*wilson(right, symbols))}"
                                           if symbols else "")
        rows.append(row)
    return ("# Copying, place by place: teacher-forced accuracy of each output symbol by the place it copies\n\n"
            f"Output symbols pooled over every test bin and seed, grouped by their place in the source (training "
            f"strings: {train_lengths} symbols); 95% Wilson intervals. A copy found by matching symbols is "
            "right at every place; one found by position only where training reached. Per place in the "
            "parquet table.\n\n" + (to_markdown(pl.DataFrame(rows)) if rows else "(no copying task)\n")
            + f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}\n")
