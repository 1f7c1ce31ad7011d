"""One attention function for every Hugging Face decoder: records attention weights, and patches
single attention edges (query position dst reading key or value position src) in one pass.

Registered with transformers' attention interface (`AttentionInterface`, with the eager mask),
so GPT-2, Llama, Qwen2, Gemma-3 and any model that routes attention through that interface take it
unchanged: no per-architecture hooks. Where the authors recomputed each attention module once per
query position, an edge here is one entry of the score or output matrix, so every position is done
in the same forward pass.

An edge patch replaces, for the query at dst only, what src offers: its key (the score
q_dst . k_src uses another key) or its value (the output adds w_dst,src * (v' - v_src)). The keys
and values are those the model's attention sees (after rotary embeddings and any q/k norm: a
per-position map, so patching them equals patching the projections the authors patched).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

NAME = "lengthgen_edges"


class NotPatchable(RuntimeError):
    """A model whose attention does not go through transformers' attention interface."""


@dataclass
class Plan:
    """What the attention function does in one forward pass.

    record_weights: keep every layer's attention weights (`weights`: batch x heads x positions^2,
    the largest record, several GB for a 70B model, so kept only where asked).
    record_states: keep every layer's keys and values (`keys`, `values`).
    key_edges / value_edges: (dst, src) pairs, the same for every row of the batch, patched in every
    layer; replacement keys / values per layer (None for values: zero them).
    heads_off: (layer, head) pairs whose output is zeroed (head ablation).
    """

    record_weights: bool = False
    record_states: bool = False
    key_edges: list[tuple[int, int]] = field(default_factory=list)
    value_edges: list[tuple[int, int]] = field(default_factory=list)
    keys: dict[int, torch.Tensor] = field(default_factory=dict)
    values: dict[int, torch.Tensor] = field(default_factory=dict)
    replacement_keys: dict[int, torch.Tensor] | None = None
    replacement_values: dict[int, torch.Tensor] | None = None
    heads_off: set[tuple[int, int]] = field(default_factory=set)
    weights: dict[int, torch.Tensor] = field(default_factory=dict)


_ACTIVE: list[Plan] = []


def _repeat(states: torch.Tensor, heads: int) -> torch.Tensor:
    """Grouped-query key/value heads repeated to one per query head."""
    groups = heads // states.shape[1]
    return states if groups == 1 else states.repeat_interleave(groups, dim=1)


def edge_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **kwargs):
    """Eager attention with the active plan's records and edge patches applied."""
    plan, layer = _ACTIVE[-1], module.layer_idx
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    if plan.record_states:
        plan.keys[layer], plan.values[layer] = key.detach(), value.detach()
    heads = query.shape[1]
    keys, values = _repeat(key, heads), _repeat(value, heads)
    scores = torch.matmul(query, keys.transpose(2, 3)) * scaling
    if plan.key_edges:
        other = _repeat(plan.replacement_keys[layer], heads)
        dst, src = (torch.tensor(v, device=query.device) for v in zip(*plan.key_edges))
        scores[:, :, dst, src] = (query[:, :, dst] * other[:, :, src]).sum(-1) * scaling
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if attention_mask is not None:
        scores = scores + attention_mask[:, :, :, : keys.shape[-2]]
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(weights, values)
    if plan.value_edges:
        dst, src = (torch.tensor(v, device=query.device) for v in zip(*plan.value_edges))
        other = (torch.zeros_like(values) if plan.replacement_values is None
                 else _repeat(plan.replacement_values[layer], heads))
        change = (other[:, :, src] - values[:, :, src]) * weights[:, :, dst, src].unsqueeze(-1)
        output = output.index_add(2, dst, change)
    for off_layer, head in plan.heads_off:
        if off_layer == layer:
            output[:, head] = 0.0
    if plan.record_weights:
        plan.weights[layer] = weights.detach()
    return output.transpose(1, 2).contiguous(), weights


def _register(function) -> str:
    """Register an attention function (with the eager mask) under its own name; return the name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    name = NAME if function is edge_attention else f"{NAME}_{function.__name__}"
    AttentionInterface.register(name, function)
    AttentionMaskInterface.register(name, eager_mask)
    return name


def check_patchable(model) -> None:
    """A clear error for a model whose attention cannot be routed through this function."""
    attention = [m for m in model.modules() if hasattr(m, "layer_idx") and hasattr(m, "scaling")]
    if not getattr(model, "_supports_attention_backend", False) or not attention:
        raise NotPatchable(f"{type(model).__name__} ({model.config.model_type}) does not route its attention through "
                           "transformers' attention interface, so its attention edges cannot be patched")


@contextmanager
def patched(model, plan: Plan, function=edge_attention):
    """Run the model with `plan` (the model's own attention implementation restored after).
    `function`: the attention function that carries the plan out (another one only to check this)."""
    check_patchable(model)
    name = _register(function)
    before = model.config._attn_implementation
    model.set_attn_implementation(name)
    _ACTIVE.append(plan)
    try:
        yield plan
    finally:
        _ACTIVE.pop()
        model.set_attn_implementation(before)
