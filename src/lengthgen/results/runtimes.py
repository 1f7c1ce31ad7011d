"""Where a run's time went, from the `benchmark:` files Snakemake writes for every training and
prediction job (results/benchmarks/{rule}/...) and, for pretraining (a cached rule, which Snakemake
will not benchmark), the times each job recorded in its summary's provenance
(`PRETRAIN`/summary.parquet): the run times docs/results.md quotes come from here.
For training jobs, also whether that time did useful work: FLOPs estimated from the token counts
in each job's history, per CPU second against this machine's measured matmul peak, and padding."""

from __future__ import annotations

import datetime as _dt
import re
import time
from pathlib import Path

import polars as pl

from ..layout import CORPUS_FINETUNE, FINETUNE, PRETRAIN, RESULTS, SCRATCH
from ..records.tables import read_provenance

# Snakemake's log stamps each job event as "[Wed Dec  2 18:12:29 2026]"
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.MULTILINE)


# Rules that write a training history, and the folder of their jobs' outputs: below the rule, a
# benchmark's path mirrors the job's wildcards, so `{folder}/{that path}/training.parquet` is its history.
TRAINING_OUTPUTS = {"scratch_train": SCRATCH, "finetune_train": FINETUNE, "corpus_finetune_train": CORPUS_FINETUNE}
PRETRAIN_RULE = "pretrain"  # times itself: one row per summary under results/pretrain
STACK_RULE = "scratch_stack"  # benchmark {task}_{mirror}/{pe}: one job trained every seed of both tasks
WORK_COLUMNS = ("gflop", "gflop_per_cpu_s", "gflop_per_s", "peak_pct", "padded_pct")
# Where a training job's CPU went, each as a share of its CPU-seconds (the runs record the phases,
# lengthgen.engine.run.CPU_PHASES; start-up is the job's CPU before its first run existed: imports,
# model and data loading; the rest is what none of them counts: writing the outputs, exit), and the
# optimiser steps' own FLOPs per CPU-second against the peak.
PHASES = ("start_up", "data", "steps", "evaluation", "checkpoints")
SPLIT_COLUMNS = (*(f"{phase}_pct" for phase in PHASES), "rest_pct", "steps_peak_pct")
_NO_SPLIT = dict.fromkeys(f"cpu_{phase}" for phase in PHASES)


def matmul_peak(size: int = 1024, repeats: int = 8, clock=time.perf_counter) -> float:
    """This machine's fp32 matrix-multiply FLOP/s on one thread: the fastest of `repeats` products
    of two size x size matrices (2 size^3 FLOPs each) after a warm-up. One thread because a
    benchmark's cpu_time adds up every thread's seconds: FLOPs per CPU second compare with one core."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        generator = torch.Generator().manual_seed(0)
        a, b = (torch.randn(size, size, generator=generator) for _ in range(2))
        out = torch.mm(a, b)  # warm-up
        fastest = float("inf")
        for _ in range(repeats):
            start = clock()
            torch.mm(a, b, out=out)
            fastest = min(fastest, clock() - start)
    finally:
        torch.set_num_threads(threads)
    return 2 * size**3 / fastest


def training_flops(record: dict) -> float | None:
    """FLOPs of a run from its history's provenance: 6 N T (forward and backward through N
    parameters per real token, Kaplan et al. 2020) plus the attention's score and value products,
    6 n_layer d_model L per token of a row of L real tokens, i.e. 6 n_layer d_model sum(L^2)
    (`attention_pairs`). Padding is left out: this is the useful work. None without the counts."""
    try:
        params, tokens, pairs = (int(record[k]) for k in ("parameters", "tokens", "attention_pairs"))
        layers, width = int(record["n_layer"]), int(record["d_model"])
    except (KeyError, TypeError, ValueError):
        return None
    return 6.0 * params * tokens + 6.0 * layers * width * pairs


def training_histories(folder: Path, rule: str, job: Path) -> list[Path]:
    """The history files one benchmarked training job wrote (none for another rule)."""
    def outputs(rule: str) -> Path:  # the rule's output folder, in the results beside the benchmarks
        return folder.parent / TRAINING_OUTPUTS[rule].split("/{")[0].removeprefix(f"{RESULTS}/")

    if rule in TRAINING_OUTPUTS:
        return [outputs(rule) / job / "training.parquet"]
    if rule == STACK_RULE and len(job.parts) == 2:
        tasks, pe = job.parts
        return sorted(path for task in tasks.split("_")
                      for path in (outputs("scratch_train") / task / pe).glob("seed*/training.parquet"))
    return []


def job_work(folder: Path, rule: str, job: Path) -> dict:
    """A training job's FLOPs, real and padded tokens and whether it ran on the CPU, summed over
    its histories; all None when one is missing or predates the token counts."""
    none = {"flops": None, "tokens": None, "padded_tokens": None, "on_cpu": None, **_NO_SPLIT}
    histories = training_histories(folder, rule, job)
    if not histories:
        return none
    works = []
    for path in histories:
        try:
            works.append(record_work(read_provenance(path)))
        except (OSError, ValueError):
            return none
        if works[-1]["flops"] is None:
            return none
    total = {key: sum(w[key] for w in works) for key in ("flops", "tokens", "padded_tokens")}
    return {**total, "on_cpu": all(w["on_cpu"] for w in works), **job_cpu_split(works)}


def job_cpu_split(works: list[dict]) -> dict:
    """A job's CPU-seconds by phase over its runs (each run's phases summed; the start-up is the
    first run's, the CPU before any run existed); all None when a run did not record them."""
    if any(w["cpu_steps"] is None for w in works):
        return dict(_NO_SPLIT)
    return {"cpu_start_up": min(w["cpu_start_up"] for w in works),
            **{f"cpu_{phase}": sum(w[f"cpu_{phase}"] for w in works) for phase in PHASES[1:]}}


