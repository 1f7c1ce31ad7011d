"""The theory table: what C-RASP[pos] predicts for each task (docs/spec.md §1), with each task's program
(checked on the run's data by `theory_check`) or the paper's proof that it has none."""

from __future__ import annotations

import polars as pl

from ..records.provenance import Provenance
from .definitions import TASKS, Task


def theory_table(tasks: list[Task] | None = None) -> pl.DataFrame:
    tasks = list(TASKS.values()) if tasks is None else tasks
    return pl.DataFrame({
        "task": [t.name for t in tasks],
        "family": [t.family for t in tasks],
        "direction": [t.direction for t in tasks],
        "bias": ["induction" if t.induction else "anti-induction" for t in tasks],
        "uniqueness": ["unique" if t.unique else "non-unique" for t in tasks],
        "occurrence": [t.occurrence or "" for t in tasks],
        "mirror": [t.mirror for t in tasks],
        "expressible": [t.expressible for t in tasks],
        "reason": [t.reason for t in tasks],
        "program": [program_cell(t) for t in tasks],
    })


def program_cell(task: Task) -> str:
    """The task's program as the paper writes one, or why none exists."""
    if task.program is None:
        return f"none: {task.reason}"
    return f"{task.program.name}: {task.program}"


def write_theory_table(task_names: list[str], provenance: Provenance, outputs) -> None:
    from ..records.tables import write_table

    tasks = [TASKS[name] for name in task_names]
    write_table(theory_table(tasks), outputs, provenance.record(),
                title="Theory: which tasks C-RASP[pos] predicts to length-generalise")
