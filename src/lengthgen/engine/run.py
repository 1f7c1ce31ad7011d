"""One training run: a model with its optimiser, schedule, data stream and checkpoint.

Shared by every stage that trains (from scratch, pretraining, fine-tuning). Resuming is exact: the
batch of step s is a pure function of (seed, s), and the checkpoint holds model, optimiser,
scheduler and RNG state, so a run killed at any point and started again ends with the same
weights and metrics as one never interrupted.

The checkpoint is written atomically with its sha256 (`state.pt.sha256`); one that differs from
it, or cannot be read, is named in one warning, set aside (`state.pt.damaged`) and the run starts
from step 0, which ends with the weights of a run never interrupted. A checkpoint that cannot be
written (a full disk) stops the job with one line naming it.
"""

from __future__ import annotations

import json
import os
import time
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..devices import pick_device
from ..records.files import DamagedFile, WriteFailed, atomic_path, reading, sidecar_of, verify_checksum
from ..records.provenance import Provenance, canonical_json, config_hash
from ..runtime import TerminalWarning
from .sequences import IGNORE, length_buckets, sequence_ends
from .settings import OPTIMIZER_LAYOUT, TrainSettings, optimizer_and_schedule, precision_autocast

SET_ASIDE = ".damaged"  # suffix given to a checkpoint that failed to verify or load
CHECKPOINT_KEYS = ("fingerprint", "step", "done", "model", "optimizer", "scheduler", "torch_rng", "cuda_rng",
                   "history", "best_accuracy", "best_state", "loss_sum", "loss_count")
# What the run has processed, kept in its checkpoint (a checkpoint without them predates them: the
# resumed run's counts are then unknown, None, rather than too low).
TOKEN_COUNTERS = ("tokens", "padded_tokens", "attention_pairs")
WORK_SHAPE = ("parameters", "n_layer", "d_model")  # of the model, beside the counts in a history
# Where a run's CPU time goes (process CPU-seconds, every thread): making batches, the optimiser
# steps (forward, backward, update), the evaluations and the checkpoints; `lengthgen runtimes` puts
# them beside the job's own CPU time, whose remainder is start-up and the rest.
CPU_PHASES = ("data", "steps", "evaluation", "checkpoints")
CPU_SPLIT = ("cpu_start_up", *(f"cpu_{phase}" for phase in CPU_PHASES))  # in a history's provenance
SAVE_REMEDY = "free space on its file system and rerun the job: it resumes from the last checkpoint written"


class DamagedCheckpointWarning(TerminalWarning):
    """A checkpoint that was set aside: its run starts again from step 0 (said on the terminal too)."""


def check_checkpoint(path) -> bool:
    """DamagedFile unless `path` matches its sha256 sidecar (True) or, without one (written before
    they existed), every member of its zip archive matches its CRC (False)."""
    path = Path(path)
    with reading(path):
        if verify_checksum(path):
            return True
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
        except zipfile.BadZipFile as error:
            raise DamagedFile(path, f"cannot be read (BadZipFile: {error})") from None
        if bad is not None:
            raise DamagedFile(path, f"its member {bad} differs from the CRC written with it")
    return False


def load_checkpoint(path, device) -> dict:
    """A checkpoint's state, checked first; DamagedFile names it when it cannot be trusted."""
    verified = check_checkpoint(path)
    try:
        state = torch.load(path, map_location=device, weights_only=False)
    except (MemoryError, torch.cuda.OutOfMemoryError):
        raise  # not the file's fault: it is kept
    except Exception as error:  # noqa: BLE001 -- torch reports a bad archive as RuntimeError, pickle as anything
        if verified:
            raise  # the bytes written: a failure to load them is not damage on disk
        text = (str(error).strip().splitlines() or [""])[0][:200]
        raise DamagedFile(path, f"cannot be read ({type(error).__name__}: {text})") from None
    if not isinstance(state, dict) or any(key not in state for key in CHECKPOINT_KEYS):
        raise DamagedFile(path, "is not a training checkpoint of this version")
    return state