def record_work(record: dict) -> dict:
    """`job_work`'s columns from one run's provenance (all None without the counts)."""
    flops = training_flops(record)
    if flops is None or not isinstance(record.get("padded_tokens"), int):
        return {"flops": None, "tokens": None, "padded_tokens": None, "on_cpu": None, **_NO_SPLIT}
    split = {key: (float(record[key]) if isinstance(record.get(key), (int, float)) else None) for key in _NO_SPLIT}
    return {"flops": flops, "tokens": record["tokens"], "padded_tokens": record["padded_tokens"],
            "on_cpu": record.get("device") == "cpu", **(split if None not in split.values() else _NO_SPLIT)}


def pretraining_jobs(folder: Path) -> list[dict]:
    """`benchmarked_jobs`' rows for the pretraining jobs in the results beside `folder`, from the
    times each recorded itself (a summary from before they did, or unreadable, is left out)."""
    results = folder.parent
    pretrain = PRETRAIN.removeprefix(f"{RESULTS}/")
    rows = []
    for path in sorted(results.glob(pretrain.format(corpus="*", architecture="*", seed="*") + "/summary.parquet")):
        try:
            record = read_provenance(path)
            seconds, cpu, rss = (float(record[k]) for k in ("seconds", "cpu_seconds", "max_rss_mb"))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        job = path.parent.relative_to(results / pretrain.split("/{")[0])
        rows.append({"rule": PRETRAIN_RULE, "job": f"{PRETRAIN_RULE}/{job.as_posix()}", "seconds": seconds,
                     "cpu_seconds": cpu, "max_rss_mb": rss, **record_work(record)})  # no split: pretraining's own loop
    return rows


def benchmarked_jobs(folder: str | Path = "results/benchmarks") -> pl.DataFrame:
    """One row per benchmark file and per pretraining job (`pretraining_jobs`): rule, job, wall and
    CPU seconds, peak memory and, for a training job whose history has them, its FLOPs and real and
    padded tokens (`job_work`)."""
    folder = Path(folder)
    rows = pretraining_jobs(folder)
    for path in sorted(folder.rglob("*.tsv")):
        frame = pl.read_csv(path, separator="\t", null_values=["-", "NA"])
        relative = path.relative_to(folder)
        rule, job = relative.parts[0], Path(*relative.parts[1:]).with_suffix("")
        rows.append({"rule": rule, "job": str(relative.with_suffix("")),
                     "seconds": float(frame["s"][-1]), "cpu_seconds": float(frame["cpu_time"][-1] or 0.0),
                     "max_rss_mb": float(frame["max_rss"][-1] or 0.0), **job_work(folder, rule, job)})
    if not rows:
        raise ValueError(f"no benchmark files under {folder} and no timed pretraining beside it")
    schema = {"rule": pl.String, "job": pl.String, "seconds": pl.Float64, "cpu_seconds": pl.Float64,
              "max_rss_mb": pl.Float64, "flops": pl.Float64, "tokens": pl.Float64, "padded_tokens": pl.Float64,
              "on_cpu": pl.Boolean, **dict.fromkeys(_NO_SPLIT, pl.Float64)}
    return pl.DataFrame(rows, schema=schema)


