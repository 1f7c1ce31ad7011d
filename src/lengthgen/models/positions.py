"""Which models have learned absolute positions, and how many."""

from __future__ import annotations

# Architectures whose positions come from a learned absolute embedding table.
ABSOLUTE_POSITION_TYPES = frozenset({"gpt2", "gpt_neo", "gpt_bigcode", "opt"})


def uses_absolute_positions(model) -> bool:
    """Models with learned absolute positions need random position offsets in training."""
    return model.config.model_type in ABSOLUTE_POSITION_TYPES


def position_limit(model) -> int | None:
    """How many positions an absolute-position model has (None: no learned table to run past)."""
    if not uses_absolute_positions(model):
        return None
    config = model.config
    return getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
