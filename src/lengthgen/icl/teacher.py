"""Teacher-forced measures of an in-context prompt: they see a model too small to answer greedily.

The prompt is followed by what a correct model would emit (`Prompt.continuation`), and one forward
pass reads, for every target symbol, whether the model's argmax is right at each of its tokens and
the log-probability it gives them. For retrieval it also compares the two neighbours of the
occurrence the answer is read from: the probability of the right-hand neighbour against the
left-hand one, at the first token where their spellings differ. Which one the model prefers is
defined even when every greedy answer is wrong, so the induction bias shows in small models too.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from ..runtime import input_device


@dataclass
class TeacherItem:
    prompt: str  # the exact text the model is given (a chat template already applied)
    continuation: list[tuple[str, bool]]  # (text, is_symbol) segments of a correct answer
    neighbours: tuple[str, str] | None = None  # retrieval: (right, left) neighbour as spelled in the answer


def _encode(tokenizer, item: TeacherItem):
    prompt = tokenizer(item.prompt, add_special_tokens=False).input_ids
    segments = [tokenizer(text, add_special_tokens=False).input_ids for text, _ in item.continuation]
    return prompt, segments


@torch.no_grad()
def teacher_forced(model, tokenizer, items: list[TeacherItem], batch_size: int = 16,
                   progress: bool = False) -> list[dict]:
    """Per item: symbol_accuracy (share of target symbols predicted right at every token),
    exact (all of them), target_logprob (sum over the symbols' tokens), and for retrieval
    p_right / p_left (probabilities of the neighbours' distinguishing token)."""
    device = input_device(model)
    encoded = [_encode(tokenizer, item) for item in items]
    order = sorted(range(len(items)), key=lambda i: -(len(encoded[i][0]) + sum(map(len, encoded[i][1]))))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    results: list[dict | None] = [None] * len(items)
    bar = tqdm(total=len(items), disable=not progress, desc="teacher-forced", unit="ex")
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        sequences = [encoded[i][0] + [t for s in encoded[i][1] for t in s] for i in rows]
        tails = [sum(map(len, encoded[i][1])) for i in rows]
        width, keep = max(map(len, sequences)), max(tails) + 1
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, sequence in enumerate(sequences):  # left padding: every row's answer ends at the last column
            ids[r, width - len(sequence):] = torch.tensor(sequence)
            mask[r, width - len(sequence):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                       logits_to_keep=keep).logits.float()
        # logits[:, k] predicts the token at column width - keep + k + 1.
        log_probs = torch.log_softmax(logits, dim=-1).cpu()
        for r, i in enumerate(rows):
            results[i] = _scores(items[i], encoded[i][1], log_probs[r], keep - 1 - tails[r], tokenizer)
        bar.update(len(rows))
    bar.close()
    return results


def _scores(item: TeacherItem, segments: list[list[int]], log_probs: torch.Tensor, first: int, tokenizer) -> dict:
    """first: the row of `log_probs` that predicts the continuation's first token."""
    right, logprob, at, symbols = 0, 0.0, first, 0
    neighbour_row = None
    for (_, is_symbol), tokens in zip(item.continuation, segments):
        rows = log_probs[at:at + len(tokens)]
        hits = [int(rows[k].argmax()) == token for k, token in enumerate(tokens)]
        if is_symbol:
            symbols += 1
            right += all(hits)
            logprob += float(sum(rows[k, token] for k, token in enumerate(tokens)))
            if neighbour_row is None:
                neighbour_row = at
        at += len(tokens)
    scores = {"symbol_accuracy": right / symbols, "exact": right == symbols, "target_logprob": logprob,
              "p_right": None, "p_left": None}
    if item.neighbours is not None:
        right_ids, left_ids = (tokenizer(n, add_special_tokens=False).input_ids for n in item.neighbours)
        k = next((k for k, (a, b) in enumerate(zip(right_ids, left_ids)) if a != b), None)
        if k is not None:  # the same symbol on both sides has no preference to measure
            row = log_probs[neighbour_row + k].exp()
            scores.update(p_right=float(row[right_ids[k]]), p_left=float(row[left_ids[k]]))
    return scores
