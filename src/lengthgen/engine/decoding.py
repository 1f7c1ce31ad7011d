"""Batched greedy decoding for in-context evaluation: KV cache, left padding, per-row stops.

Prompts are sorted by token length so a batch wastes little padding; the prefix all prompts of a
batch share (the demonstrations of a few-shot file) is encoded once; each row stops at its own
new-token budget, at `<eos>`, or once its text contains a stop string. The answers equal those
of per-example greedy `model.generate` (tests check GPT-2, Llama and Qwen2 architectures).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm
from transformers import StaticCache

from ..models.positions import position_limit
from ..runtime import input_device


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
    device = input_device(model)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos_ids = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
    encoded = [tokenizer(r.prompt, add_special_tokens=False).input_ids for r in requests]
    limit = position_limit(model)
    longest = max((len(e) + r.max_new_tokens for e, r in zip(encoded, requests)), default=0)
    if limit is not None and longest > limit:
        raise ValueError(f"a prompt and its answer budget need {longest} positions, more than the model's {limit}: "
                         "use shorter lengths (or fewer shots) for this model")
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


def _preallocated_cache(model, length: int):
    """A static KV cache of `length` positions where the architecture supports one: appending to a
    growing cache copies it at every step, which costs more than the model itself on a CPU."""
    if not getattr(model, "_can_compile_fullgraph", False) or getattr(model, "hf_device_map", None):
        return None  # the model makes its own dynamic cache (also when accelerate spreads it over devices)
    try:
        return StaticCache(config=model.config, max_cache_len=length)
    except TypeError:  # older transformers: another signature
        return None


MIN_SHARED_PREFIX = 8  # tokens; below this the prefix pass saves less than it costs


def _shared_prefix(prompts: list[list[int]]) -> int:
    """Length of the token prefix every prompt shares, leaving each at least one token of its own."""
    shortest = min(len(p) for p in prompts)
    common = 0
    while common < shortest - 1 and all(p[common] == prompts[0][common] for p in prompts):
        common += 1
    return common if len(prompts) > 1 and common >= MIN_SHARED_PREFIX else 0


def _decode_batch(model, tokenizer, prompts: list[list[int]], requests: list[Request], pad_id: int,
                  eos_ids: set[int], device) -> list[str]:
    """Few-shot prompts of one file share their demonstrations: that prefix is encoded once and its
    KV cache copied to every row; each row's own suffix follows after padding, masked out."""
    keyword, n = _cache_keyword(model), len(prompts)
    common = _shared_prefix(prompts)
    suffixes = [p[common:] for p in prompts]
    width = max(len(s) for s in suffixes)
    budget = max(r.max_new_tokens for r in requests)
    cache = _preallocated_cache(model, common + width + budget)
    written = 0  # cache positions filled so far
    prefix_mask = torch.ones((n, common), dtype=torch.long, device=device)
    if common:
        prefix = torch.tensor([prompts[0][:common]], device=device)
        shared = model(input_ids=prefix, use_cache=True, position_ids=torch.arange(common, device=device)[None],
                       **{keyword: None})[keyword]
        if cache is None:
            shared.batch_repeat_interleave(n)
            cache = shared
        else:  # copy the one row into every row of the preallocated cache
            for index, layer in enumerate(shared.layers):
                cache.update(layer.keys.expand(n, -1, -1, -1), layer.values.expand(n, -1, -1, -1), index)
        written = common
    step_ids = torch.full((n, width), pad_id, dtype=torch.long, device=device)
    suffix_mask = torch.zeros((n, width), dtype=torch.long, device=device)
    for row, ids in enumerate(suffixes):  # left padding: every prompt ends at the last column
        step_ids[row, width - len(ids):] = torch.tensor(ids, device=device)
        suffix_mask[row, width - len(ids):] = 1
    mask = torch.cat([prefix_mask, suffix_mask], dim=1)
    generated = [[] for _ in prompts]
    finished = [False] * n
    for _ in range(budget):
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -step_ids.shape[1]:]
        cache_positions = torch.arange(written, written + step_ids.shape[1], device=device)
        full_mask = mask
        if isinstance(cache, StaticCache):  # the mask spans the whole preallocated cache
            full_mask = torch.cat([mask, mask.new_zeros((n, common + width + budget - mask.shape[1]))], dim=1)
        out = model(input_ids=step_ids, attention_mask=full_mask, position_ids=positions, use_cache=True,
                    cache_position=cache_positions, **{keyword: cache})
        cache = out[keyword]
        written += step_ids.shape[1]
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
        mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=device)], dim=1)
    return [_cut(tokenizer.decode(g, skip_special_tokens=True), r.stop)[0] for g, r in zip(generated, requests)]
