"""How far a workflow run is and roughly how long it has left, read from its Snakemake log while it runs.

Snakemake's own line says how many steps are done, not how long the rest takes: a data job costs
seconds and a fine-tuning minutes. The estimate here weighs each job still to run by the CPU-seconds a
job of its rule took: first this project's own benchmarks (`results/benchmarks`, any earlier run
included), else a shipped estimate (`resources/runtimes/default.parquet`, from a fresh `make run` of
the default), else START_UP_CPU_SECONDS (a job that only starts Python and writes a table). The CPU
left is turned into wall time by the run's cores and how well this run has kept them busy so far.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .runtimes import benchmarked_jobs, log_stamps, snakemake_logs

SHIPPED_ESTIMATE = Path(__file__).resolve().parents[3] / "resources" / "runtimes" / "default.parquet"
START_UP_CPU_SECONDS = 5.0  # one job's Python, imports and table writing (torch's import alone is ~3.5)
EARLY_MINUTES = 5.0  # before this much of a run, its packing is not yet measured: assume FULL_PACKING
FULL_PACKING = 0.9  # the share of the cores a run keeps busy (a fresh default run: 1.94 of 2)
ESTIMATE_SCHEMA = {"rule": pl.String, "jobs": pl.Int64, "cpu_seconds_per_job": pl.Float64}

_JOB_STATS = re.compile(r"^Job stats:\n.*?\n-+\s+-+\n(.*?)^total\s+\d+", re.MULTILINE | re.DOTALL)
_FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: ([\w-]+)\)", re.MULTILINE)
_CORES = re.compile(r"^Provided cores: (\d+)", re.MULTILINE)


@dataclass(frozen=True)
class RunLog:
    """What one Snakemake invocation's log says: the jobs it planned per rule, the jobs finished
    (jobid -> rule), its cores and its first and last time stamps."""

    planned: dict[str, int]
    finished: dict[int, str]
    cores: int
    started: _dt.datetime
    last: _dt.datetime


def read_run_log(text: str) -> RunLog:
    """Parse a Snakemake log; ValueError where it holds no job plan (a dry run, nothing to do)."""
    stats = _JOB_STATS.search(text)
    stamps = log_stamps(text)
    if stats is None or not stamps:
        raise ValueError("the log holds no job plan (a dry run, or nothing to be done)")
    planned = {rule: int(count) for rule, count in (line.split() for line in stats.group(1).splitlines() if line.strip())}
    cores = _CORES.search(text)
    return RunLog(planned, {int(job): rule for job, rule in _FINISHED.findall(text)},
                  int(cores.group(1)) if cores else 1, stamps[0], stamps[-1])


def latest_log(workdir: str | Path = ".") -> Path:
    logs = snakemake_logs(workdir)
    if not logs:
        raise ValueError(f"no Snakemake log under {Path(workdir) / '.snakemake' / 'log'}: no run has started here")
    return logs[-1]


def rule_costs(workdir: str | Path = ".") -> pl.DataFrame:
    """Per rule of this project's benchmarked jobs: how many, and their mean CPU-seconds
    (`ESTIMATE_SCHEMA`; empty without any)."""
    try:
        jobs = benchmarked_jobs(Path(workdir) / "results" / "benchmarks")
    except (OSError, ValueError):
        return pl.DataFrame(schema=ESTIMATE_SCHEMA)
    return (jobs.group_by("rule").agg(pl.len().alias("jobs"), pl.col("cpu_seconds").mean().alias("cpu_seconds_per_job"))
            .cast(ESTIMATE_SCHEMA).sort("rule"))


def cpu_per_job(workdir: str | Path = ".") -> dict[str, float]:
    """rule -> mean CPU-seconds of its benchmarked jobs in this project ({} without any)."""
    costs = rule_costs(workdir)
    return dict(zip(costs["rule"], costs["cpu_seconds_per_job"]))


def shipped_estimate(path: str | Path | None = SHIPPED_ESTIMATE) -> dict[str, float]:
    """rule -> CPU-seconds per job of the shipped estimate ({} where there is none)."""
    if path is None or not Path(path).is_file():
        return {}
    frame = pl.read_parquet(path)
    return dict(zip(frame["rule"], frame["cpu_seconds_per_job"]))


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    elapsed_seconds: float
    left_seconds: float
    cpu_left_seconds: float
    packing: float
    sources: Counter  # jobs left whose cost came from "this run's benchmarks", "the shipped estimate", "start-up only"


def progress(log: RunLog, measured: dict[str, float], shipped: dict[str, float], now: _dt.datetime) -> Progress:
    """The jobs done of the planned, and the wall time left: each job left at its rule's CPU per
    job (measured, else shipped, else START_UP_CPU_SECONDS), over the cores at this run's packing
    (the CPU of its finished jobs over its elapsed core-seconds; FULL_PACKING in its first minutes)."""
    left = Counter(log.planned)
    left.subtract(Counter(log.finished.values()))
    left.pop("all", None)  # the target rule: no work

    def cost(rule: str) -> tuple[float, str]:
        if rule in measured:
            return measured[rule], "this project's benchmarks"
        if rule in shipped:
            return shipped[rule], "the shipped estimate"
        return START_UP_CPU_SECONDS, "start-up only"

    sources: Counter = Counter()
    cpu_left = 0.0
    for rule, count in left.items():
        if count > 0:
            seconds, source = cost(rule)
            cpu_left += count * seconds
            sources[source] += count
    finished = sum(log.planned.values()) <= len(log.finished)
    elapsed = max(0.0, ((log.last if finished else now) - log.started).total_seconds())  # a finished run: its own span
    packing = FULL_PACKING
    if elapsed >= 60 * EARLY_MINUTES:
        used = sum(cost(rule)[0] for rule in log.finished.values() if rule != "all")
        packing = min(1.0, max(0.25, used / (elapsed * log.cores)))
    return Progress(len(log.finished), sum(log.planned.values()), elapsed, cpu_left / (log.cores * packing), cpu_left,
                    packing, sources)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def progress_line(state: Progress) -> str:
    share = 100 * state.done / state.total if state.total else 100.0
    if state.done >= state.total:
        return f"{state.done} of {state.total} jobs done (100%) in {_minutes(state.elapsed_seconds)}: finished"
    basis = ", ".join(f"{count} from {source}" for source, count in state.sources.most_common())
    return (f"{state.done} of {state.total} jobs done ({share:.0f}%), {_minutes(state.elapsed_seconds)} in; about "
            f"{_minutes(state.left_seconds)} left ({state.cpu_left_seconds / 3600:.1f} CPU-hours of jobs left at "
            f"{100 * state.packing:.0f}% of the cores busy; jobs left costed {basis})")


def run_progress(workdir: str | Path = ".", shipped: str | Path | None = SHIPPED_ESTIMATE,
                 now: _dt.datetime | None = None) -> str:
    """The progress line of the latest run in `workdir`."""
    log = read_run_log(latest_log(workdir).read_text(errors="replace"))
    return progress_line(progress(log, cpu_per_job(workdir), shipped_estimate(shipped), now or _dt.datetime.now()))


def write_estimate(workdir: str | Path, out: str | Path, provenance: dict) -> pl.DataFrame:
    """The shipped estimate from a finished run: per rule, its jobs and mean CPU-seconds per job."""
    from ..records.tables import write_parquet

    frame = rule_costs(workdir)
    if not frame.height:
        raise ValueError(f"no benchmarks under {Path(workdir) / 'results' / 'benchmarks'} to estimate from")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_parquet(frame, out, provenance)
    return frame
