"""The corpus experiment's pairs table: every comparison finding 7 judges, the pretraining seed the
unit. Each arm (a corpus) holds one model per pretraining seed; each model gives one value per
measure (over the same prompts or examples as every other model) with its standard error, and two
arms are compared over their models (`stats.runs_comparison`: Welch's t; one model an arm, a z
test on the models' own errors, which says it measured no between-seed variation).

- MANIPULATION: the balanced and backward-only models continue reversed copies (the manipulation
  check, `manipulation.py`) better than the natural ones: without it the corpus did not take;
- PREFERENCE: the corpus x direction interaction: each model's forward minus backward (copy
  continuation, teacher-forced copying in context, best induction minus best anti-induction head),
  natural's wider than balanced's and backward-only's;
- CONTROL: the reversed models' forward minus backward above 0 (the language flipped, the repeats not);
- HEAD_START: fine-tuned alike, the balanced models ahead of the natural ones on UB, and ahead of the
  forward-only ones (what the reversed copies give beyond any extra copying), per test bin, and
  along the learning curve (`curves.py`: fewer steps to reach the in-distribution accuracy, and
  ahead beyond training at fixed steps);
- UNCHANGED: the balanced models where the natural ones are on the forward tasks (UR, UF), a claim
  of no change judged against an equivalence margin (the findings' `margin`);
- EXTRA_COPYING and OTHER_TASKS (no claim): forward-only and backward-only against natural on UB,
  and the balanced models on UL, a retrieval task the insertions do not resemble: whether a head
  start is contamination by copies that look like the task.

A stage that did not run, or an arm a comparison needs that the config does not name, gives no rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..lengthbins.table import COMPARISON_SCHEMA
from ..mechanism.tables import best_head
from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import write_table
from ..stats import rank_comparison, runs_comparison, wilson_error
from . import curves as curve_measures
from . import finetuned, heads, incontext, manipulation

MANIPULATION = "the corpus's reversed copies were learnt"
PREFERENCE = "the induction preference narrows with the corpus"
CONTROL = "reversed keeps the induction preference"
HEAD_START = "balanced gives backward tasks a head start"
UNCHANGED = "balanced leaves the forward tasks as they were"
EXTRA_COPYING = "what any extra copying gives (no claim)"
OTHER_TASKS = "balanced on tasks unlike its copies (no claim)"

NATURAL, BALANCED, REVERSED, FORWARD_ONLY, BACKWARD_ONLY = "natural", "balanced", "reversed", "forward-only", "backward-only"
TAKERS = (BALANCED, BACKWARD_ONLY)  # the arms whose corpora hold reversed copies
# the measures in both directions: (name in the table, what forward and backward are)
COPY, IN_CONTEXT, HEADS = "copy continuation", "tf_symbol_accuracy", "best head score"
BACKWARD_TASK, FORWARD_MIRROR = "UB", "UF"
FORWARD_TASKS = ("UR", "UF")  # the balanced models should leave these where the natural ones are
OTHER = ("UL",)  # a fine-tuned task the balanced model is compared on without a claim
# UB's comparisons (claim, first arm, second arm), on the test bins and along the learning curve
UB_PLANS = ((HEAD_START, BALANCED, NATURAL), (HEAD_START, BALANCED, FORWARD_ONLY),
            (EXTRA_COPYING, FORWARD_ONLY, NATURAL), (EXTRA_COPYING, BACKWARD_ONLY, NATURAL))
# the learning curve's measures (`curves.py`)
STEPS = "steps to reach in distribution"
AT_STEP = "beyond training at step {step}"

SCHEMA = {
    "comparison": pl.String, "model": pl.String, "first": pl.String, "second": pl.String, "measure": pl.String,
    "task": pl.String, "bin": pl.String, "beyond_training": pl.Boolean, **COMPARISON_SCHEMA,
}


@dataclass(frozen=True)
class Directions:
    """One model's measure in both directions on the same units (prompts or examples, in order)."""

    forward: np.ndarray
    backward: np.ndarray

    def value(self, which: str) -> tuple[float, float]:
        """(mean over the units, its standard error) of "forward", "backward" or "gap" (forward
        minus backward, unit by unit)."""
        values = {"forward": self.forward, "backward": self.backward, "gap": self.forward - self.backward}[which]
        error = float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0
        return float(np.mean(values)), error


def _read(paths, columns=None) -> pl.DataFrame | None:
    paths = list(paths or [])
    return pl.concat([read_frame(p, columns=columns) for p in paths]) if paths else None


def head_directions(frame: pl.DataFrame, model: str) -> Directions | None:
    """The best induction head's score on each forward prompt and the best anti-induction head's on
    its backward twin, on the prompts both were scored on."""
    rows = heads.of_model(frame, model)
    if not rows.height:
        return None
    (_, forward), (_, backward) = best_head(rows, "forward"), best_head(rows, "backward")
    prompts = sorted(set(forward) & set(backward))
    return Directions(np.array([forward[k] for k in prompts]), np.array([backward[k] for k in prompts]))