def set_aside(path: Path) -> None:
    for file in (path, sidecar_of(path)):
        try:
            file.replace(file.with_name(path.name + SET_ASIDE + file.name[len(path.name):]))
        except FileNotFoundError:
            pass


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
        self.fingerprint = config_hash({"fingerprint": fingerprint, "settings": asdict(settings),
                                        "optimizer": OPTIMIZER_LAYOUT})
        self.checkpoint = Path(checkpoint_dir) / "state.pt" if checkpoint_dir else None
        self.optimizer, self.scheduler = optimizer_and_schedule(self.model, settings, self.device)
        self.step_count, self.done = 0, False
        self.history, self.best_accuracy, self.best_state = History(), -1.0, None
        self._loss_sum, self._loss_count = 0.0, 0
        self.token_counts: dict[str, int] | None = dict.fromkeys(TOKEN_COUNTERS, 0)
        self.cpu_seconds = dict.fromkeys(CPU_PHASES, 0.0)
        self.cpu_at_start = time.process_time()  # the job's CPU before this run existed: its start-up
        self.resumed_from = self._resume()

    # -- state -----------------------------------------------------------------------------
    def _state(self) -> dict:
        return {
            "fingerprint": self.fingerprint, "step": self.step_count, "done": self.done,
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(), "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "history": asdict(self.history), "best_accuracy": self.best_accuracy, "best_state": self.best_state,
            "loss_sum": self._loss_sum, "loss_count": self._loss_count, "token_counts": self.token_counts,
            "cpu_seconds": self.cpu_seconds,
        }

    def add_cpu(self, phase: str, since: float) -> float:
        """Count the CPU-seconds from `since` (a `time.process_time()`) to now under `phase`; returns now."""
        now = time.process_time()
        self.cpu_seconds[phase] += now - since
        return now

    def save_checkpoint(self) -> None:
        if self.checkpoint is None:
            return
        started = time.process_time()
        self._save_checkpoint()
        self.add_cpu("checkpoints", started)

    def _save_checkpoint(self) -> None:
        state = self._state()
        with atomic_path(self.checkpoint, checksum=True, remedy=SAVE_REMEDY) as tmp:
            try:
                with open(tmp, "wb") as handle:  # a handle: a full disk is OSError ENOSPC, not torch's RuntimeError
                    torch.save(state, handle)
            except RuntimeError as error:
                raise WriteFailed(self.checkpoint, error, SAVE_REMEDY) from None

    def _resume(self) -> int | None:
        if self.checkpoint is None or not self.checkpoint.exists():
            return None
        try:
            state = load_checkpoint(self.checkpoint, self.device)
        except DamagedFile as damaged:
            set_aside(self.checkpoint)
            warnings.warn(f"{damaged.path}: {damaged.problem}: set aside as {self.checkpoint.name}{SET_ASIDE}; "
                          f"run {self.name} starts again from step 0", DamagedCheckpointWarning, stacklevel=2)
            return None
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
        self.token_counts = state.get("token_counts")
        self.cpu_seconds = state.get("cpu_seconds") or dict.fromkeys(CPU_PHASES, 0.0)  # older checkpoints: from here on
        return self.step_count

    # -- training --------------------------------------------------------------------------
    def step(self) -> bool:
        """One optimiser step (plus evaluation/checkpoint when due). Returns False once finished."""
        if self.done:
            return False
        s = self.settings
        self.model.train()
        started = time.process_time()
        batch = self.batch_for(self.step_count)
        started = self.add_cpu("data", started)
        if s.length_buckets > 1:
            # Each micro-batch's loss is its token sum over the whole batch's token count, so the
            # accumulated gradient is the full batch's (the model's loss shifts labels by one).
            tokens = (batch["labels"][:, 1:] != IGNORE).sum().to(self.device)
            parts, extra = length_buckets(batch, s.length_buckets), {"num_items_in_batch": tokens}
        else:
            parts, extra = [batch], {}
        self.count_tokens(batch, sum(part["input_ids"].numel() for part in parts))
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
        if s.max_grad_norm is not None:
            if self.accelerator is not None:
                self.accelerator.clip_grad_norm_(self.model.parameters(), s.max_grad_norm)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), s.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.add_cpu("steps", started)
        return self.record_step(loss)

    def count_tokens(self, batch: dict, positions: int) -> None:
        """Count a batch's real tokens (each row up to its last labelled one, `sequence_ends`), the
        padding among the `positions` the model computes, and the attention's query-key pairs
        (sum of squared row lengths). Reads the CPU batch only: training is unchanged."""
        if self.token_counts is None:
            return
        ends = sequence_ends(batch["labels"])
        real = int(ends.sum())
        counts = self.token_counts
        counts["tokens"] += real
        counts["padded_tokens"] += positions - real
        counts["attention_pairs"] += int((ends * ends).sum())

    @property
    def runs(self) -> tuple[TrainingRun, ...]:
        """The runs one `step()` advances (a stack of runs has several)."""
        return (self,)

    def record_step(self, loss: torch.Tensor) -> bool:
        """Count a step whose update is done (here or by a stack of runs); evaluate and save when due.
        Returns False once the run is finished."""
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
        started = time.process_time()
        with torch.no_grad():
            result = self.evaluate(self.model)
        self.add_cpu("evaluation", started)
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
        return (self.settings.early_stop and accuracy >= 1.0) or self.out_of_patience()

    def out_of_patience(self) -> bool:
        """No better validation accuracy for `patience` evaluations in a row. Read from the history
        (the last improvement is where its maximum is first reached), so a resumed run stops where
        an uninterrupted one does."""
        patience, accuracies = self.settings.patience, self.history.accuracies
        if patience is None or not accuracies:
            return False
        return len(accuracies) - 1 - accuracies.index(max(accuracies)) >= patience

    def final_model(self):
        """The model to keep: the last weights, or the best by validation accuracy."""
        if self.settings.keep == "best" and self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return self.model

    def summary(self) -> dict:
        """Where the run ended, its history, and the work it did: token counts (None when resumed
        from a checkpoint without them) and the model's size, from which `lengthgen runtimes`
        estimates its FLOPs."""
        counts = self.token_counts or dict.fromkeys(TOKEN_COUNTERS)
        return {"name": self.name, "steps": self.step_count, "best_accuracy": self.best_accuracy,
                "resumed_from": self.resumed_from, "history": json.loads(canonical_json(asdict(self.history))),
                **counts, **model_shape(self.model), **self.cpu_split()}

    def cpu_split(self) -> dict:
        """The CPU-seconds of each phase (`cpu_data`, ...) and the job's before this run (`cpu_start_up`)."""
        return {"cpu_start_up": self.cpu_at_start,
                **{f"cpu_{phase}": seconds for phase, seconds in self.cpu_seconds.items()}}


