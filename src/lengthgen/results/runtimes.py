"""Where a run's time went, from the `benchmark:` files Snakemake writes for every training and
prediction job (results/benchmarks/{rule}/...): the run times the README quotes come from here."""

from __future__ import annotations

from pathlib import Path

import polars as pl


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
