"""Process set-up for workflow jobs and the one place that chooses the device."""

from __future__ import annotations

import os


def pick_device(requested: str = "auto"):
    """The torch device to run on: CUDA when present (for "auto"), else what was asked for."""
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def configure(threads: int | None = None) -> str:
    """Pin torch to the job's threads (jobs run side by side) and silence library chatter.

    Returns the name of the device the job will use, for provenance.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers

    if threads:
        torch.set_num_threads(int(threads))
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    device = pick_device()
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
