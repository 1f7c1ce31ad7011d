"""Batched greedy decoding for in-context evaluation: KV cache, left padding, per-row stops.

Prompts are sorted by token length so a batch wastes little padding; each row stops at its own
new-token budget, at `<eos>`, or once its text contains a stop string. The answers equal those
of per-example greedy `model.generate` (tests check GPT-2, Llama and Qwen2 architectures).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm


@dataclass
class Request:
    prompt: str
    max_new_tokens: int
    stop: tuple[str, ...] = ()


def _cache_keyword(model) -> str:
    """transformers 5 names the KV cache `cache` (`past_key_values` is deprecated); 4.x used the old name."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _cut(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """The text up to the first stop string, and whether one was found."""
    positions = [text.find(s) for s in stops if s and s in text]
    return (text[:min(positions)], True) if positions else (text, False)


@torch.no_grad()
def greedy_decode(model, tokenizer, requests: list[Request], batch_size: int = 16,
                  progress: bool = False) -> list[str]:
    """Greedy continuation of each prompt, cut at its first stop string."""
    device = next(model.parameters()).device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos_ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    encoded = [tokenizer(r.prompt, add_special_tokens=False).input_ids for r in requests]
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


def _decode_batch(model, tokenizer, prompts: list[list[int]], requests: list[Request], pad_id: int,
                  eos_ids: set[int], device) -> list[str]:
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(prompts), width), dtype=torch.long, device=device)
    for row, ids in enumerate(prompts):  # left padding: every prompt ends at the last column
        input_ids[row, width - len(ids):] = torch.tensor(ids, device=device)
        mask[row, width - len(ids):] = 1
    generated = [[] for _ in prompts]
    finished = [False] * len(prompts)
    budget = max(r.max_new_tokens for r in requests)
    keyword, cache, step_ids = _cache_keyword(model), None, input_ids
    for step in range(budget):
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -step_ids.shape[1]:]
        out = model(input_ids=step_ids, attention_mask=mask, position_ids=positions, use_cache=True,
                    **{keyword: cache})
        cache = out[keyword]
        next_ids = out.logits[:, -1].argmax(-1)
        for row, token in enumerate(next_ids.tolist()):
            if finished[row]:
                continue
            if token in eos_ids:
                finished[row] = True
                continue
            generated[row].append(token)
            text = tokenizer.decode(generated[row], skip_special_tokens=True)
            if len(generated[row]) >= requests[row].max_new_tokens or _cut(text, requests[row].stop)[1]:
                finished[row] = True
        if all(finished):
            break
        step_ids = torch.where(torch.tensor(finished, device=device), torch.tensor(pad_id, device=device),
                               next_ids).unsqueeze(1)
        mask = torch.cat([mask, torch.ones((len(prompts), 1), dtype=mask.dtype, device=device)], dim=1)
    return [_cut(tokenizer.decode(g, skip_special_tokens=True), r.stop)[0] for g, r in zip(generated, requests)]
