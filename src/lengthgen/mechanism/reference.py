"""The straightforward edge patching, for checking and measuring `attention.edge_attention`: every
query position's attention recomputed on its own, with that query's patched keys and values (the
authors' per-position recomputation), in plain loops. Same plan, same results, much slower."""

from __future__ import annotations

import torch

from . import attention


def per_position_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None,
                           **kwargs):
    plan, layer = attention._ACTIVE[-1], module.layer_idx
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    heads, width = query.shape[1], query.shape[2]
    keys, values = attention._repeat(key, heads), attention._repeat(value, heads)
    rows, weights_rows = [], []
    for dst in range(width):
        k, v = keys.clone(), values.clone()
        for edge_dst, src in plan.key_edges:
            if edge_dst == dst:
                k[:, :, src] = attention._repeat(plan.replacement_keys[layer], heads)[:, :, src]
        for edge_dst, src in plan.value_edges:
            if edge_dst == dst:
                v[:, :, src] = (0.0 if plan.replacement_values is None
                                else attention._repeat(plan.replacement_values[layer], heads)[:, :, src])
        scores = torch.einsum("bhd,bhkd->bhk", query[:, :, dst], k) * scaling
        if softcap is not None:
            scores = torch.tanh(scores / softcap) * softcap
        if attention_mask is not None:
            scores = scores + attention_mask[:, :, dst, : k.shape[-2]]
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
        rows.append(torch.einsum("bhk,bhkd->bhd", weights, v))
        weights_rows.append(weights)
    output = torch.stack(rows, dim=2)
    for off_layer, head in plan.heads_off:
        if off_layer == layer:
            output[:, head] = 0.0
    if plan.record_states:
        plan.keys[layer], plan.values[layer] = key.detach(), value.detach()
    if plan.record_weights:
        plan.weights[layer] = torch.stack(weights_rows, dim=2)
    return output.transpose(1, 2).contiguous(), torch.stack(weights_rows, dim=2)
