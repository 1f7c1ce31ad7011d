"""Teacher-forced measures: given the right prefix, is each answer token the model's top token,
and what is its cross-entropy. Every stage that scores a model this way reads the logits here
(exact match of trained models, copy accuracy and patching losses of the mechanism, next-token
accuracy of pretraining); the forced pass of `forcing` keeps the same readings per token.

`logits[:, k]` always predicts `targets[:, k]`: `next_tokens` picks that pairing out of a pass
over whole sequences, where the logits at position t predict the token at t + 1.
"""

from __future__ import annotations

import torch


def next_tokens(logits: torch.Tensor, ids: torch.Tensor, positions) -> tuple[torch.Tensor, torch.Tensor]:
    """The logits at `positions` (a tensor of indices or a slice) and the tokens they predict, the
    input's next ones."""
    following = positions + 1 if isinstance(positions, torch.Tensor) else slice(positions.start + 1, positions.stop + 1)
    return logits[:, positions], ids[:, following].to(logits.device)


def top_tokens(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(the model's top token at each answer position, whether it is the target there)."""
    predicted = logits.argmax(-1)
    return predicted, predicted == targets.to(predicted.device)


def exact_match(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per row: the top token is right at every answer position."""
    return top_tokens(logits, targets)[1].all(-1)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per row: the mean cross-entropy (in float32) of its answer tokens."""
    return torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), targets.to(logits.device),
                                             reduction="none").mean(-1)
