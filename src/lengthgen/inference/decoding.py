"""Batched greedy decoding for in-context evaluation: Hugging Face `generate` on left-padded
batches, with a preallocated (static) KV cache where the model allows one.

Prompts are sorted by token length so a batch wastes little padding; each row is cut to its own
new-token budget, at `<eos>` and at its first stop string. The answers equal those of
per-example greedy `generate` (tests check GPT-2, Llama and Qwen2 architectures). A hand-written
decoder that encoded the demonstrations shared by a batch once was measured against this and was
not faster (`bench/icl_throughput.py`, 0.81-1.01x), so the library's `generate` does the work.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from ..devices import input_device
from ..models.positions import check_fits
from .batches import left_padded, padding_id


@dataclass
class Request:
    prompt: str
    max_new_tokens: int
    stop: tuple[str, ...] = ()


def stop_cut(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """The text up to the first stop string, and whether one was found."""
    positions = [text.find(s) for s in stops if s and s in text]
    return (text[:min(positions)], True) if positions else (text, False)


@torch.no_grad()
def greedy_decode(model, tokenizer, requests: list[Request], batch_size: int = 16,
                  progress: bool = False) -> list[str]:
    """Greedy continuation of each prompt, cut at its first stop string."""
    device = input_device(model)
    pad_id = padding_id(tokenizer)
    eos_ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    encoded = [tokenizer(r.prompt, add_special_tokens=False).input_ids for r in requests]
    check_fits(model, max((len(e) + r.max_new_tokens for e, r in zip(encoded, requests)), default=0),
               "a prompt and its answer budget")
    order = sorted(range(len(requests)), key=lambda i: -len(encoded[i]))
    answers: list[str | None] = [None] * len(requests)
    bar = tqdm(total=len(requests), disable=not progress, desc="decode", unit="ex")
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        for i, text in zip(rows, _decode_batch(model, tokenizer, [encoded[i] for i in rows],
                                               [requests[i] for i in rows], pad_id, eos_ids, device)):
            answers[i] = text
        bar.update(len(rows))
    bar.close()
    return answers


def _static_cache(model) -> bool:
    """A preallocated cache where the architecture supports one (a growing cache copies itself at
    every step), but not for a model accelerate spreads over devices."""
    return bool(getattr(model, "_can_compile_fullgraph", False)) and not getattr(model, "hf_device_map", None)


def _decode_batch(model, tokenizer, prompts: list[list[int]], requests: list[Request], pad_id: int,
                  eos_ids: set[int], device) -> list[str]:
    """One left-padded batch through `generate`, to the largest budget of its rows; each row is then
    cut to its own budget, its first `<eos>` and its first stop string."""
    ids, mask, width = left_padded(prompts, pad_id)
    stops = sorted({s for r in requests for s in r.stop if s})
    out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), do_sample=False,
                         max_new_tokens=max(r.max_new_tokens for r in requests), pad_token_id=pad_id,
                         eos_token_id=sorted(eos_ids) or None, stop_strings=stops or None,
                         tokenizer=tokenizer if stops else None,
                         cache_implementation="static" if _static_cache(model) else None)
    answers = []
    for row, request in enumerate(requests):
        tokens = out[row, width:width + request.max_new_tokens].tolist()
        ends = [k for k, token in enumerate(tokens) if token in eos_ids]
        tokens = tokens[:ends[0]] if ends else tokens
        answers.append(stop_cut(tokenizer.decode(tokens, skip_special_tokens=True), request.stop)[0])
    return answers