def icl_directions(examples: pl.DataFrame, model: str) -> Directions | None:
    """Teacher-forced symbol accuracy of forward (UF) and backward (UB) copy in context, per example
    (its prompt variants averaged; the two tasks share their inputs)."""
    keys = ["bin", "seed", "example"]
    sides = [examples.filter((pl.col("model") == model) & (pl.col("task") == task)).group_by(keys)
             .agg(pl.col("tf_symbol_accuracy").mean().alias(task)) for task in (FORWARD_MIRROR, BACKWARD_TASK)]
    paired = sides[0].join(sides[1], on=keys).sort(keys)
    if not paired.height:
        return None
    return Directions(paired[FORWARD_MIRROR].to_numpy(), paired[BACKWARD_TASK].to_numpy())


def copy_directions(frame: pl.DataFrame, model: str) -> Directions | None:
    """The manipulation check's copy continuation accuracy, forward and reversed, per example."""
    rows = frame.filter(pl.col("model") == model)
    sides = [rows.filter(pl.col("direction") == d).select("example", pl.col("accuracy").alias(d))
             for d in manipulation.DIRECTIONS]
    paired = sides[0].join(sides[1], on="example").sort("example")
    if not paired.height:
        return None
    return Directions(paired["forward"].to_numpy(), paired["backward"].to_numpy())


def finetuned_accuracy(evals: pl.DataFrame, model: str, task: str, length_bin: str) -> tuple[float, float] | None:
    """A model's teacher-forced exact match on a task's test bin after the short fine-tuning, over its
    fine-tuning seeds' examples, with the standard error of Wilson's interval."""
    rows = evals.filter((pl.col("system") == model) & (pl.col("task") == task) & (pl.col("bin") == length_bin))
    if not rows.height:
        return None
    right, trials = int(rows["teacher_forced"].sum()), rows.height
    return right / trials, wilson_error(right, trials)


def _compare(comparison: str, name: str, first: str, second: str, measure: str, first_runs, second_runs,
             bounds, task=None, length_bin="all", beyond=None, censored_at: float | None = None) -> dict:
    """One row: the arms' comparison, and each arm's models' own values (its pretraining seeds, in the
    arm's order), so that a reader sees what the mean and the interval are made of. `censored_at`:
    the values stop there ("never reached"), so the test is on ranks, never a t test."""
    above, below = f"{first} above", f"{second} above"
    if censored_at is None:
        result = runs_comparison(first_runs, second_runs, above, below, bounds)
    else:
        result = rank_comparison([v for v, _ in first_runs], [v for v, _ in second_runs], censored_at, above, below)
    return {"comparison": comparison, "model": name, "first": first, "second": second, "measure": measure,
            "task": task, "bin": length_bin, "beyond_training": beyond, **result.row()}


def direction_rows(measures: dict[str, dict[str, list[Directions]]]) -> list[dict]:
    """MANIPULATION (copy continuation only), PREFERENCE and CONTROL from each measure's per-arm
    directions (measure -> arm -> one Directions per model, arms without the measure left out)."""
    rows = []
    for measure, arms in measures.items():
        def runs(arm, which, arms=arms):
            return [d.value(which) for d in arms.get(arm, [])]

        if measure == COPY and arms.get(NATURAL):
            rows += [_compare(MANIPULATION, f"{arm} vs {NATURAL}", f"reversed copies on {arm}",
                              f"reversed copies on {NATURAL}", measure, runs(arm, "backward"), runs(NATURAL, "backward"),
                              (0.0, 1.0)) for arm in TAKERS if arms.get(arm)]
        if arms.get(NATURAL):
            rows += [_compare(PREFERENCE, f"{NATURAL} vs {arm}", f"{NATURAL}: forward minus backward",
                              f"{arm}: forward minus backward", measure, runs(NATURAL, "gap"), runs(arm, "gap"),
                              (-1.0, 1.0)) for arm in TAKERS if arms.get(arm)]
            if arms.get(FORWARD_ONLY):
                rows.append(_compare(EXTRA_COPYING, f"{FORWARD_ONLY} vs {NATURAL}",
                                     f"{FORWARD_ONLY}: forward minus backward", f"{NATURAL}: forward minus backward",
                                     measure, runs(FORWARD_ONLY, "gap"), runs(NATURAL, "gap"), (-1.0, 1.0)))
        if measure != COPY and arms.get(REVERSED):  # the check's text is natural: not the reversed model's language
            rows.append(_compare(CONTROL, REVERSED, f"forward on {REVERSED}", f"backward on {REVERSED}", measure,
                                 runs(REVERSED, "gap"), None, (-1.0, 1.0)))
    return rows


