"""Process set-up for workflow jobs: thread count, quiet libraries, the device in use."""

from __future__ import annotations

import os


def configure(threads: int | None = None) -> str:
    """Pin torch to the job's threads (jobs run side by side) and silence library chatter.

    Returns the device name that the job will use, for provenance.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers

    if threads:
        torch.set_num_threads(int(threads))
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