def model_shape(model) -> dict:
    """Parameters (each tied tensor once), layers and hidden width, as the FLOP estimate needs them;
    None where the config does not say (Hugging Face maps n_layer/n_embd to these names)."""
    config = getattr(model, "config", None)
    return {"parameters": sum(p.numel() for p in model.parameters()),
            "n_layer": getattr(config, "num_hidden_layers", None), "d_model": getattr(config, "hidden_size", None)}


def history_frame(summary: dict):
    """A run's history (from `TrainingRun.summary()`) as a table: step, training loss, validation
    accuracy, and a column for each other number the evaluations reported (null where one did not)."""
    import polars as pl

    history = summary["history"]
    metrics = history.get("metrics") or [{}] * len(history["steps"])
    others = sorted({key for m in metrics for key, value in m.items() if isinstance(value, (int, float))})
    columns = {"step": history["steps"], "train_loss": history["losses"], "validation_accuracy": history["accuracies"],
               **{key: [m.get(key) for m in metrics] for key in others}}
    return pl.DataFrame(columns, schema={"step": pl.Int64, **{key: pl.Float64 for key in list(columns)[1:]}})


def write_history(summary: dict, path, provenance: Provenance, seed: int, device: str, wildcards: dict,
                  **extra) -> None:
    """A finished run's history table with its provenance: the settings, seed and device, the job's
    wildcards, and where the run stopped, what it kept and where it resumed from."""
    from ..records.tables import write_parquet

    outcome = {k: summary[k] for k in ("steps", "best_accuracy", "resumed_from")}
    outcome.update({k: summary.get(k) for k in (*TOKEN_COUNTERS, *WORK_SHAPE, *CPU_SPLIT)})
    write_parquet(history_frame(summary), path,
                  provenance.record(seed=seed, device=device, extra={"wildcards": wildcards, **extra, **outcome}))
