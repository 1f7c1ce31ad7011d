"""Workflow scripts run in processes forked from one warm process per Snakemake run.

A fresh interpreter pays 5-6 CPU-seconds importing torch and transformers before a job does any
work (bench/job_startup.py): most of a tiny job, and of the test suite. Each Snakemake process
instead starts one multiprocessing fork server that imports them once; every script job is a
fork of it. A fork starts with the imports done and shares no state with its siblings: its own
threads, random state, file descriptors and exit status, as a fresh process has. It writes its
own benchmark file, in Snakemake's format, from its own resource usage (Snakemake's benchmark of
a `run:` job would measure its whole process, every job beside it included).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import resource
import runpy
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# What the fork server imports once: the imports a model job pays for before its work. Names
# only (nothing is run in the server: no torch thread pool exists when it forks).
PRELOAD = ("torch", "transformers.modeling_utils", "lengthgen.runtime")

# The variables Snakemake sets for a shell or script job from its threads (snakemake.shell).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss", "max_vms", "max_uss", "max_pss", "io_in", "io_out", "mean_load",
                     "cpu_time")


class ScriptFailed(Exception):
    """A script job exited with a failure; its reason is already on the terminal and in its log."""


@dataclass
class ScriptJob:
    """What a workflow script reads as `snakemake`: the job's files, settings and threads, as plain,
    picklable values."""

    rule: str
    input: object
    output: object
    params: object
    wildcards: object
    log: object
    threads: int
    scriptdir: str
    resources: dict = field(default_factory=dict)


_server_lock = threading.Lock()
_server = None


def _fork_server():
    """This process's fork server context, the server itself started by the first job."""
    global _server
    with _server_lock:
        if _server is None:
            context = multiprocessing.get_context("forkserver")
            # "__main__": the server imports the program's main module (Snakemake's entry point) once,
            # instead of each fork importing it again as multiprocessing otherwise does.
            context.set_forkserver_preload(["__main__", *PRELOAD])
            _server = context
    return _server


def run_script(script: str | Path, job: ScriptJob, benchmark: str | None = None, conda_env: str | None = None) -> None:
    """Run one workflow script as one job: forked from the warm server, or, where the job has a conda
    environment (`--software-deployment-method conda`), in that environment's own interpreter.
    Returns when it has finished; raises ScriptFailed if it failed."""
    script = str(script)
    if conda_env:
        code = _run_in_environment(script, job, benchmark, conda_env)
    else:
        process = _fork_server().Process(target=_run_in_fork, args=(script, job, benchmark), name=job.rule)
        process.start()
        process.join()
        code = process.exitcode
    if code != 0:
        raise ScriptFailed(f"{Path(script).name} exited with {code}; its log: {', '.join(job.log) or 'none'}")


def _run_in_environment(script: str, job: ScriptJob, benchmark: str | None, conda_env: str) -> int:
    """The job in a fresh interpreter of its conda environment (which must have this package)."""
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as handle:
        pickle.dump((script, job, benchmark), handle)
    try:
        command = ["conda", "run", "--prefix", conda_env, "python", "-m", "lengthgen.jobserver", handle.name]
        return subprocess.run(command).returncode
    finally:
        os.unlink(handle.name)


def _run_in_fork(script: str, job: ScriptJob, benchmark: str | None) -> None:
    _fresh_random_state()
    os._exit(run_here(script, job, benchmark))


def _fresh_random_state() -> None:
    """Seed the global generators the server imported from the OS, as a fresh interpreter's are:
    sibling forks would otherwise start from one state (`random` reseeds itself at a fork)."""
    if "torch" in sys.modules:
        sys.modules["torch"].seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def run_here(script: str, job: ScriptJob, benchmark: str | None) -> int:
    """Run the script in this process, as the whole of its life: the job's thread variables, its
    exit handlers, the one-line failure of `lengthgen.runtime`, then its benchmark. Returns the
    exit status."""
    started = time.perf_counter()
    os.environ.update({name: str(job.threads) for name in THREAD_VARIABLES})
    if job.resources.get("tmpdir"):
        os.environ["TMPDIR"] = os.environ["TMP"] = str(job.resources["tmpdir"])
        tempfile.tempdir = None
    code = 0
    try:
        runpy.run_path(script, init_globals={"snakemake": job}, run_name="__main__")
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    atexit._run_exitfuncs()  # what the interpreter does at exit (a fork leaves through os._exit)
    if benchmark and code == 0:
        write_benchmark(benchmark, time.perf_counter() - started)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def write_benchmark(path: str, seconds: float) -> None:
    """This process's wall and CPU seconds and peak memory, as Snakemake's benchmark file has them
    (`lengthgen runtimes` reads s, cpu_time and max_rss); what it does not measure is NA."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    values = {"s": f"{seconds:.4f}", "h:m:s": time.strftime("%H:%M:%S", time.gmtime(seconds)),
              "max_rss": f"{max(own.ru_maxrss, children.ru_maxrss) / 1024:.2f}", "cpu_time": f"{cpu:.2f}"}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\t".join(BENCHMARK_COLUMNS) + "\n"
                          + "\t".join(values.get(column, "NA") for column in BENCHMARK_COLUMNS) + "\n")


if __name__ == "__main__":  # the conda environment's side of _run_in_environment
    with open(sys.argv[1], "rb") as handle:
        sys.exit(run_here(*pickle.load(handle)))