def runtimes(folder: str | Path = "results/benchmarks", peak: float | None = None) -> pl.DataFrame:
    """Per rule: jobs, total and longest wall seconds, CPU seconds and peak memory (MB); for the
    training rules, whether the work was wasted: GFLOPs (`training_flops`) per CPU second and per
    wall second of the jobs that counted them, that as a percentage of `peak` (FLOP/s of one core,
    `matmul_peak`; left empty where a job ran on an accelerator, whose work the CPU seconds do not
    measure), and the percentage of computed positions that were padding."""
    counted = pl.col("flops").is_not_null()
    return (benchmarked_jobs(folder).group_by("rule")
            .agg(pl.len().alias("jobs"), pl.col("seconds").sum().alias("total_seconds"),
                 pl.col("seconds").max().alias("longest_seconds"), pl.col("cpu_seconds").sum(),
                 pl.col("max_rss_mb").max().alias("peak_rss_mb"),
                 counted.any().alias("_counted"), pl.col("flops").sum().alias("_flops"),
                 pl.col("cpu_seconds").filter(counted).sum().alias("_cpu"),
                 pl.col("seconds").filter(counted).sum().alias("_wall"),
                 pl.col("tokens").sum().alias("_tokens"), pl.col("padded_tokens").sum().alias("_padded"),
                 pl.col("on_cpu").filter(counted).all().alias("_on_cpu"))
            .with_columns(**_work(peak)).with_columns(**_peak(peak))
            .select("rule", "jobs", "total_seconds", "longest_seconds", "cpu_seconds", "peak_rss_mb", *WORK_COLUMNS)
            .sort("total_seconds", descending=True))


def rule_cpu_split(folder: str | Path = "results/benchmarks", peak: float | None = None) -> pl.DataFrame:
    """Per training rule, over its jobs that recorded their phases: where their CPU-seconds went
    (`SPLIT_COLUMNS`, percentages of those jobs' CPU) and the optimiser steps' FLOPs per CPU-second
    as a percentage of `peak`, beside the whole job's (`peak_pct` of `runtimes`)."""
    jobs = benchmarked_jobs(folder).filter(pl.col("cpu_steps").is_not_null())
    return (jobs.group_by("rule")
            .agg(pl.len().alias("jobs"), pl.col("cpu_seconds").sum().alias("_split_cpu"),
                 pl.col("flops").sum().alias("_split_flops"), pl.col("on_cpu").all().alias("_on_cpu"),
                 *(pl.col(key).sum().alias(f"_{key}") for key in _NO_SPLIT))
            .with_columns(**_split(peak))
            .select("rule", "jobs", pl.col("_split_cpu").alias("cpu_seconds"), *SPLIT_COLUMNS)
            .sort("cpu_seconds", descending=True))


def training_jobs(folder: str | Path = "results/benchmarks", peak: float | None = None) -> pl.DataFrame:
    """`runtimes`' work columns for each benchmarked training job, to find the one that wastes it."""
    jobs = benchmarked_jobs(folder).filter(pl.col("rule").is_in([*TRAINING_OUTPUTS, STACK_RULE, PRETRAIN_RULE]))
    return (jobs.with_columns(_counted=pl.col("flops").is_not_null(), _flops="flops", _cpu="cpu_seconds",
                              _wall="seconds", _tokens="tokens", _padded="padded_tokens", _on_cpu="on_cpu")
            .with_columns(**_work(peak)).with_columns(**_peak(peak))
            .select("job", "seconds", "cpu_seconds", *WORK_COLUMNS))


