"""Which models have learned absolute positions, and how many."""

from __future__ import annotations

from ..runtime import ExpectedFailure

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


class TooLong(ExpectedFailure, ValueError):
    """Sequences longer than a model's learned positions: the message names both and what to do."""


def check_fits(model, longest: int, what: str = "a prompt and its answer") -> None:
    """Raise TooLong when `longest` positions are more than an absolute-position model has."""
    limit = position_limit(model)
    if limit is not None and longest > limit:
        raise TooLong(f"{what} need {longest} positions, more than the model's {limit} "
                      f"({getattr(model.config, '_name_or_path', '') or model.config.model_type}): use shorter "
                      "lengths, fewer demonstrations or a shorter prompt variant for this model")
