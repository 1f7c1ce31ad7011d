"""Per-head attention scores on sequences with a repeated random segment (SPEC section 6).

For a sequence ``R R`` (a random segment repeated), at a position t in the second copy whose
token first occurred at t - L:
  previous-token   attention from t to t - 1
  duplicate-token  to t - L, the earlier occurrence itself
  induction        to t - L + 1, the token *after* the earlier occurrence
  anti-induction   to t - L - 1, the token *before* it
Each score is the mean attention weight over those positions and over sequences: 1.0 means the
head attends there always; a uniform head scores about 1/t.
"""

from __future__ import annotations

import numpy as np
import torch

SCORES = ("previous_token", "duplicate_token", "induction", "anti_induction")


def repeated_sequences(token_ids: list[int], segment: int, count: int, seed: int = 0,
                       prefix: list[int] | None = None) -> torch.Tensor:
    """`count` sequences prefix + R + R, R drawn without replacement from `token_ids`."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        part = rng.choice(token_ids, size=segment, replace=False).tolist()
        rows.append((prefix or []) + part + part)
    return torch.tensor(rows)


@torch.no_grad()
def head_scores(model, sequences: torch.Tensor, segment: int, prefix: int = 0) -> dict[str, np.ndarray]:
    """Score arrays of shape (layers, heads) for each score in SCORES."""
    device = next(model.parameters()).device
    attentions = model(input_ids=sequences.to(device), output_attentions=True).attentions
    if attentions is None or attentions[0] is None:
        raise ValueError("the model returned no attention weights; load it with attn_implementation='eager'")
    second = torch.arange(prefix + segment + 1, prefix + 2 * segment)  # needs t - L - 1 inside the first copy
    offsets = {"previous_token": 1, "duplicate_token": segment, "induction": segment - 1,
               "anti_induction": segment + 1}
    scores = {}
    for name, back in offsets.items():
        per_layer = [a[:, :, second, second - back].mean(dim=(0, 2)).float().cpu().numpy() for a in attentions]
        scores[name] = np.stack(per_layer)
    return scores
