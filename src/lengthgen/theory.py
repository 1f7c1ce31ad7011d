"""The theory table: what C-RASP[pos] predicts for each task (SPEC section 1)."""

from __future__ import annotations

import polars as pl

from .tasks import TASKS


def theory_table(task_names=None) -> pl.DataFrame:
    names = task_names or list(TASKS)
    tasks = [TASKS[n] for n in names]
    return pl.DataFrame({
        "task": [t.name for t in tasks],
        "family": [t.family for t in tasks],
        "direction": [t.direction for t in tasks],
        "bias": ["induction" if t.induction else "anti-induction" for t in tasks],
        "uniqueness": ["unique" if t.unique else "non-unique" for t in tasks],
        "occurrence": [t.occurrence or "" for t in tasks],
        "mirror": [t.mirror for t in tasks],
        "c_rasp_pos": [t.expressible for t in tasks],
        "predicted_to_length_generalise": [t.predicted_to_generalise for t in tasks],
        "reason": [t.reason for t in tasks],
    })
