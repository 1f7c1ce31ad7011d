"""Task examples as token-id sequences for training and teacher-forced scoring.

Layout (docs/spec.md §1): ``<bos> x_1..x_n <sep> target <eos>``, with the query after ``<sep>``
for retrieval (or the authors' fine-tuning strings, see `Layout`). Labels follow the Hugging Face
convention -- ``labels[i] = input_ids[i]`` on the positions to learn, -100 elsewhere -- and the
model shifts them itself, so the target token at position i is predicted from position i-1 (no
extra shift here: the authors' double shift is a bug).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..models.vocab import BOS, EOS, PAD, SEP, symbol_id
from ..tasks import LengthBin, Task
from ..tasks.generate import encode, generate_inputs, target_of

IGNORE = -100


@dataclass(frozen=True)
class Layout:
    """How a model spells an example: symbol -> token id, the tokens around the query and the
    answer, and which end-of-sequence positions are learnt and scored.

    Sequence: prefix, context, `after_context[family]`, [query, `after_query`], target, eos.
    Ours (docs/spec.md §1): ``<bos> x_1..x_n <sep> [q] target <eos>``. The authors' fine-tuning
    strings: ``x_1..x_n||q>target`` (retrieval), ``x_1..x_n>target<eos>`` (copying)."""

    encoding: str  # "tokens" (from-scratch vocabularies) or "chars" (pretrained tokenizers)
    to_id: Callable[[int], int]
    prefix: tuple[int, ...]
    after_context: dict[str, tuple[int, ...]]  # per task family
    after_query: tuple[int, ...]
    eos: int
    pad: int
    train_on_eos: dict[str, bool] = field(default_factory=lambda: {"retrieval": True, "copying": True})
    score_eos: dict[str, bool] = field(default_factory=lambda: {"retrieval": False, "copying": False})

    def with_eos(self, train: dict[str, bool], score: dict[str, bool]) -> Layout:
        """The same layout with these families' <eos> rules (the others kept)."""
        return replace(self, train_on_eos={**self.train_on_eos, **train}, score_eos={**self.score_eos, **score})

    def scored_length(self, task: Task, target: list[int]) -> int:
        """Answer tokens the exact match reads: the target, and <eos> where it is scored."""
        return len(target) + self.score_eos[task.family]

    def sequence_length(self, task: Task, context_symbols: int) -> int:
        """Tokens of the longest sequence of a context of this many symbols."""
        query = 1 + len(self.after_query) if task.family == "retrieval" else 0
        target = context_symbols if task.family == "copying" else 1
        return len(self.prefix) + context_symbols + len(self.after_context[task.family]) + query + target + 1


SCRATCH_LAYOUT = Layout("tokens", symbol_id, (BOS,), {"retrieval": (SEP,), "copying": (SEP,)}, (), EOS, PAD)
FORMATS = ("lengthgen", "authors")


def tokenizer_layout(tokenizer, alphabet_size: int, model_name: str = "the model", style: str = "lengthgen") -> Layout:
    """One character = one token (docs/spec.md §4): each task symbol and marker must be a single
    token of this tokenizer; otherwise a clear error naming the character.

    style "lengthgen": ``<bos> x : [q] target <eos>`` with the tokenizer's own <bos>/<eos>;
    style "authors": their fine-tuning strings (``x||q>target``, ``x>target<eos>``), no <bos>."""
    def single(char: str) -> int:
        ids = tokenizer(char, add_special_tokens=False).input_ids
        if len(ids) != 1 or ids[0] == tokenizer.unk_token_id:
            raise ValueError(f"the tokenizer of {model_name} has no single token for {char!r} "
                             f"(it gives {ids}); fine-tuning needs one token per symbol")
        return ids[0]

    if style not in FORMATS:
        raise ValueError(f"unknown fine-tuning format {style!r}; known: {', '.join(FORMATS)}")
    ids = [single(encode([s], "chars")) for s in range(alphabet_size)]
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError(f"the tokenizer of {model_name} has no end-of-sequence token")
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    if style == "authors":
        bar, arrow = single("|"), single(">")
        return Layout("chars", ids.__getitem__, (), {"retrieval": (bar, bar), "copying": (arrow,)}, (arrow,), eos, pad,
                      train_on_eos={"retrieval": False, "copying": True}, score_eos={"retrieval": False, "copying": True})
    colon = single(":")
    return Layout("chars", ids.__getitem__, (bos,), {"retrieval": (colon,), "copying": (colon,)}, (), eos, pad)


@dataclass
class Encoded:
    """One example: its full id sequence, where the answer (target, then <eos>) starts, and where
    the learnt part ends (after <eos>, or after the target when <eos> is not learnt)."""

    ids: list[int]
    answer_start: int
    learnt_end: int


def encode_example(task: Task, context, query, target, layout: Layout = SCRATCH_LAYOUT) -> Encoded:
    to_id = layout.to_id
    prompt = [*layout.prefix, *map(to_id, context), *layout.after_context[task.family]]
    if task.family == "retrieval":
        prompt += [to_id(query), *layout.after_query]
    answer = [*map(to_id, target), layout.eos]
    learnt = len(answer) - (not layout.train_on_eos[task.family])
    return Encoded(prompt + answer, len(prompt), len(prompt) + learnt)


