"""Teacher forcing, and greedy decoding that starts from it.

One forward pass over a prompt followed by its reference answer reads, at every answer token, the
model's top token and the log-probability of the right one (the teacher-forced measures), and the
probabilities a caller asks for. The same pass is the start of greedy decoding: a greedy answer
agrees with the reference up to the first token where the model's top token differs (k), so the
pass already holds the first k + 1 greedy tokens and the key/value cache of everything before
them. A row that is finished within those tokens (its `<eos>`, a stop string, or its budget)
needs no decoding at all; the others continue with `generate` from that cache, in groups that
share a starting point. The prompt is read once instead of once for the measures and once for the
decoding, and a model that copies well decodes little. The answers equal greedy `generate` from
the prompt alone (tests check GPT-2, Llama and Qwen2 architectures).

Layout of a batch: prompts left-padded to one width W, each answer from column W on, pads after
it (causal attention never lets a later pad change an earlier position).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ..devices import input_device
from ..models.positions import check_fits
from .batches import left_padded, padding_id
from .decoding import stop_cut

# Costs of continuing in groups, in row-steps (one row decoded one token): a decoding step costs as
# much again as this many rows (reading the weights), a group as much as these row-steps (a cache
# copy, a generate call).
STEP_ROWS = 8
GROUP_OVERHEAD = 16


@dataclass
class ForcedItem:
    """A prompt and the answer a correct model gives, as token ids; `asked`: (answer index, token)
    pairs whose probability to return; `budget` > 0 also decodes greedily, with that many new
    tokens at most, cut at `<eos>` and at the first of the `stop` strings."""

    prompt: list[int]
    answer: list[int]
    asked: list[tuple[int, int]] = field(default_factory=list)
    budget: int = 0
    stop: tuple[str, ...] = ()


@dataclass
class Forced:
    """Per answer token, the model's top token and the log-probability of the right one; the
    probabilities asked for; and, when the item asked for decoding, the greedy completion."""

    predicted: list[int]
    log_probs: list[float]
    asked: dict[tuple[int, int], float] = field(default_factory=dict)
    completion: str | None = None


def _sliding(model) -> bool:
    """Models with sliding-window layers keep a cache this module does not copy: they decode apart."""
    config = model.config
    return bool(getattr(config, "use_sliding_window", False)) or "sliding_attention" in (
        getattr(config, "layer_types", None) or ())


@torch.no_grad()
def force(model, tokenizer, items: list[ForcedItem], batch_size: int = 16, progress: bool = False) -> list[Forced]:
    """Teacher-forced reading of every item, and the greedy completion of those with a budget."""
    check_fits(model, max((len(i.prompt) + max(len(i.answer), i.budget) for i in items), default=0))
    order = sorted(range(len(items)), key=lambda i: -len(items[i].prompt))
    results: list[Forced | None] = [None] * len(items)
    bar = tqdm(total=len(items), disable=not progress, desc="forced", unit="ex")
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        for i, result in zip(rows, _batch(model, tokenizer, [items[i] for i in rows])):
            results[i] = result
        bar.update(len(rows))
    bar.close()
    return results


def _batch(model, tokenizer, items: list[ForcedItem]) -> list[Forced]:
    ids, mask, width = left_padded([i.prompt for i in items], padding_id(tokenizer), [i.answer for i in items])
    device, longest = input_device(model), ids.shape[1] - width
    decoding = any(i.budget > 0 for i in items)
    shared = decoding and not _sliding(model)
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                position_ids=(mask.cumsum(-1) - 1).clamp(min=0).to(device), logits_to_keep=longest + 1,
                use_cache=shared)
    # logits[:, k] predicts the token at column width + k: answer token k, or (k = len) the one after it.
    # Read row by row: a batch's log-probabilities over a 50,000-token vocabulary take gigabytes at once.
    top = out.logits.argmax(-1).cpu()
    results = []
    for row, item in enumerate(items):
        log_probs = torch.log_softmax(out.logits[row, :len(item.answer) + 1].float(), dim=-1)
        target = torch.tensor(item.answer, dtype=torch.long, device=log_probs.device)
        results.append(Forced(top[row, :len(item.answer)].tolist(),
                              log_probs[:len(item.answer)].gather(1, target[:, None])[:, 0].tolist(),
                              {(k, t): float(log_probs[k, t].exp()) for k, t in item.asked}))
    if decoding:
        _decode(model, tokenizer, items, results, top, ids, mask, out.past_key_values if shared else None, width)
    return results


def _finish(tokenizer, tokens: list[int], item: ForcedItem) -> str | None:
    """The completion these greedy tokens make, or None while more tokens could change it."""
    eos = tokenizer.eos_token_id
    cut = tokens[:item.budget]
    ends = eos is not None and eos in cut
    cut = cut[:cut.index(eos)] if ends else cut
    text, stopped = stop_cut(tokenizer.decode(cut, skip_special_tokens=True), item.stop)
    return text if ends or stopped or len(tokens) >= item.budget else None


def _decode(model, tokenizer, items, results, top, ids, mask, cache, width) -> None:
    """Greedy completions: from the forced pass where they agree with the answer, from its cache
    (or, without one, from the prompt) for the rest."""
    started = {}
    for row, item in enumerate(items):
        if item.budget <= 0:
            continue
        wrong = [k for k, (p, t) in enumerate(zip(top[row].tolist(), item.answer)) if p != t]
        agree = wrong[0] if wrong else len(item.answer)
        tokens = item.answer[:agree] + [int(top[row, agree])]
        results[row].completion = _finish(tokenizer, tokens, item)
        if results[row].completion is None:
            started[row] = (agree, tokens) if cache is not None else (0, [])
    for group in _groups(items, started):
        start = min(started[r][0] for r in group)
        _continue(model, tokenizer, items, results, group, start, started, ids, mask, cache, width)


def _groups(items, started: dict[int, tuple[int, list[int]]]) -> list[list[int]]:
    """Rows that continue together from one starting point (the earliest of the group; its other
    rows re-decode from there). A group costs its steps times (STEP_ROWS + its rows), at most its
    largest budget less its start; rows sorted by start are cut into the groups that cost least,
    by dynamic programming."""
    rows = sorted(started, key=lambda r: started[r][0])
    if not rows:
        return []
    budget = [items[r].budget for r in rows]
    best, cut = [0.0] + [float("inf")] * len(rows), [0] * (len(rows) + 1)
    for end in range(1, len(rows) + 1):
        for first in range(end):
            steps = max(budget[first:end]) - started[rows[first]][0]
            cost = best[first] + GROUP_OVERHEAD + (STEP_ROWS + end - first) * steps
            if cost < best[end]:
                best[end], cut[end] = cost, first
    groups, end = [], len(rows)
    while end:
        groups.append(rows[cut[end]:end])
        end = cut[end]
    return groups[::-1]


class TextStops:
    """Stops a row once its answer so far (from column `start` on) contains one of its stop
    strings. Each row's answer is decoded afresh: unlike `generate`'s `stop_strings`, nothing is
    precomputed over the whole vocabulary (a second per call for a 50,000-token tokenizer)."""

    def __init__(self, tokenizer, stops: list[tuple[str, ...]], start: int):
        self.tokenizer, self.stops, self.start = tokenizer, stops, start

    def __call__(self, input_ids, scores, **kwargs):
        texts = self.tokenizer.batch_decode(input_ids[:, self.start:], skip_special_tokens=True)
        return torch.tensor([any(s and s in text for s in stops) for text, stops in zip(texts, self.stops)],
                            device=input_ids.device)


def _continue(model, tokenizer, items, results, group, start, started, ids, mask, cache, width) -> None:
    """Greedy decoding of a group's rows from `start` answer tokens in: their cache up to there
    (copied from the forced pass) and the greedy token at `start`; without a cache, from the prompt."""
    from transformers import DynamicCache

    device, pad_id = input_device(model), padding_id(tokenizer)
    index = torch.tensor(group)
    prefix = width + start
    known = [started[r][1][:start + 1] for r in group]  # the greedy tokens the group starts from
    inputs = torch.cat([ids[index, :width], torch.tensor(known, dtype=torch.long).reshape(len(group), -1)], dim=1)
    attention = torch.cat([mask[index, :width], torch.ones(len(group), inputs.shape[1] - width, dtype=torch.long)],
                          dim=1)
    options = {}
    if cache is not None:
        rows_on = {}
        own = DynamicCache()
        for layer, stored in enumerate(cache.layers):
            where = rows_on.setdefault(stored.keys.device, index.to(stored.keys.device))
            own.update(stored.keys[where, :, :prefix], stored.values[where, :, :prefix], layer)
        options["past_key_values"] = own
    budget = max(items[r].budget for r in group) - len(known[0])
    stops = [items[r].stop for r in group]
    with warnings.catch_warnings():  # `past_key_values` is renamed in later transformers; both read it now
        warnings.simplefilter("ignore", FutureWarning)
        out = model.generate(input_ids=inputs.to(device), attention_mask=attention.to(device), do_sample=False,
                             max_new_tokens=budget, pad_token_id=pad_id, eos_token_id=tokenizer.eos_token_id,
                             stopping_criteria=[TextStops(tokenizer, stops, width)], **options)
    for position, row in enumerate(group):
        tokens = known[position] + out[position, inputs.shape[1]:].tolist()
        finished = _finish(tokenizer, tokens, items[row])
        # generate also stops at a stop string that began in the prompt: what it gave is the answer
        results[row].completion = finished if finished is not None else stop_cut(
            tokenizer.decode(tokens[:items[row].budget], skip_special_tokens=True), items[row].stop)[0]
