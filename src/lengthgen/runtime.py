"""Process set-up for workflow jobs: the log file, threads, and expected failures as one line."""

from __future__ import annotations

import atexit
import os
import resource
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from .devices import pick_device


class ExpectedFailure(Exception):
    """A failure whose message says everything (which file, what to do): a job prints it as one line
    `lengthgen: ...`, without a traceback."""


# Snakemake's terminal (the stderr a job started with), kept when `log_to` sends the job's output to its
# log: a failed job's one-line reason is shown there too, beside Snakemake's "Error in rule". With it,
# the log that holds the details.
_terminal = None
_terminal_log = None
_outputs: list[str] = []  # a script job's outputs: a failed job's sidecars go with them


class TerminalWarning(UserWarning):
    """A warning a user must see (work thrown away and redone): a job shows it as one line on
    Snakemake's terminal as well as in its log."""


_plain_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    _plain_showwarning(message, category, filename, lineno, file, line)
    if _terminal is not None and issubclass(category, TerminalWarning):
        print(f"lengthgen: {message} (details in {_terminal_log})", file=_terminal, flush=True)


_failure_hooks: list = []  # what a failed job does to its outputs before Snakemake removes them


def on_failure(hook) -> None:
    """Register `hook(outputs)`, run when a job fails (a layer above this one, e.g. the records
    layer dropping its outputs' sha256 sidecars, which would otherwise lie beside nothing)."""
    if hook not in _failure_hooks:
        _failure_hooks.append(hook)


def _failed(outputs) -> None:
    for hook in _failure_hooks:
        try:
            hook(list(outputs))
        except OSError:
            pass  # not ours to stop on: the failure itself is what the user sees


def one_line_reason(error: BaseException) -> str:
    """A failed job's reason as the terminal shows it: an expected failure's message, else the
    exception's type and first line."""
    if isinstance(error, ExpectedFailure):
        return f"lengthgen: {error}"
    return f"lengthgen: {type(error).__name__}: {(str(error).splitlines() or [''])[0]}"


def _one_line_for_expected(kind, error, trace) -> None:
    _failed(_outputs)
    line = one_line_reason(error)
    if isinstance(error, ExpectedFailure):
        print(line, file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)
    if _terminal is not None:
        print(f"{line} (details in {_terminal_log})", file=_terminal, flush=True)


def log_to(path) -> None:
    """Send everything this process prints -- progress bars, warnings, tracebacks, output of C
    libraries -- to the job's log file (file descriptors 1 and 2 themselves, not only Python's
    streams), so it is kept on a cluster and parallel jobs do not interleave on one terminal."""
    global _terminal, _terminal_log
    sys.stdout.flush()
    sys.stderr.flush()
    if _terminal is None:
        _terminal = os.fdopen(os.dup(2), "w", buffering=1)
        _terminal_log = str(path)
        warnings.showwarning = _show_warning
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)  # the umask decides, as for every other result
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    os.close(handle)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)


class _ThreadStream:
    """Stands in for sys.stdout or sys.stderr inside Snakemake's process, where `run:` jobs run side
    by side in threads: a thread inside job_log writes to its job's log, every other thread to the
    stream this one replaced (Snakemake's own terminal)."""

    def __init__(self, stream):
        self.stream, self.local = stream, threading.local()

    def _target(self):
        return getattr(self.local, "handle", None) or self.stream

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name):
        return getattr(self._target(), name)


def _thread_streams() -> tuple[_ThreadStream, _ThreadStream]:
    """Install the per-thread stdout and stderr once; later calls return them."""
    if not isinstance(sys.stdout, _ThreadStream):
        sys.stdout = _ThreadStream(sys.stdout)
    if not isinstance(sys.stderr, _ThreadStream):
        sys.stderr = _ThreadStream(sys.stderr)
    return sys.stdout, sys.stderr


@contextmanager
def job_log(log, outputs):
    """For a `run:` rule, which runs in a thread inside Snakemake's own process (its file descriptors
    and other threads stay Snakemake's): what this thread prints and warns, its error and what it
    wrote go to the job's log file. A failure's one-line reason is shown on Snakemake's terminal
    too, as a script job's is; an expected failure (a damaged file, a full disk) is logged as that
    line alone, without a traceback."""
    started, streams = time.monotonic(), _thread_streams()
    with open(log[0], "a") as handle:
        for stream in streams:
            stream.local.handle = handle
        try:
            yield
            report_outputs(outputs, started)
        except BaseException as error:
            _failed(outputs)
            if isinstance(error, ExpectedFailure):
                print(one_line_reason(error), file=handle, flush=True)
            else:
                traceback.print_exc(file=handle)
            if isinstance(error, Exception):
                print(f"{one_line_reason(error)} (details in {log[0]})", file=streams[1].stream, flush=True)
            raise
        finally:
            for stream in streams:
                stream.local.handle = None


def run_writer(writer: Callable, log, outputs, *inputs) -> None:
    """The one body of every `run:` rule: `writer` (imported by the rule file when the workflow is
    parsed) is called with `inputs` and the outputs inside the job's log, so its failure is logged
    and shown as one line, not as Snakemake's bare "message: None"."""
    with job_log(log, outputs):
        writer(*inputs, outputs)


def report_outputs(outputs, started: float) -> None:
    """The last lines of a job's log: what it wrote (rows of a table, files of a model) and how long
    it took; an output it did not write is named as missing."""
    for path in map(Path, outputs):
        print(f"wrote {path}: {_size(path)}" if path.exists() else f"did not write {path}")
    print(f"done in {time.monotonic() - started:.1f} s", flush=True)


def _size(path: Path) -> str:
    if path.is_dir():
        return f"{sum(1 for p in path.rglob('*') if p.is_file())} files"
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return f"{pq.read_metadata(path).num_rows} rows"
    return f"{path.stat().st_size} bytes"


class JobClock:
    """A job's wall and CPU seconds and peak memory since it was made, as a `benchmark:` file gives
    them (the CPU of its threads and waited-for children), for a rule Snakemake will not benchmark (a
    cached one): the job records them in its own output."""

    def __init__(self):
        self.started = time.perf_counter()
        self.cpu_started = self._cpu()

    @staticmethod
    def _cpu() -> float:
        return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
                   for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))

    def usage(self) -> dict:
        """seconds, cpu_seconds and max_rss_mb (ru_maxrss is in KiB on Linux) so far."""
        peak_kib = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        return {"seconds": time.perf_counter() - self.started, "cpu_seconds": self._cpu() - self.cpu_started,
                "max_rss_mb": peak_kib / 1024}


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
    _outputs[:] = list(snakemake.output)
    if snakemake.log:
        log_to(snakemake.log[0])
        atexit.register(report_outputs, list(snakemake.output), time.monotonic())
    sys.excepthook = _one_line_for_expected
    return configure(snakemake.threads) if uses_torch else "cpu"

