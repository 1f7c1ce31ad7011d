"""Copy prompts for the mechanism (the authors' `mechanistic/data.py`), as token ids.

A pretrained model sees n demonstrations and a test: each a segment of L distinct lowercase
letters, a separator `,`, then its copy (forward) or reversed copy (backward); segments are joined
by `.`, with the tokenizer's <bos> in front (when it has one) and <eos> at the end. Each letter is
one token: space-prefixed for a BPE tokenizer (` a`, as theirs), bare for a character tokenizer
(the in-context separator rule). The whole answer is in the input (teacher forcing).

A model this workflow trained itself (from scratch, fine-tuned) gets one segment in its own
training spelling (their fine-tuned models got no demonstrations either).

Seeded per (L, seed): forward and backward prompts, and every model, see the same letters.
"""

from __future__ import annotations

import string
import zlib
from dataclasses import dataclass

import numpy as np
import torch

from ..engine.sequences import Layout, encode_example
from ..tasks import TASKS

LETTERS = string.ascii_lowercase


@dataclass
class CopyPrompts:
    """`count` prompts of one (L, direction), all of the same length.

    input_start: the test segment's first token; copy_start: the first copied token (after the
    separator). The copy's tokens are predicted at copy_start - 1 .. copy_start + L - 2."""

    ids: torch.Tensor  # (count, length)
    length: int  # L
    direction: str  # "forward" | "backward"
    input_start: int
    copy_start: int

    @property
    def scored(self) -> torch.Tensor:
        """Positions whose next token is a copied token."""
        return torch.arange(self.copy_start - 1, self.copy_start + self.length - 1)

    def occurrence(self, k: int) -> int:
        """Where the k-th copied token (k = 0..L-1) stands in the test input."""
        return self.input_start + (k if self.direction == "forward" else self.length - 1 - k)


def segments(length: int, count: int, shots: int, seed: int, alphabet: int = len(LETTERS)) -> np.ndarray:
    """(count, shots + 1, L) symbol indices: distinct within a segment, independent across them."""
    rng = np.random.default_rng([seed, length, zlib.crc32(b"mechanism-copy")])
    return np.stack([np.stack([rng.choice(alphabet, size=length, replace=False) for _ in range(shots + 1)])
                     for _ in range(count)])


def letter_ids(tokenizer, separator: str) -> list[int]:
    """One token per letter (` a` with a separator, `a` without); a clear error otherwise."""
    return [_single(tokenizer, separator + letter) for letter in LETTERS]


def _single(tokenizer, text: str) -> int:
    token = tokenizer(text, add_special_tokens=False).input_ids
    if len(token) != 1:
        raise ValueError(f"{text!r} is {len(token)} tokens for this tokenizer; the copy prompts need one")
    return token[0]


def few_shot_prompts(tokenizer, length: int, direction: str, count: int, shots: int, seed: int,
                     separator: str = " ") -> CopyPrompts:
    """The authors' prompts for a pretrained model."""
    letters, comma, dot = letter_ids(tokenizer, separator), _single(tokenizer, ","), _single(tokenizer, ".")
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    rows = []
    for instance in segments(length, count, shots, seed):
        row = list(bos)
        for i, segment in enumerate(instance):
            copy = segment if direction == "forward" else segment[::-1]
            row += [letters[s] for s in segment] + [comma] + [letters[s] for s in copy]
            row += [dot] if i < shots else [tokenizer.eos_token_id]
        rows.append(row)
    input_start = len(bos) + shots * (2 * length + 2)
    return CopyPrompts(torch.tensor(rows), length, direction, input_start, input_start + length + 1)


def trained_prompts(layout: Layout, length: int, direction: str, count: int, seed: int,
                    alphabet: int) -> CopyPrompts:
    """One segment in a trained model's own spelling (from scratch, fine-tuned)."""
    task = TASKS["UF" if direction == "forward" else "UB"]
    rows = []
    for (segment,) in segments(length, count, 0, seed, alphabet):
        symbols = [int(s) for s in segment]
        copy = symbols if direction == "forward" else symbols[::-1]
        rows.append(encode_example(task, symbols, None, copy, layout))
    first = rows[0]
    return CopyPrompts(torch.tensor([r.ids for r in rows]), length, direction, len(layout.prefix),
                       first.answer_start)
