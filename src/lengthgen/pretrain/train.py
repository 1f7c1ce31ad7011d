"""Pretraining the embedded character-level LM on the Python-shipped corpus (see corpus.py).

The same training engine as everywhere: the batch of step s is a set of random windows of the
corpus drawn from (seed, s), so pretraining resumes exactly after a kill. Validation is next-token
accuracy on the held-out tail of the corpus, which the training windows never touch.
"""

from __future__ import annotations

import numpy as np
import torch

from ..devices import input_device
from ..engine.loop import train
from ..engine.run import TrainingRun
from ..inference.measures import next_tokens, top_tokens
from ..mechanism.probe import probe_summary
from ..models.builders import build_char_model
from ..models.char_tokenizer import build_char_tokenizer
from ..models.storage import save_hf_directory
from ..settings import PretrainSettings
from .corpus import build_corpus, corpus_hash


class CorpusStream:
    """Random windows of the training part of the corpus; a pure function of (seed, step)."""

    def __init__(self, ids: np.ndarray, context: int, batch_size: int, seed: int):
        self.ids, self.context, self.batch_size, self.seed = ids, context, batch_size, seed

    def __call__(self, step: int) -> dict:
        rng = np.random.default_rng([self.seed, step, 0x5EED])
        starts = rng.integers(0, len(self.ids) - self.context, size=self.batch_size)
        windows = torch.from_numpy(np.stack([self.ids[s:s + self.context] for s in starts]).astype(np.int64))
        return {"input_ids": windows, "labels": windows.clone()}


def next_token_accuracy(model, windows: torch.Tensor, batch_size: int) -> float:
    """The share of the windows' tokens (after the first) the model ranks first."""
    right = total = 0
    for start in range(0, len(windows), batch_size):
        batch = windows[start:start + batch_size].to(input_device(model))
        hits = top_tokens(*next_tokens(model(input_ids=batch).logits, batch, slice(0, batch.shape[1] - 1)))[1]
        right, total = right + int(hits.sum()), total + hits.numel()
    return right / total


def pretrain(settings: PretrainSettings, model_dir, checkpoint_dir, progress: bool = True) -> dict:
    """Build the corpus, train the model, save it (fp16 safetensors) with its tokenizer."""
    tokenizer = build_char_tokenizer()
    text = build_corpus(settings.corpus_chars, corpus=settings.corpus, seed=settings.seed, insertion=settings.insertion)
    ids = np.asarray(tokenizer(text, add_special_tokens=False).input_ids, dtype=np.int16)
    held_out = int(len(ids) * settings.validation_fraction)
    train_ids, valid_ids = ids[:-held_out], ids[-held_out:]
    context = settings.context
    training = settings.training.keeping("last")
    windows = training.eval_examples  # evenly spaced windows of the held-out tail
    validation = torch.from_numpy(np.stack([valid_ids[s:s + context] for s in
                                            range(0, held_out - context, held_out // windows)][:windows]).astype(np.int64))
    special = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                   pad_token_id=tokenizer.pad_token_id)
    model = build_char_model(settings.architecture, len(tokenizer), context, seed=settings.seed,
                             special_ids=special, **settings.model)

    def evaluate(m) -> dict:  # the induction probe at every evaluation shows when the heads form
        return {"accuracy": next_token_accuracy(m, validation, training.eval_batch_size),
                **probe_summary(m, tokenizer, settings.probe_length)}

    run = TrainingRun(model, training, CorpusStream(train_ids, context, training.batch_size, settings.seed),
                      evaluate, checkpoint_dir,
                      fingerprint={"section": settings.as_config(), "corpus": corpus_hash(text)}, name="pretrain")
    train([run], progress=progress)
    final = run.final_model()
    save_hf_directory(final.half() if settings.save_fp16 else final, tokenizer, model_dir)
    summary = run.summary()
    summary.update(corpus_hash=corpus_hash(text), corpus_chars=len(text),
                   tokens_seen=run.step_count * training.batch_size * context)
    return summary
