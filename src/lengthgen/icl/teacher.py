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

from dataclasses import dataclass

from ..inference.forcing import Forced, ForcedItem, force


@dataclass
class TeacherItem:
    prompt: str  # the exact text the model is given (a chat template already applied)
    continuation: list[tuple[str, bool]]  # (text, is_symbol) segments of a correct answer
    neighbours: tuple[str, str] | None = None  # retrieval: (right, left) neighbour as spelled in the answer
    budget: int = 0  # > 0: also decode greedily, this many new tokens at most, cut at the stop strings
    stop: tuple[str, ...] = ()


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


def forced_items(tokenizer, items: list[TeacherItem]) -> tuple[list[ForcedItem], list[dict]]:
    """The items as token ids for `inference.forcing.force`, and the plan that reads its results."""
    plans = [_plan(tokenizer, item) for item in items]
    asked = [[(d[0], d[1]), (d[0], d[2])] if (d := plan["distinguishing"]) else [] for plan in plans]
    return [ForcedItem(p["prompt"], p["answer"], a, item.budget, item.stop)
            for item, p, a in zip(items, plans, asked)], plans


def scores_of(item: TeacherItem, plan: dict, result: Forced) -> dict:
    """symbol_accuracy (share of target symbols predicted right at every token), exact (all of
    them), target_logprob (sum over the symbols' tokens), and for retrieval p_right / p_left
    (probabilities of the neighbours' distinguishing token)."""
    answer = plan["answer"]
    spans = [span for span, (_, symbol) in zip(plan["spans"], item.continuation) if symbol]
    right = sum(all(result.predicted[k] == answer[k] for k in span) for span in spans)
    scores = {"symbol_accuracy": right / len(spans), "exact": right == len(spans),
              "target_logprob": sum(result.log_probs[k] for span in spans for k in span),
              "p_right": None, "p_left": None}
    if (d := plan["distinguishing"]) is not None:
        scores.update(p_right=result.asked[(d[0], d[1])], p_left=result.asked[(d[0], d[2])])
    return scores


def teacher_forced(model, tokenizer, items: list[TeacherItem], batch_size: int = 16,
                   progress: bool = False) -> list[dict]:
    """Per item its scores (`scores_of`), and where the item has a budget its greedy `completion`."""
    forced, plans = forced_items(tokenizer, items)
    return [{**scores_of(item, plan, result), **({"completion": result.completion} if item.budget else {})}
            for item, plan, result in zip(items, plans, force(model, tokenizer, forced, batch_size, progress))]