def _work(peak: float | None) -> dict:
    """The work columns from sums of FLOPs, CPU and wall seconds, real and padded tokens (of the
    jobs that counted them, `_counted`)."""
    counted = pl.col("_counted")
    positions = pl.col("_tokens") + pl.col("_padded")
    return {"gflop": pl.when(counted).then(pl.col("_flops") / 1e9),
            "gflop_per_cpu_s": pl.when(counted & (pl.col("_cpu") > 0)).then(pl.col("_flops") / pl.col("_cpu") / 1e9),
            "gflop_per_s": pl.when(counted & (pl.col("_wall") > 0)).then(pl.col("_flops") / pl.col("_wall") / 1e9),
            "padded_pct": pl.when(counted & (positions > 0)).then(100 * pl.col("_padded") / positions)}


def _peak(peak: float | None) -> dict:
    """peak_pct: FLOPs per CPU second as a share of one core's peak; empty off the CPU or without one."""
    if peak is None:
        return {"peak_pct": pl.lit(None, dtype=pl.Float64)}
    return {"peak_pct": pl.when(pl.col("_on_cpu")).then(100 * pl.col("gflop_per_cpu_s") * 1e9 / peak)}


def _split(peak: float | None) -> dict:
    """The split columns from sums over jobs that recorded their phases (`_split_cpu`, `_cpu_*`)."""
    cpu, phases = pl.col("_split_cpu"), [pl.col(f"_cpu_{phase}") for phase in PHASES]
    has = cpu > 0
    columns = {f"{phase}_pct": pl.when(has).then(100 * column / cpu) for phase, column in zip(PHASES, phases)}
    columns["rest_pct"] = pl.when(has).then(100 * (cpu - pl.sum_horizontal(phases)) / cpu)
    steps_rate = pl.col("_split_flops") / pl.col("_cpu_steps")
    columns["steps_peak_pct"] = (pl.when(has & pl.col("_on_cpu") & (pl.col("_cpu_steps") > 0)).then(100 * steps_rate / peak)
                                 if peak is not None else pl.lit(None, dtype=pl.Float64))
    return columns


def snakemake_logs(workdir: str | Path = ".") -> list[Path]:
    """The logs of every Snakemake invocation in `workdir`, oldest first (their names are their start times)."""
    return sorted((Path(workdir) / ".snakemake" / "log").glob("*.snakemake.log"))


def log_stamps(text: str) -> list[_dt.datetime]:
    """The time stamps of a Snakemake log's job events, in order."""
    return [_dt.datetime.strptime(" ".join(m.split()), "%a %b %d %H:%M:%S %Y") for m in _STAMP.findall(text)]


def last_run_wall_time(workdir: str | Path = ".") -> tuple[float, Path, bool] | None:
    """(seconds, log, finished) of the latest Snakemake invocation in `workdir`: from its first to its
    last job event in `.snakemake/log`, and whether it ended with every step done; None without a log
    holding any job. A run resumed over several invocations counts the last one only."""
    for log in reversed(snakemake_logs(workdir)):
        text = log.read_text(errors="replace")
        stamps = log_stamps(text)
        if stamps:
            return (stamps[-1] - stamps[0]).total_seconds(), log, "steps (100%) done" in text
    return None


def totals_line(table: pl.DataFrame, workdir: str | Path = ".", peak: float | None = None) -> str:
    """The line `runtimes` ends with: the benchmarked jobs' total seconds, the last run's wall time
    and the matmul peak the training rules' peak_pct compares with."""
    line = f"total: {table['total_seconds'].sum():.0f} job-seconds in {table['jobs'].sum()} benchmarked jobs"
    if peak is not None:
        line += f"; fp32 matmul peak {peak / 1e9:.1f} GFLOP/s on one thread (measured now)"
    wall = last_run_wall_time(workdir)
    if wall is None:
        return line + "; no Snakemake log, so no wall time"
    seconds, log, finished = wall
    minutes, rest = divmod(round(seconds), 60)
    state = "" if finished else ", unfinished"
    return line + f"; wall time of the last run {minutes} min {rest} s ({log.name}{state})"
