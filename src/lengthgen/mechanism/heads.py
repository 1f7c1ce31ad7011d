"""Per-head alignment scores on copy prompts (docs/spec.md §6, the authors' get_alignment.py).

For a head, the mean attention weight over prompts and positions from
  previous-token     each test-input token (2..L) to the token before it;
  duplicate          each copied token to its earlier occurrence in the test input;
  induction          ... to the token after that occurrence (forward copying's edge: that token's
                     previous-token information matches the current token, its value is the next);
  anti-induction     ... to the occurrence itself (backward copying's edge: a previous-token head has
                     written the token before it there, and the value carries it out; the edge the
                     patching removes). The duplicate edge, read on backward copies (docs/spec.md §6);
  before-occurrence  ... to the token before the occurrence: positional, not a circuit of content
                     (that position cannot know what follows it), but where a model that copies
                     backward by position attends; never the anti-induction score.
The copied tokens scored are those whose occurrence has both neighbours in the test input (the
authors: copy tokens 2..L-1). A uniform head scores about 1/t; 1.0 means it always attends there.
"""

from __future__ import annotations

import numpy as np
import torch

from ..devices import input_device
from .attention import Plan, patched
from .prompts import CopyPrompts

# Where each score reads, relative to the copied token's earlier occurrence.
OFFSETS = {"duplicate": 0, "induction": 1, "anti_induction": 0, "before_occurrence": -1}


def score_edges(prompts: CopyPrompts) -> dict[str, list[tuple[int, int]]]:
    """(query, key) positions each score averages over."""
    start, length = prompts.input_start, prompts.length
    copied = [k for k in range(length) if 0 < prompts.occurrence(k) - start < length - 1]
    edges = {"previous_token": [(start + i, start + i - 1) for i in range(1, length)]}
    for name, shift in OFFSETS.items():
        edges[name] = [(prompts.copy_start + k, prompts.occurrence(k) + shift) for k in copied]
    return edges


@torch.no_grad()
def prompt_head_scores(model, prompts: CopyPrompts, batch_size: int = 32, read_logits=None) -> dict[str, np.ndarray]:
    """(prompts, layers, heads) arrays of each score, from the weights the model's attention
    computes; `read_logits(logits, ids)`, if given, is called with each batch's logits (the clean
    run's measures come from the same pass)."""
    device, parts = input_device(model), []
    edges = score_edges(prompts)
    for start in range(0, len(prompts.ids), batch_size):
        batch = prompts.ids[start:start + batch_size].to(device)
        with patched(model, Plan(record_weights=True)) as plan:
            logits = model(input_ids=batch).logits
        if read_logits is not None:
            read_logits(logits, batch)
        layers = [plan.weights[layer].float() for layer in sorted(plan.weights)]
        parts.append({name: torch.stack([w[:, :, [q for q, _ in pairs], [k for _, k in pairs]].mean(-1) for w in layers],
                                        dim=1).cpu()
                      for name, pairs in edges.items() if pairs})
    return {name: torch.cat([part[name] for part in parts]).numpy() for name in parts[0]}


def head_scores(model, prompts: CopyPrompts, batch_size: int = 32) -> dict[str, np.ndarray]:
    """(layers, heads) arrays of each score: the mean over prompts."""
    return {name: values.mean(0) for name, values in prompt_head_scores(model, prompts, batch_size).items()}
