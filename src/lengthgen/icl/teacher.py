"""Teacher-forced measures: they see a model too small to answer greedily.

A prompt is followed by what a correct model would emit, and one forward pass reads, at every
answer token, the model's top token and the log-probability it gives the right one (`force`). For
in-context prompts (`teacher_forced`): per target symbol, whether the argmax is right at each of its
tokens, the target's log-probability, and for retrieval the probability of the right-hand
neighbour of the used occurrence against the left-hand one, at the first token where their
spellings differ. Which neighbour the model prefers is defined even when every greedy answer is
wrong, so the induction bias shows in small models too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ..engine.decoding import padding_id
from ..runtime import input_device


@dataclass
class Forced:
    """One answer under teacher forcing: per answer token, the model's top token and the
    log-probability of the right one; and the probabilities asked for as (answer index, token)."""

    predicted: list[int]
    log_probs: list[float]
    asked: dict[tuple[int, int], float] = field(default_factory=dict)


@torch.no_grad()
def force(model, pad_id: int, items: list[tuple[list[int], list[int], list[tuple[int, int]]]], batch_size: int = 16,
          progress: bool = False) -> list[Forced]:
    """items: (prompt ids, answer ids, (answer index, token) pairs whose probability to return)."""
    device = input_device(model)
    order = sorted(range(len(items)), key=lambda i: -(len(items[i][0]) + len(items[i][1])))
    results: list[Forced | None] = [None] * len(items)
    bar = tqdm(total=len(items), disable=not progress, desc="teacher-forced", unit="ex")
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        sequences = [items[i][0] + items[i][1] for i in rows]
        width, keep = max(map(len, sequences)), max(len(items[i][1]) for i in rows) + 1
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, sequence in enumerate(sequences):  # left padding: every row's answer ends at the last column
            ids[r, width - len(sequence):] = torch.tensor(sequence)
            mask[r, width - len(sequence):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                       logits_to_keep=keep).logits
        for r, i in enumerate(rows):
            _, answer, asked = items[i]
            # logits[:, k] predicts the token at column width - keep + k + 1.
            rows_of_answer = torch.log_softmax(logits[r, keep - 1 - len(answer):keep - 1].float(), dim=-1)
            target = torch.tensor(answer, device=rows_of_answer.device)
            results[i] = Forced(rows_of_answer.argmax(-1).tolist(),
                                rows_of_answer.gather(1, target[:, None])[:, 0].tolist(),
                                {(k, t): float(rows_of_answer[k, t].exp()) for k, t in asked})
        bar.update(len(rows))
    bar.close()
    return results


@dataclass
class TeacherItem:
    prompt: str  # the exact text the model is given (a chat template already applied)
    continuation: list[tuple[str, bool]]  # (text, is_symbol) segments of a correct answer
    neighbours: tuple[str, str] | None = None  # retrieval: (right, left) neighbour as spelled in the answer


def _plan(tokenizer, item: TeacherItem) -> dict:
    """The item as token ids: prompt, answer, each segment's span, and the neighbours' distinguishing
    token (answer index, right token, left token) when they differ."""
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids
    segments = [encode(text) for text, _ in item.continuation]
    spans, start = [], 0
    for tokens in segments:
        spans.append(range(start, start + len(tokens)))
        start += len(tokens)
    distinguishing = None
    if item.neighbours is not None:
        right, left = (encode(n) for n in item.neighbours)
        k = next((k for k, (a, b) in enumerate(zip(right, left)) if a != b), None)
        if k is not None:  # the same symbol on both sides has no preference to measure
            first = next(span.start for span, (_, symbol) in zip(spans, item.continuation) if symbol)
            distinguishing = (first + k, right[k], left[k])
    return {"prompt": encode(item.prompt), "answer": [t for tokens in segments for t in tokens], "spans": spans,
            "distinguishing": distinguishing}


def teacher_forced(model, tokenizer, items: list[TeacherItem], batch_size: int = 16,
                   progress: bool = False) -> list[dict]:
    """Per item: symbol_accuracy (share of target symbols predicted right at every token),
    exact (all of them), target_logprob (sum over the symbols' tokens), and for retrieval
    p_right / p_left (probabilities of the neighbours' distinguishing token)."""
    plans = [_plan(tokenizer, item) for item in items]
    asked = [[(d[0], d[1]), (d[0], d[2])] if (d := plan["distinguishing"]) else [] for plan in plans]
    forced = force(model, padding_id(tokenizer), [(p["prompt"], p["answer"], a) for p, a in zip(plans, asked)],
                   batch_size, progress)
    results = []
    for item, plan, result in zip(items, plans, forced):
        answer = plan["answer"]
        spans = [span for span, (_, symbol) in zip(plan["spans"], item.continuation) if symbol]
        right = sum(all(result.predicted[k] == answer[k] for k in span) for span in spans)
        scores = {"symbol_accuracy": right / len(spans), "exact": right == len(spans),
                  "target_logprob": sum(result.log_probs[k] for span in spans for k in span),
                  "p_right": None, "p_left": None}
        if (d := plan["distinguishing"]) is not None:
            scores.update(p_right=result.asked[(d[0], d[1])], p_left=result.asked[(d[0], d[2])])
        results.append(scores)
    return results
