"""The training engine shared by from-scratch training and fine-tuning.

One `TrainingRun` is one model with its optimiser, schedule, data stream and checkpoint;
`train()` advances any number of runs in one process, step by step, so seeds and tasks can share
a process (and, on a GPU, a device) instead of paying start-up and idle time once per run; with
`stack=True`, runs of one architecture share each step as well (`lengthgen.stacked`).

Resuming is exact: the batch of step s is a pure function of (seed, s), and the checkpoint
holds model, optimiser, scheduler and RNG state, so a run killed at any point and started again
ends with the same weights and metrics as one never interrupted.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch
from tqdm.auto import tqdm

from .provenance import canonical_json, config_hash
from .sequences import IGNORE


@dataclass
class TrainSettings:
    lr: float = 1e-4
    weight_decay: float = 0.01
    batch_size: int = 64
    max_steps: int = 30000
    eval_every: int = 3000
    warmup_steps: int = 0
    schedule: str = "constant"  # "linear" (decay to 0 at max_steps) or "constant"
    precision: str = "fp32"  # "fp32" or "bf16"
    checkpoint_every: int = 1000
    stop_at_accuracy: float | None = 1.0  # early stop once validation accuracy reaches this
    keep: str = "last"  # "last" or "best" (by validation accuracy)
    length_buckets: int = 1  # micro-batches of similar lengths per step (same gradient, less padding)

    @classmethod
    def from_config(cls, section: dict, **overrides) -> "TrainSettings":
        known = {k: v for k, v in section.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, **overrides})


def pick_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


MIXED_PRECISION = {"fp32": "no", "bf16": "bf16"}


def make_accelerator(precision: str):
    """An Accelerator whose precision is the config's, never an accelerate config file's or the
    environment's (ACCELERATE_MIXED_PRECISION)."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    if precision not in MIXED_PRECISION:
        raise ValueError(f"unknown precision {precision!r}; known: {', '.join(MIXED_PRECISION)}")
    if AcceleratorState._shared_state and AcceleratorState._shared_state.get("_mixed_precision") != MIXED_PRECISION[precision]:
        AcceleratorState._reset_state()  # the state is a per-process singleton; runs in one process may differ
    return Accelerator(mixed_precision=MIXED_PRECISION[precision], cpu=not torch.cuda.is_available())


def length_buckets(batch: dict[str, torch.Tensor], buckets: int) -> list[dict[str, torch.Tensor]]:
    """The rows of a right-padded batch in `buckets` micro-batches of similar length, each cut to
    its own longest row. Why: a batch is as wide as its longest example, so with lengths drawn
    uniformly almost half of a copying batch is padding; sorted micro-batches skip most of it.
    A row ends at its last labelled token (the answer, then <eos>, ends every sequence)."""
    labelled = batch["labels"] != IGNORE
    ends = labelled.int().cumsum(1).argmax(1) + 1  # one past the last labelled position
    order = torch.argsort(ends, stable=True)
    parts = []
    for rows in order.chunk(buckets):
        width = int(ends[rows].max())
        parts.append({k: v[rows, :width] for k, v in batch.items()})
    return parts


