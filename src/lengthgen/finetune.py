"""Fine-tuning a pretrained causal LM on one task (paper section 4.3, SPEC section 4).

Any registry model: one task symbol = one of the tokenizer's single-character tokens, the
example spelled `<bos> x_1..x_n : [q] target <eos>` with the tokenizer's own special tokens.
The from-scratch training engine does the work (resume after a kill, periodic validation on a
held-out stream, random position offsets for absolute-position models, the best checkpoint kept
by validation accuracy); `accelerate` places the model and runs the configured precision.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from .evaluation import teacher_forced_accuracy
from .generate import LengthSpec
from .models import position_limit, save_hf_directory
from .prediction_cache import model_identity
from .registry import ModelEntry, load_model, load_tokenizer
from .sequences import TrainingStream, encoded_examples, tokenizer_layout
from .tasks import sequence_length
from .training import TrainingRun, TrainSettings, make_accelerator, train


def finetune_model(entry: ModelEntry, task: str, seed: int, section: dict, model_dir, checkpoint_dir,
                   progress: bool = True) -> dict:
    """Fine-tune one (model, task, seed) and save the kept weights as a Hugging Face directory.

    section: {"data": chars generator settings, "train_lengths", "max_length" (longest test context),
              "training": engine settings incl. eval_examples / eval_batch_size}
    """
    training = dict(section["training"])
    eval_batch = training.pop("eval_batch_size", 256)
    eval_count = training.pop("eval_examples", 500)
    settings = TrainSettings.from_config(training, keep="best")
    accelerator = make_accelerator(settings.precision)
    tokenizer = load_tokenizer(entry)
    layout = tokenizer_layout(tokenizer, section["data"]["alphabet_size"], model_name=repr(entry.name))
    model = load_model(replace(entry, dtype="float32", device=str(accelerator.device)))
    train_lengths = LengthSpec.parse(section["train_lengths"])
    longest = sequence_length(task, max(section["max_length"], train_lengths.high))
    limit = position_limit(model)
    if limit is not None and longest > limit:
        raise ValueError(f"model {entry.name!r} has {limit} positions; task {task} at length "
                         f"{section['max_length']} needs {longest} tokens")
    stream = TrainingStream(task, section["data"], train_lengths, settings.batch_size, seed,
                            longest if limit is not None else None, layout)
    validation, targets = encoded_examples(task, section["data"], train_lengths, eval_count, seed, "validation", layout)
    torch.manual_seed(seed)  # dropout draws follow the seed (a resumed run restores its own RNG state)
    run = TrainingRun(
        model, settings, stream,
        lambda m: teacher_forced_accuracy(m, validation, targets, eval_batch, settings.precision),
        checkpoint_dir, name=f"{entry.name}/{task}/seed{seed}", accelerator=accelerator,
        fingerprint={"model": model_identity(entry.path, entry.revision, "float32"), "task": task, "seed": seed,
                     "section": section})
    train([run], progress=progress)
    save_hf_directory(run.final_model(), tokenizer, model_dir)
    return run.summary()
