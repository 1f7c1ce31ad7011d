"""Fine-tuning one pretrained model on one task, and evaluating it on every length bin of its family.

Any registry model: one task symbol = one of the tokenizer's single-character tokens, the
example spelled `<bos> x_1..x_n : [q] target <eos>` with the tokenizer's own special tokens, or as
the authors' strings (`x||q>target`; `finetune.format`).
The shared engine does the work (resume after a kill, periodic validation on a held-out stream,
random position offsets for absolute-position models, the best checkpoint kept by validation
accuracy or the last one, `finetune.keep`); `accelerate` places the model and runs the configured
precision. `finetune.init: random` trains the model's architecture from fresh weights instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import polars as pl
import torch

from ..engine.loop import train
from ..engine.run import TrainingRun
from ..engine.scoring import teacher_forced_accuracy
from ..engine.sequences import TrainingStream, encoded_examples, tokenizer_layout
from ..engine.settings import make_accelerator
from ..lengthbins.evaluate import evaluate_bins
from ..models.loading import load_model, load_tokenizer, load_trained, load_trained_tokenizer
from ..models.positions import position_limit
from ..models.registry import ModelEntry
from ..models.storage import model_identity, save_hf_directory
from ..settings import FinetuneTaskSettings
from ..tasks import LengthBin, Task
from ..tasks.generators import length_unit, symbols_used


def finetune_run(entry: ModelEntry, task: Task, seed: int, settings: FinetuneTaskSettings, checkpoint_dir,
                 more_metrics: Callable[[torch.nn.Module], dict] | None = None) -> tuple[TrainingRun, object]:
    """The training run of one (model, task, seed), ready to step, and the model's tokenizer.

    more_metrics: measures beside validation accuracy at every evaluation, kept in the history
    (a benchmark's out-of-distribution score; settings.curve_lengths adds `beyond_accuracy`); the
    kept weights are still chosen by validation.
    """
    training = settings.training.keeping(settings.keep or "best")
    accelerator = make_accelerator(training.precision)
    tokenizer = load_tokenizer(entry)
    layout = tokenizer_layout(tokenizer, symbols_used(task.generator, settings.data), model_name=repr(entry.name),
                              style=settings.format)
    model = load_model(replace(entry, dtype="float32", device=str(accelerator.device)), check=False)
    if settings.init == "random":
        model = randomly_initialised(model, seed)
    train_bin = LengthBin.parse(settings.train_lengths)
    unit = length_unit(task.generator, settings.data)
    longest = layout.sequence_length(task, max(settings.max_length, train_bin.high) * unit)
    limit = position_limit(model)
    if limit is not None and longest > limit:
        raise ValueError(f"model {entry.name!r} has {limit} positions; task {task.name} at length "
                         f"{settings.max_length} needs {longest} tokens")
    dataset, validation, targets = training_and_validation(task, settings, train_bin, seed, layout,
                                                           training.eval_examples)
    offsets_up_to = longest if limit is not None and settings.position_offsets is not False else None
    stream = TrainingStream(task, settings.data, train_bin, training.batch_size, seed, offsets_up_to, layout,
                            settings.train_examples, dataset)
    # settings.curve_lengths: a bin beyond training scored at every evaluation (the history's
    # `beyond_accuracy`, the learning curve out of distribution), as many examples as validation
    beyond = (encoded_examples(task, settings.data, LengthBin.parse(settings.curve_lengths), training.eval_examples,
                               seed, "beyond-training", layout) if settings.curve_lengths else None)

    def evaluate(m):
        accuracy = teacher_forced_accuracy(m, validation, targets, training.eval_batch_size, training.precision)
        metrics = ({"beyond_accuracy": teacher_forced_accuracy(m, *beyond, training.eval_batch_size,
                                                               training.precision)} if beyond else {})
        metrics.update(more_metrics(m) if more_metrics else {})
        return {"accuracy": accuracy, **metrics} if metrics else accuracy

    torch.manual_seed(seed)  # dropout draws follow the seed (a resumed run restores its own RNG state)
    run = TrainingRun(
        model, training, stream, evaluate, checkpoint_dir, name=f"{entry.name}/{task.name}/seed{seed}",
        accelerator=accelerator,
        fingerprint={"model": model_identity(entry.path, entry.revision, "float32"), "task": task.name, "seed": seed,
                     "section": settings.as_config()})
    return run, tokenizer


def randomly_initialised(model, seed: int):
    """The same architecture (config, size, positions) with fresh weights drawn from `seed`: the
    control that says what pretraining adds."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    fresh = AutoModelForCausalLM.from_config(model.config)
    return fresh.to(device=model.device, dtype=torch.float32)


def holdout_split(count: int, held_out: int, seed: int) -> tuple[list[int], list[int]]:
    """Indices of a fixed training set's training and validation parts: a permutation seeded by
    `seed` split into count - held_out and held_out (the authors held 10% of their file out)."""
    if not 0 < held_out < count:
        raise ValueError(f"cannot hold out {held_out} of {count} training examples")
    order = np.random.default_rng([seed, 0x401D]).permutation(count).tolist()
    return sorted(order[held_out:]), sorted(order[:held_out])


def training_and_validation(task: Task, settings: FinetuneTaskSettings, train_bin: LengthBin, seed: int, layout,
                            eval_examples: int):
    """(the fixed training set, or None for the stream to make; validation examples; their scored
    lengths). With settings.holdout: validation is that many examples of the training set, left
    out of training; otherwise eval_examples of a separate stream."""
    if not settings.holdout:
        validation, targets = encoded_examples(task, settings.data, train_bin, eval_examples, seed, "validation",
                                               layout)
        return None, validation, targets
    examples, lengths = encoded_examples(task, settings.data, train_bin, settings.train_examples, seed,
                                         "train-set", layout)
    train_part, held = holdout_split(len(examples), settings.holdout, seed)
    return [examples[i] for i in train_part], [examples[i] for i in held], [lengths[i] for i in held]


def finetune_model(run: TrainingRun, tokenizer, model_dir, progress: bool = True) -> dict:
    """Train a run `finetune_run` built to its end and save the kept weights, with the model's
    tokenizer, as a Hugging Face directory."""
    train([run], progress=progress)
    save_hf_directory(run.final_model(), tokenizer, model_dir)
    return run.summary()


def evaluate_finetuned(model_dir, task: Task, data_paths: dict[str, str], *, data: dict, style: str, batch_size: int,
                       precision: str) -> pl.DataFrame:
    """Per-example exact match (teacher-forced and greedy) of a fine-tuned model on each length bin,
    spelled with the model's own tokenizer in the format it was trained in."""
    alphabet = symbols_used(task.generator, data)
    layout = tokenizer_layout(load_trained_tokenizer(model_dir), alphabet, style=style)
    return evaluate_bins(load_trained(model_dir), task, data_paths, batch_size=batch_size, greedy=True,
                         precision=precision, layout=layout, alphabet_size=alphabet)
