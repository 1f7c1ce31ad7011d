"""Edge-level patching (the authors' patch_induction_heads.py) and head ablation on copy prompts.

1. Clean run.
2. Corrupted run: previous-token information removed, the value on every edge t-1 -> t of the
   prefix (up to the separator) zeroed in every layer and head; its keys and values are kept.
3. At each copied token dst (the query that predicts the next copied token):
   remove induction: the key of the source whose previous token equals dst's token (what an
   induction head finds) taken from the corrupted run; remove anti-induction: the value of the
   earlier occurrence of dst's token (which an anti-induction head reads for the token before it)
   taken from the corrupted run.
4. Coarser: the top-k heads by induction (or anti-induction) score zeroed.
Measured: teacher-forced accuracy (every copied token ranked first) and mean cross-entropy over the
copied tokens. As theirs, the first copied token is predicted at the separator, which no patch
touches.
"""

from __future__ import annotations

import numpy as np
import torch

from ..devices import input_device
from ..inference.measures import cross_entropy, exact_match, next_tokens
from .attention import Plan, edge_attention, patched
from .prompts import CopyPrompts

CONDITIONS = ("none", "remove_induction", "remove_anti_induction", "ablate_induction_heads",
              "ablate_anti_induction_heads")


def corruption_edges(prompts: CopyPrompts) -> list[tuple[int, int]]:
    """Every previous-token edge of the prefix: t-1 -> t up to the separator."""
    return [(t, t - 1) for t in range(1, prompts.copy_start)]


def induction_edges(prompts: CopyPrompts) -> list[tuple[int, int]]:
    """Copied token k reads the key of the position after its occurrence."""
    return [(prompts.copy_start + k, prompts.occurrence(k) + 1) for k in range(prompts.length)]


def anti_induction_edges(prompts: CopyPrompts) -> list[tuple[int, int]]:
    """Copied token k reads the value of its occurrence."""
    return [(prompts.copy_start + k, prompts.occurrence(k)) for k in range(prompts.length)]


def measure(logits: torch.Tensor, prompts: CopyPrompts, ids: torch.Tensor) -> tuple[list[bool], list[float]]:
    """Per prompt: every copied token ranked first, and the mean cross-entropy of the copied tokens."""
    copied, labels = next_tokens(logits, ids, prompts.scored)
    return exact_match(copied, labels).tolist(), cross_entropy(copied, labels).tolist()


def top_heads(scores: np.ndarray, k: int) -> set[tuple[int, int]]:
    """The k (layer, head) pairs with the highest score."""
    order = np.argsort(scores, axis=None)[::-1][:k]
    return {tuple(int(i) for i in np.unravel_index(flat, scores.shape)) for flat in order}


@torch.no_grad()
def patching(model, prompts: CopyPrompts, scores: dict[str, np.ndarray], ablate: int, batch_size: int = 32,
             function=edge_attention, clean: tuple[list[bool], list[float]] | None = None) -> dict[str, dict]:
    """Per condition: accuracy and mean cross-entropy over the prompts, and each prompt's own
    (`correct`, `losses`: what the intervals and paired tests read). `clean`: the unpatched run's
    per-prompt (correct, loss), when a pass already made them (it is not run again)."""
    device = input_device(model)
    results = {c: ([], []) for c in CONDITIONS}
    if clean is not None:
        results["none"] = (list(clean[0]), list(clean[1]))
    off = {"ablate_induction_heads": top_heads(scores["induction"], ablate),
           "ablate_anti_induction_heads": top_heads(scores["anti_induction"], ablate)}
    for start in range(0, len(prompts.ids), batch_size):
        ids = prompts.ids[start:start + batch_size].to(device)
        with patched(model, Plan(record_states=True, value_edges=corruption_edges(prompts)), function) as corrupted:
            model(input_ids=ids)
        plans = {
            **({} if clean is not None else {"none": Plan()}),
            "remove_induction": Plan(key_edges=induction_edges(prompts), replacement_keys=corrupted.keys),
            "remove_anti_induction": Plan(value_edges=anti_induction_edges(prompts),
                                          replacement_values=corrupted.values),
            **{c: Plan(heads_off=heads) for c, heads in off.items()},
        }
        for condition, plan in plans.items():
            with patched(model, plan, function):
                logits = model(input_ids=ids).logits
            correct, loss = measure(logits, prompts, ids)
            results[condition][0].extend(correct)
            results[condition][1].extend(loss)
    return {c: {"accuracy": float(np.mean(correct)), "loss": float(np.mean(loss)), "correct": correct, "losses": loss}
            for c, (correct, loss) in results.items()}
