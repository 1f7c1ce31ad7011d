"""Exact-match scoring of encoded examples: teacher-forced (primary) and greedy decoding.

Examples are grouped by sequence length, so each batch needs no padding: positions, masks and
the answer's place are the same for every row, and results cannot depend on padding side.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import torch

from ..devices import input_device
from ..inference.measures import next_tokens, top_tokens
from .sequences import Encoded
from .settings import precision_autocast


@dataclass
class Scored:
    teacher_forced: bool
    teacher_forced_prediction: list[int]
    greedy: bool | None = None
    greedy_prediction: list[int] | None = None


def _groups(examples: list[Encoded], batch_size: int):
    by_length = defaultdict(list)
    for index, example in enumerate(examples):
        by_length[(len(example.ids), example.answer_start)].append(index)
    for key in sorted(by_length):
        indices = by_length[key]
        for start in range(0, len(indices), batch_size):
            yield indices[start:start + batch_size]


@torch.no_grad()
def score(model, examples: list[Encoded], target_lengths: list[int], batch_size: int = 256,
          greedy: bool = False, eos_id: int | None = None, pad_id: int | None = None,
          precision: str = "fp32") -> list[Scored]:
    """Score each example; `target_lengths[i]` answer tokens are scored (the target, and <eos>
    where the layout scores it).

    Teacher-forced: right iff the argmax is right at every scored answer position.
    Greedy: right iff decoding from the prompt yields exactly the target, then <eos>.
    """
    model.eval()
    device = input_device(model)
    results: list[Scored | None] = [None] * len(examples)
    autocast = precision_autocast(device, precision)
    for indices in _groups(examples, batch_size):
        first = examples[indices[0]]
        start, n_scored = first.answer_start, target_lengths[indices[0]]
        n_answer = len(first.ids) - start  # the target and its <eos>
        ids = torch.tensor([examples[i].ids for i in indices], device=device)
        with autocast:
            logits = model(input_ids=ids).logits
        predicted, hits = top_tokens(*next_tokens(logits, ids, slice(start - 1, start - 1 + n_scored)))
        correct = hits.all(-1).tolist()
        for row, i in enumerate(indices):
            results[i] = Scored(correct[row], predicted[row].tolist())
        if greedy:
            with autocast:
                generated = model.generate(input_ids=ids[:, :start], attention_mask=torch.ones_like(ids[:, :start]),
                                           max_new_tokens=n_answer, do_sample=False, eos_token_id=eos_id,
                                           pad_token_id=pad_id)[:, start:]
            answer = ids[:, start:]
            for row, i in enumerate(indices):
                tokens = generated[row].tolist()
                results[i].greedy = tokens[:n_answer] == answer[row].tolist()
                results[i].greedy_prediction = tokens[:tokens.index(eos_id)] if eos_id in tokens else tokens
    return results


def teacher_forced_accuracy(model, examples: list[Encoded], target_lengths: list[int], batch_size: int = 256,
                            precision: str = "fp32") -> float:
    scored = score(model, examples, target_lengths, batch_size, precision=precision)
    return sum(s.teacher_forced for s in scored) / len(scored)
