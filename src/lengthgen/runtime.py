"""Process set-up for workflow jobs: the log file, threads, and expected failures as one line."""

from __future__ import annotations

import os
import sys

from .devices import pick_device


class ExpectedFailure(Exception):
    """A failure whose message says everything (which file, what to do): a job prints it as one line
    `lengthgen: ...`, without a traceback."""


def _one_line_for_expected(kind, error, trace) -> None:
    if isinstance(error, ExpectedFailure):
        print(f"lengthgen: {error}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)


def log_to(path) -> None:
    """Send everything this process prints -- progress bars, warnings, tracebacks, output of C
    libraries -- to the job's log file (file descriptors 1 and 2 themselves, not only Python's
    streams), so it is kept on a cluster and parallel jobs do not interleave on one terminal."""
    sys.stdout.flush()
    sys.stderr.flush()
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)  # the umask decides, as for every other result
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    os.close(handle)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)


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


def start_job(snakemake, uses_torch: bool = False) -> str:
    """What every workflow script does first: log to the rule's log file, report an expected failure
    as one line and, for a job that runs a model, pin its threads. Returns the device name for
    provenance ("cpu" for jobs without torch)."""
    if snakemake.log:
        log_to(snakemake.log[0])
    sys.excepthook = _one_line_for_expected
    return configure(snakemake.threads) if uses_torch else "cpu"

