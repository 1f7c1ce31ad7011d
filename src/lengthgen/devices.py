"""Where models run: the one place that chooses the device, and that finds where a model's inputs go."""

from __future__ import annotations


def pick_device(requested: str = "auto"):
    """The torch device to run on: CUDA when present (for "auto"), else what was asked for."""
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def input_device(model):
    """Where a model's inputs go: its device, or for a model accelerate placed across devices the
    device its first module runs on (a layer offloaded to disk runs on the CPU)."""
    import torch

    placement = getattr(model, "hf_device_map", None)
    if placement:
        first = next(iter(placement.values()))
        if isinstance(first, int):
            return torch.device("cuda", first)
        return torch.device("cpu" if first in ("cpu", "disk") else first)
    return model.device
