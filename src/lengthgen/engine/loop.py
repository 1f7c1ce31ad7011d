"""Advancing runs to the end: several runs per process, interleaved or stacked.

Seeds and tasks can share a process (and, on a GPU, a device) instead of paying start-up and
idle time once per run; with `stack=True`, runs of one architecture share each step as well.
"""

from __future__ import annotations

from tqdm.auto import tqdm

from .run import TrainingRun
from .stacked import StackedRuns, stack_key


def train(runs: list[TrainingRun], progress: bool = True, stack: bool = False) -> list[TrainingRun]:
    """Advance every run until all are finished, interleaving their steps in this process.

    stack: runs of one architecture and settings advance together in one vmapped step
    (`StackedRuns`); the others still interleave. Each unit stepped here (a run or a stack) has
    `runs` and `step()`.
    """
    total = sum(r.settings.max_steps for r in runs)
    bar = tqdm(total=total, initial=sum(r.step_count for r in runs), disable=not progress,
               desc=", ".join(r.name for r in runs)[:60], unit="step", mininterval=2.0)
    active = [r for r in runs if not r.done]
    if stack:
        groups: dict[str, list[TrainingRun]] = {}
        for run in active:
            groups.setdefault(stack_key(run), []).append(run)
        active = [StackedRuns(group) if len(group) > 1 else group[0] for group in groups.values()]
    while active:
        for unit in list(active):
            members = list(unit.runs)  # a stack drops its finished runs while stepping
            before = [r.step_count for r in members]
            going = unit.step()
            for run, steps in zip(members, before):  # an early stop counts its skipped steps as done
                bar.update((run.settings.max_steps if run.done else run.step_count) - steps)
            if not going:
                active.remove(unit)
    bar.close()
    return runs