def finetune_rows(evals: pl.DataFrame, roles: dict[str, list[str]]) -> list[dict]:
    """HEAD_START on UB (balanced against natural and against forward-only), EXTRA_COPYING (forward-
    and backward-only against natural on UB), UNCHANGED (UR, UF) and OTHER_TASKS (UL), per test bin,
    over the arms' models."""
    plans = [(*plan, (BACKWARD_TASK,)) for plan in UB_PLANS] + [
        (UNCHANGED, BALANCED, NATURAL, FORWARD_TASKS), (OTHER_TASKS, BALANCED, NATURAL, OTHER)]
    rows = []
    for comparison, first, second, tasks in plans:
        if not (roles.get(first) and roles.get(second)):
            continue
        for task in tasks:
            bins = finetuned.bins_of(evals, task)
            for length_bin in bins:
                sides = [[r for m in roles[arm] if (r := finetuned_accuracy(evals, m, task, length_bin))]
                         for arm in (first, second)]
                if all(sides):
                    rows.append(_compare(comparison, f"{first} vs {second}", f"{task} on {first}", f"{task} on {second}",
                                         "teacher_forced", *sides, (0.0, 1.0), task, length_bin, length_bin != bins[0]))
    return rows


def curve_rows(curves: list[curve_measures.Curve], roles: dict[str, list[str]], reach: float,
               steps: list[int]) -> list[dict]:
    """UB's learning curves, the arms as `finetune_rows` pairs them on UB: steps to `reach` in
    distribution (the first arm named expected to need fewer: the row's first side is the other;
    each model's value the mean over its fine-tuning runs, "never" at one evaluation past the last
    step; tested on the models' ranks, "never" last), and the first bin beyond training at each of
    `steps`."""
    runs = [c for c in curves if c.task == BACKWARD_TASK]
    if not runs:
        return []
    last = max(c.max_steps + c.eval_every for c in runs)
    rows = []
    for comparison, first, second in UB_PLANS:
        if not (roles.get(first) and roles.get(second)):
            continue
        name = f"{first} vs {second}"

        def measured(arm, measure, *args):
            return [r for m in roles[arm] if (r := measure(runs, m, BACKWARD_TASK, *args))]

        sides = [measured(arm, curve_measures.steps_to_reach, reach) for arm in (second, first)]
        if all(sides):
            rows.append(_compare(comparison, name, f"steps to {reach} on {second}", f"steps to {reach} on {first}",
                                 STEPS, *sides, (0.0, last), BACKWARD_TASK, runs[0].train_lengths, False,
                                 censored_at=last))
        for step in steps:
            sides = [measured(arm, curve_measures.beyond_at_step, step) for arm in (first, second)]
            if all(sides):
                rows.append(_compare(comparison, name, f"{BACKWARD_TASK} on {first} at step {step}",
                                     f"{BACKWARD_TASK} on {second} at step {step}", AT_STEP.format(step=step),
                                     *sides, (0.0, 1.0), BACKWARD_TASK, runs[0].curve_lengths, True))
    return rows


def corpus_pairs(heads_paths, icl_paths, finetune_paths, manipulation_paths, roles: dict[str, list[str]],
                 history_paths=None, reach: float = 0.9, steps: tuple[int, ...] = ()) -> pl.DataFrame:
    """Every comparison of the corpus experiment (the module's list) from the mechanism stage's
    heads files, the in-context stage's prediction files, the fine-tuning stage's evaluation files
    and training histories, and the manipulation check's files, for the arms in `roles` (corpus ->
    its models, one per pretraining seed); any of them None or empty (its stage off): the rows the
    others give. Rows that pool every length have bin "all"."""
    measures: dict[str, dict[str, list[Directions]]] = {}
    readers = ((COPY, manipulation_paths, None, copy_directions), (IN_CONTEXT, icl_paths, incontext.COLUMNS, icl_directions),
               (HEADS, heads_paths, None, head_directions))
    for measure, paths, columns, directions in readers:
        if (frame := _read(paths, columns)) is not None:
            measures[measure] = {arm: found for arm, models in roles.items()
                                 if (found := [d for m in models if (d := directions(frame, m)) is not None])}
    rows = direction_rows(measures)
    if (evals := _read(finetune_paths, finetuned.COLUMNS)) is not None:
        rows += finetune_rows(evals, roles)
    rows += curve_rows(curve_measures.read_curves(history_paths), roles, reach, list(steps))
    return pl.DataFrame([{name: r.get(name, "all" if name == "bin" else None) for name in SCHEMA} for r in rows],
                        schema=SCHEMA)


def write_corpus_pairs(heads_paths, icl_paths, finetune_paths, manipulation_paths, history_paths,
                       section: dict, provenance: Provenance, outputs) -> None:
    """section: the rule's parameters (`plan.corpora.pairs_params`): roles, corpus -> its registry
    models (`corpora` in the config), and the short fine-tuning's settings."""
    curve = section["finetune"]
    write_table(corpus_pairs(heads_paths, icl_paths, finetune_paths, manipulation_paths, section["roles"],
                             history_paths, curve["reach"], tuple(curve["curve_steps"])), outputs,
                provenance.record(),
                title="Corpora: the arms compared over their pretraining seeds, on the same prompts and examples "
                      "(95% intervals; Welch's t over the seeds, a z test where an arm has one)")
