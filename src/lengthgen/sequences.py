"""Task examples as token-id sequences for training and teacher-forced scoring.

Layout (SPEC section 1): ``<bos> x_1..x_n <sep> target <eos>``, with the query after ``<sep>``
for retrieval. Labels follow the Hugging Face convention -- ``labels[i] = input_ids[i]`` on the
positions to learn, -100 elsewhere -- and the model shifts them itself, so the target token at
position i is predicted from position i-1 (no extra shift here: the authors' double shift is a bug).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .vocab import BOS, EOS, PAD, SEP

IGNORE = -100


@dataclass
class Encoded:
    """One example: its full id sequence and where the answer (target, then <eos>) starts."""

    ids: list[int]
    answer_start: int


def encode_example(context, query, target, to_id) -> Encoded:
    prompt = [BOS, *map(to_id, context), SEP] + ([to_id(query)] if query is not None and query >= 0 else [])
    return Encoded(prompt + [*map(to_id, target), EOS], len(prompt))


def collate(examples: list[Encoded], offsets: list[int] | None = None, max_position: int | None = None,
            pad_id: int = PAD) -> dict[str, torch.Tensor]:
    """Right-padded batch. `offsets` shift each row's position ids (random offsets for APE)."""
    width = max(len(e.ids) for e in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE, dtype=torch.long)
    for row, example in enumerate(examples):
        input_ids[row, :len(example.ids)] = torch.tensor(example.ids)
        labels[row, example.answer_start:len(example.ids)] = torch.tensor(example.ids[example.answer_start:])
    batch = {"input_ids": input_ids, "labels": labels}
    if offsets is not None:
        positions = torch.arange(width).unsqueeze(0) + torch.tensor(offsets).unsqueeze(1)
        if max_position is not None:  # padding positions past the table are never scored
            positions = positions.clamp(max=max_position - 1)
        batch["position_ids"] = positions
    return batch


def random_offsets(rng: np.random.Generator, lengths: list[int], max_position: int) -> list[int]:
    """Uniform offsets so that every position up to `max_position` is trained (SPEC section 2)."""
    return [int(rng.integers(0, max_position - n + 1)) for n in lengths]