def collate(examples: list[Encoded], offsets: list[int] | None = None, max_position: int | None = None,
            pad_id: int = PAD) -> dict[str, torch.Tensor]:
    """Right-padded batch. `offsets` shift each row's position ids (random offsets for APE)."""
    width = max(len(e.ids) for e in examples)
    # Padded Python rows, one tensor each: a tensor per row would cost more than the rows.
    input_ids = torch.tensor([e.ids + [pad_id] * (width - len(e.ids)) for e in examples], dtype=torch.long)
    labels = torch.tensor([[IGNORE] * e.answer_start + e.ids[e.answer_start:e.learnt_end]
                           + [IGNORE] * (width - e.learnt_end) for e in examples], dtype=torch.long)
    batch = {"input_ids": input_ids, "labels": labels}
    if offsets is not None:
        positions = torch.arange(width).unsqueeze(0) + torch.tensor(offsets).unsqueeze(1)
        if max_position is not None:  # padding positions past the table are never scored
            positions = positions.clamp(max=max_position - 1)
        batch["position_ids"] = positions
    return batch


def sequence_ends(labels: torch.Tensor) -> torch.Tensor:
    """Each row's length: one past its last labelled position. Positions after it are padding:
    a causal model's loss never depends on them (`length_buckets` cuts them off)."""
    return (labels != IGNORE).int().cumsum(1).argmax(1) + 1


def length_buckets(batch: dict[str, torch.Tensor], buckets: int) -> list[dict[str, torch.Tensor]]:
    """The rows of a right-padded batch in `buckets` micro-batches of similar length, each cut to
    its own longest row. Why: a batch is as wide as its longest example, so with lengths drawn
    uniformly almost half of a copying batch is padding; sorted micro-batches skip most of it.
    A row ends at its last labelled token (the answer, then <eos>, ends every sequence)."""
    ends = sequence_ends(batch["labels"])
    order = torch.argsort(ends, stable=True)
    parts = []
    for rows in order.chunk(buckets):
        width = int(ends[rows].max())
        parts.append({k: v[rows, :width] for k, v in batch.items()})
    return parts


def random_offsets(rng: np.random.Generator, lengths: list[int], max_position: int) -> list[int]:
    """Uniform offsets so that every position up to `max_position` is trained (docs/spec.md §2)."""
    return [int(rng.integers(0, max_position - n + 1)) for n in lengths]


def encoded_examples(task: Task, settings: dict, length_bin: LengthBin, count: int, seed: int, stream: str,
                     layout: Layout = SCRATCH_LAYOUT):
    """Encoded examples of a named random stream, with each answer's scored length."""
    examples, target_lengths = [], []
    for context, query, occurrences in generate_inputs(task, layout.encoding, settings, length_bin, count, seed, stream):
        target, _ = target_of(task, context, occurrences)
        examples.append(encode_example(task, context, query, target, layout))
        target_lengths.append(layout.scored_length(task, target))
    return examples, target_lengths


class TrainingStream:
    """Batch of step s = a pure function of (task, settings, seed, s): resumable at any step.

    dataset_size None: every step draws fresh examples. A number: a fixed training set of that
    many examples (the authors' protocol), each epoch in its own seeded order."""

    def __init__(self, task: Task, settings: dict, length_bin: LengthBin, batch_size: int, seed: int,
                 max_position: int | None, layout: Layout = SCRATCH_LAYOUT, dataset_size: int | None = None,
                 dataset: list[Encoded] | None = None):
        """dataset: a fixed training set already made (the part of one not held out for validation)."""
        self.task, self.settings, self.length_bin, self.layout = task, settings, length_bin, layout
        self.batch_size, self.seed, self.max_position = batch_size, seed, max_position
        self.dataset = dataset if dataset is not None else (
            encoded_examples(task, settings, length_bin, dataset_size, seed, "train-set", layout)[0]
            if dataset_size else None)

    def examples(self, step: int) -> list[Encoded]:
        if self.dataset is None:
            return encoded_examples(self.task, self.settings, self.length_bin, self.batch_size, self.seed,
                                    f"train/{step}", self.layout)[0]
        size, first = len(self.dataset), step * self.batch_size
        orders = {}  # one permutation per epoch the batch touches (it may straddle two, or more)
        picked = []
        for position in range(first, first + self.batch_size):
            epoch = position // size
            if epoch not in orders:
                orders[epoch] = self.epoch_order(epoch)
            picked.append(self.dataset[orders[epoch][position % size]])
        return picked

    def epoch_order(self, epoch: int) -> np.ndarray:
        """The fixed training set's order in one epoch: a permutation seeded by (seed, epoch)."""
        return np.random.default_rng([self.seed, epoch, 0xE90C]).permutation(len(self.dataset))

    def __call__(self, step: int) -> dict:
        examples = self.examples(step)
        offsets = None
        if self.max_position is not None:
            rng = np.random.default_rng([self.seed, step, 0x0FF5E7])
            offsets = random_offsets(rng, [len(e.ids) for e in examples], self.max_position)
        return collate(examples, offsets, self.max_position, self.layout.pad)
