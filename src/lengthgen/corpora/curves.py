"""What the corpus experiment reads of the short fine-tuning's learning curves (its runs' training
histories): measures that are not at a floor or ceiling when the bins' final accuracies are, per
model over its fine-tuning seeds, each with its standard error:

- the steps a run takes to reach an in-distribution accuracy (`reach`), known only to the
  evaluation interval: its error is that of a uniform rounding, `eval_every / sqrt(12)`; a run that
  never reaches it counts one evaluation past its last step (censored, so a difference is a lower
  bound on the true one);
- its accuracy on the first bin beyond training at fixed steps (the last evaluation at or before
  each step: a run that stopped at a validation of 1.0 keeps the weights it stopped with).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..records.files import read_frame
from ..records.tables import read_provenance
from ..stats import runs_mean, wilson_error


@dataclass(frozen=True)
class Curve:
    """One fine-tuning run's evaluations, and the training settings that place them."""

    model: str
    task: str
    seed: int
    steps: np.ndarray
    validation: np.ndarray
    beyond: np.ndarray | None
    eval_every: int
    eval_examples: int
    max_steps: int
    train_lengths: str
    curve_lengths: str | None

    def steps_to(self, reach: float) -> float:
        """The first evaluated step at which validation accuracy reached `reach`; never: one
        evaluation past the last step the run could take."""
        reached = self.steps[self.validation >= reach]
        return float(reached.min()) if reached.size else float(self.max_steps + self.eval_every)

    def beyond_at(self, step: int) -> float | None:
        """Accuracy beyond training at the last evaluation at or before `step` (None: the run did
        not score a bin beyond training, or had not evaluated by then)."""
        if self.beyond is None:
            return None
        done = self.steps <= step
        return float(self.beyond[done][-1]) if done.any() else None


def read_curves(paths) -> list[Curve]:
    """One Curve per training history (the fine-tuning rule's `training.parquet`), who it is read
    from the job's wildcards and its settings from the job's parameters."""
    curves = []
    for path in paths or []:
        provenance, history = read_provenance(path), read_frame(path).sort("step")
        wildcards, training = provenance["wildcards"], provenance["config"]["training"]
        beyond = history["beyond_accuracy"].to_numpy() if "beyond_accuracy" in history.columns else None
        curves.append(Curve(wildcards["model"], wildcards["task"], int(wildcards["seed"]), history["step"].to_numpy(),
                            history["validation_accuracy"].to_numpy(), beyond, int(training["eval_every"]),
                            int(training["eval_examples"]), int(training["max_steps"]),
                            str(provenance["config"]["train_lengths"]), provenance["config"].get("curve_lengths")))
    return curves


def steps_to_reach(curves: list[Curve], model: str, task: str, reach: float) -> tuple[float, float] | None:
    """A model's steps to `reach` in distribution on a task, over its fine-tuning seeds."""
    runs = [c for c in curves if c.model == model and c.task == task]
    if not runs:
        return None
    return runs_mean([(c.steps_to(reach), c.eval_every / math.sqrt(12)) for c in runs])


def beyond_at_step(curves: list[Curve], model: str, task: str, step: int) -> tuple[float, float] | None:
    """A model's accuracy on the first bin beyond training at `step`, over its fine-tuning seeds
    (each run's error Wilson's over its evaluation examples)."""
    found = [(value, c.eval_examples) for c in curves if c.model == model and c.task == task
             if (value := c.beyond_at(step)) is not None]
    if not found:
        return None
    return runs_mean([(value, wilson_error(round(value * examples), examples)) for value, examples in found])
