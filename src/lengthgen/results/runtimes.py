"""Where a run's time went, from the `benchmark:` files Snakemake writes for every training and
prediction job (results/benchmarks/{rule}/...): the run times docs/results.md quotes come from here."""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

import polars as pl

# Snakemake's log stamps each job event as "[Wed Dec  2 18:12:29 2026]"
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.MULTILINE)


def runtimes(folder: str | Path = "results/benchmarks") -> pl.DataFrame:
    """Per rule: jobs, total and longest wall seconds, CPU seconds and peak memory (MB)."""
    folder = Path(folder)
    rows = []
    for path in sorted(folder.rglob("*.tsv")):
        frame = pl.read_csv(path, separator="\t", null_values=["-", "NA"])
        rows.append({"rule": path.relative_to(folder).parts[0], "job": str(path.relative_to(folder).with_suffix("")),
                     "seconds": float(frame["s"][-1]), "cpu_seconds": float(frame["cpu_time"][-1] or 0.0),
                     "max_rss_mb": float(frame["max_rss"][-1] or 0.0)})
    if not rows:
        raise ValueError(f"no benchmark files under {folder}")
    return (pl.DataFrame(rows).group_by("rule")
            .agg(pl.len().alias("jobs"), pl.col("seconds").sum().alias("total_seconds"),
                 pl.col("seconds").max().alias("longest_seconds"), pl.col("cpu_seconds").sum(),
                 pl.col("max_rss_mb").max().alias("peak_rss_mb"))
            .sort("total_seconds", descending=True))


def last_run_wall_time(workdir: str | Path = ".") -> tuple[float, Path, bool] | None:
    """(seconds, log, finished) of the latest Snakemake invocation in `workdir`: from its first to its
    last job event in `.snakemake/log`, and whether it ended with every step done; None without a log
    holding any job. A run resumed over several invocations counts the last one only."""
    logs = sorted((Path(workdir) / ".snakemake" / "log").glob("*.snakemake.log"))
    for log in reversed(logs):
        text = log.read_text(errors="replace")
        stamps = [_dt.datetime.strptime(" ".join(m.split()), "%a %b %d %H:%M:%S %Y") for m in _STAMP.findall(text)]
        if stamps:
            return (stamps[-1] - stamps[0]).total_seconds(), log, "steps (100%) done" in text
    return None


def totals_line(table: pl.DataFrame, workdir: str | Path = ".") -> str:
    """The line `runtimes` ends with: the benchmarked jobs' total seconds and the last run's wall time."""
    line = f"total: {table['total_seconds'].sum():.0f} job-seconds in {table['jobs'].sum()} benchmarked jobs"
    wall = last_run_wall_time(workdir)
    if wall is None:
        return line + "; no Snakemake log, so no wall time"
    seconds, log, finished = wall
    minutes, rest = divmod(round(seconds), 60)
    state = "" if finished else ", unfinished"
    return line + f"; wall time of the last run {minutes} min {rest} s ({log.name}{state})"
