"""Training one model from scratch and evaluating it on every length bin of its family."""

from __future__ import annotations

import polars as pl

from ..engine.loop import train
from ..engine.run import TrainingRun
from ..engine.scoring import teacher_forced_accuracy
from ..engine.sequences import SCRATCH_LAYOUT, Layout, TrainingStream, encoded_examples
from ..lengthbins.evaluate import evaluate_bins
from ..models.builders import build_model
from ..models.loading import load_trained
from ..models.positions import uses_absolute_positions
from ..models.storage import save_hf_directory
from ..models.vocab import build_tokenizer, vocab_size
from ..settings import EosRule, ScratchRunSettings
from ..tasks import LengthBin, Task


def scratch_run(task: Task, pe: str, seed: int, settings: ScratchRunSettings, checkpoint_dir) -> TrainingRun:
    """One (task, PE, seed) training run, resumed from its checkpoints if they exist."""
    data = settings.data
    train_bin = LengthBin.parse(settings.train_lengths)
    architecture = dict(settings.model)
    layout = scratch_layout(task, settings.eos)
    needed = layout.sequence_length(task, max(settings.max_length or 0, train_bin.high))
    positions = architecture.pop("max_positions", None) or needed
    if positions < needed:
        raise ValueError(f"scratch.model.max_positions {positions} is shorter than the longest sequence ({needed} tokens)")
    model = build_model(pe, vocab_size(data["alphabet_size"]), positions, seed=seed, **architecture)
    training = settings.training.keeping("last")
    stream = TrainingStream(task, data, train_bin, training.batch_size, seed,
                            positions if uses_absolute_positions(model) else None, layout)
    validation, targets = encoded_examples(task, data, train_bin, training.eval_examples, seed, "validation", layout)
    return TrainingRun(
        model, training, stream,
        lambda m: teacher_forced_accuracy(m, validation, targets, training.eval_batch_size, training.precision),
        checkpoint_dir, fingerprint={"task": task.name, "pe": pe, "seed": seed, "section": settings.as_config()},
        name=f"{task.name}/{pe}/seed{seed}")


def train_scratch_models(members: list[dict], progress: bool = True, stack: bool = False) -> list[dict]:
    """Train runs in one process and save each as a Hugging Face directory; returns their summaries.

    members: {"task", "pe", "seed", "settings" (`ScratchRunSettings`), "model_dir", "checkpoint_dir"} each. stack: runs of
    one architecture and settings share each step (`engine.stacked`), with the same per-run
    checkpoints, histories and weights (up to rounding) as one run per process.
    """
    runs = [scratch_run(m["task"], m["pe"], m["seed"], m["settings"], m["checkpoint_dir"]) for m in members]
    train(runs, progress=progress, stack=stack)
    for run, member in zip(runs, members):
        save_hf_directory(run.final_model(), build_tokenizer(member["settings"].data["alphabet_size"]),
                          member["model_dir"])
    return [run.summary() for run in runs]


def train_scratch_model(task: Task, pe: str, seed: int, settings: ScratchRunSettings, model_dir, checkpoint_dir,
                        progress: bool = True) -> dict:
    """Train one (task, PE, seed) model (see `scratch_run`) and save it as a Hugging Face directory."""
    member = {"task": task, "pe": pe, "seed": seed, "settings": settings, "model_dir": model_dir,
              "checkpoint_dir": checkpoint_dir}
    return train_scratch_models([member], progress)[0]


def scratch_layout(task: Task, eos: EosRule) -> Layout:
    """The from-scratch layout with this family's <eos> rules (learnt? counted in exact match?)."""
    return SCRATCH_LAYOUT.with_eos({task.family: eos.train}, {task.family: eos.score})


def evaluate_scratch_model(model_dir, task: Task, data_paths: dict[str, str], *, batch_size: int, greedy: bool,
                           precision: str, eos: EosRule) -> pl.DataFrame:
    """Per-example exact match (teacher-forced, and greedy if asked) of one model on each length bin."""
    return evaluate_bins(load_trained(model_dir), task, data_paths, batch_size=batch_size, greedy=greedy,
                         precision=precision, layout=scratch_layout(task, eos))
