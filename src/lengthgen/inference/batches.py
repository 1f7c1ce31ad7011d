"""Left-padded batches: prompts of different lengths end at one column, so the token after each
prompt (and an answer that follows it) sits at the same place in every row."""

from __future__ import annotations

import torch


def padding_id(tokenizer) -> int:
    """The id to pad batches with: the tokenizer's pad token, else its end of text (else 0)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)


def left_padded(prompts: list[list[int]], pad_id: int, answers: list[list[int]] | None = None):
    """(ids, attention mask, width W): each prompt left-padded to W, followed from column W by its
    answer where `answers` are given, pads after it to the longest answer (causal attention never
    lets a later pad change an earlier position)."""
    width = max(len(p) for p in prompts)
    tails = answers or [[] for _ in prompts]
    ids = torch.full((len(prompts), width + max(len(t) for t in tails)), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, (prompt, tail) in enumerate(zip(prompts, tails)):
        ids[row, width - len(prompt):width + len(tail)] = torch.tensor(prompt + tail, dtype=torch.long)
        mask[row, width - len(prompt):width + len(tail)] = 1
    return ids, mask, width