def precision_autocast(device: torch.device, precision: str):
    """The autocast context of a config precision: bf16 autocast, or nothing for fp32."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


def optimizer_and_schedule(parameters, settings: TrainSettings, device: torch.device):
    """AdamW and its learning-rate schedule for `settings`. The fused kernel (CPU and CUDA) is what
    Hugging Face Trainer uses by default; it is faster."""
    optimizer = torch.optim.AdamW(parameters, lr=settings.lr, weight_decay=settings.weight_decay,
                                  fused=device.type in ("cpu", "cuda"))
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(settings))


def _schedule(settings: TrainSettings):
    def factor(step: int) -> float:
        if step < settings.warmup_steps:
            return (step + 1) / settings.warmup_steps
        if settings.schedule == "linear":
            span = max(1, settings.max_steps - settings.warmup_steps)
            return max(0.0, 1.0 - (step - settings.warmup_steps) / span)
        return 1.0
    return factor


@dataclass
class History:
    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)  # mean training loss since the last evaluation
    accuracies: list[float] = field(default_factory=list)  # validation accuracy at that step
    metrics: list[dict] = field(default_factory=list)  # anything else the evaluation reported then


class TrainingRun:
    """One model being trained; `step()` advances it by one optimiser step.

    batch_for(step) -> dict of CPU tensors (input_ids, labels, optional position_ids);
    evaluate(model) -> validation accuracy in [0, 1], or a dict with "accuracy" and other metrics
    to keep in the history.
    fingerprint: anything that identifies the run's settings; a checkpoint made under another
    fingerprint is ignored rather than resumed.
    accelerator: an `accelerate.Accelerator` (fine-tuning) that places the model and runs mixed
    precision and the backward pass; without one the engine does both itself.
    """

    def __init__(self, model, settings: TrainSettings, batch_for: Callable[[int], dict],
                 evaluate: Callable[[torch.nn.Module], float], checkpoint_dir: str | os.PathLike | None,
                 fingerprint: dict, device: torch.device | None = None, name: str = "run", accelerator=None):
        self.accelerator = accelerator
        self.device = accelerator.device if accelerator is not None else device or pick_device()
        self.model = model.to(self.device)
        self.settings, self.batch_for, self.evaluate, self.name = settings, batch_for, evaluate, name
        self.fingerprint = config_hash({"fingerprint": fingerprint, "settings": asdict(settings)})
        self.checkpoint = Path(checkpoint_dir) / "state.pt" if checkpoint_dir else None
        self.optimizer, self.scheduler = optimizer_and_schedule(model.parameters(), settings, self.device)
        self.step_count, self.done = 0, False
        self.history, self.best_accuracy, self.best_state = History(), -1.0, None
        self._loss_sum, self._loss_count = 0.0, 0
        self.resumed_from = self._resume()

    # -- state -----------------------------------------------------------------------------
    def _state(self) -> dict:
        return {
            "fingerprint": self.fingerprint, "step": self.step_count, "done": self.done,
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "history": asdict(self.history), "best_accuracy": self.best_accuracy, "best_state": self.best_state,
            "loss_sum": self._loss_sum, "loss_count": self._loss_count,
        }

    def save_checkpoint(self) -> None:
        if self.checkpoint is None:
            return
        self.checkpoint.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.checkpoint.with_suffix(".tmp")
        torch.save(self._state(), tmp)
        os.replace(tmp, self.checkpoint)

    def _resume(self) -> int | None:
        if self.checkpoint is None or not self.checkpoint.exists():
            return None
        state = torch.load(self.checkpoint, map_location=self.device, weights_only=False)
        if state["fingerprint"] != self.fingerprint:
            return None  # made under other settings: start afresh (it is overwritten at the next save)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"].cpu())
        if state["cuda_rng"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        self.step_count, self.done = state["step"], state["done"]
        self.history = History(**state["history"])
        self.best_accuracy, self.best_state = state["best_accuracy"], state["best_state"]
        self._loss_sum, self._loss_count = state["loss_sum"], state["loss_count"]
        return self.step_count

    # -- training --------------------------------------------------------------------------
    def step(self) -> bool:
        """One optimiser step (plus evaluation/checkpoint when due). Returns False once finished."""
        if self.done:
            return False
        s = self.settings
        self.model.train()
        batch = self.batch_for(self.step_count)
        if s.length_buckets > 1:
            # Each micro-batch's loss is its token sum over the whole batch's token count, so the
            # accumulated gradient is the full batch's (the model's loss shifts labels by one).
            tokens = (batch["labels"][:, 1:] != IGNORE).sum().to(self.device)
            parts, extra = length_buckets(batch, s.length_buckets), {"num_items_in_batch": tokens}
        else:
            parts, extra = [batch], {}
        loss = 0.0
        for part in parts:
            part = {k: v.to(self.device, non_blocking=True) for k, v in part.items()}
            if self.accelerator is not None:
                with self.accelerator.autocast():
                    part_loss = self.model(**part, **extra).loss
                self.accelerator.backward(part_loss)
            else:
                with precision_autocast(self.device, s.precision):
                    part_loss = self.model(**part, **extra).loss
                part_loss.backward()
            loss = loss + part_loss.detach()
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return self.finish_step(loss)

    def due_after_step(self) -> bool:
        """Whether the coming step ends with an evaluation, a checkpoint or the end of the run."""
        s, coming = self.settings, self.step_count + 1
        return coming >= s.max_steps or coming % s.eval_every == 0 or coming % s.checkpoint_every == 0

    def finish_step(self, loss: torch.Tensor) -> bool:
        """Count a step whose update is done (here or by a stack of runs); evaluate and save when due."""
        s = self.settings
        self.step_count += 1
        self._loss_sum = self._loss_sum + loss  # stays on the device: no sync per step
        self._loss_count += 1
        finished = self.step_count >= s.max_steps
        if self.step_count % s.eval_every == 0 or finished:
            finished = self._evaluate() or finished
        self.done = finished
        if finished or self.step_count % s.checkpoint_every == 0:
            self.save_checkpoint()
        return not finished

    def _evaluate(self) -> bool:
        self.model.eval()
        with torch.no_grad():
            result = self.evaluate(self.model)
        metrics = dict(result) if isinstance(result, dict) else {"accuracy": result}
        accuracy = float(metrics.pop("accuracy"))
        self.history.metrics.append(metrics)
        self.history.steps.append(self.step_count)
        self.history.losses.append(float(self._loss_sum) / max(1, self._loss_count))
        self.history.accuracies.append(accuracy)
        self._loss_sum, self._loss_count = 0.0, 0
        if accuracy > self.best_accuracy:
            self.best_accuracy = accuracy
            if self.settings.keep == "best":
                self.best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        stop = self.settings.stop_at_accuracy
        return stop is not None and accuracy >= stop

    def final_model(self):
        """The model to keep: the last weights, or the best by validation accuracy."""
        if self.settings.keep == "best" and self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return self.model

    def summary(self) -> dict:
        return {"name": self.name, "steps": self.step_count, "best_accuracy": self.best_accuracy,
                "resumed_from": self.resumed_from, "history": json.loads(canonical_json(asdict(self.history)))}


def train(runs: list[TrainingRun], progress: bool = True, stack: bool = False) -> list[TrainingRun]:
    """Advance every run until all are finished, interleaving their steps in this process.

    stack: runs of one architecture and settings advance together in one vmapped step
    (`lengthgen.stacked`); the others still interleave.
    """
    total = sum(r.settings.max_steps for r in runs)
    bar = tqdm(total=total, initial=sum(r.step_count for r in runs), disable=not progress,
               desc=", ".join(r.name for r in runs)[:60], unit="step", mininterval=2.0)
    active = [r for r in runs if not r.done]
    if stack:
        from .stacked import StackedRuns, stack_key

        groups: dict[str, list[TrainingRun]] = {}
        for run in active:
            groups.setdefault(stack_key(run), []).append(run)
        active = [StackedRuns(group) if len(group) > 1 else group[0] for group in groups.values()]
    while active:
        for unit in list(active):
            members = unit.runs if hasattr(unit, "runs") else [unit]
            before = {id(r): r.step_count for r in members}
            going = unit.step()
            for run in members:  # an early stop counts its skipped steps as done
                bar.update((run.settings.max_steps if run.done else run.step_count) - before[id(run)])
            if not going:
                active.remove(unit)
    bar.close()
    return runs
