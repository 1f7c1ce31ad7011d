"""Where the workflow writes: every path pattern, with its wildcards, in one place (below both the
planning, which plans these files, and the reporting, which reads some of them back)."""

from __future__ import annotations

RESULTS = "results"
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"

CONVERTED = f"{RESULTS}/models/{{model}}"
SCRATCH = f"{RESULTS}/scratch/{{task}}/{{pe}}/seed{{seed}}"
SCRATCH_CHECKPOINTS = f"{RESULTS}/checkpoints/scratch/{{task}}/{{pe}}/seed{{seed}}"
ICL = f"{RESULTS}/icl/{{model}}/{{family}}.parquet"
FINETUNE = f"{RESULTS}/finetune/{{model}}/{{protocol}}/{{task}}/seed{{seed}}"
FINETUNE_CHECKPOINTS = f"{RESULTS}/checkpoints/finetune/{{model}}/{{protocol}}/{{task}}/seed{{seed}}"
MECHANISM = f"{RESULTS}/mechanism/{{subject}}"
REALISTIC = f"{RESULTS}/realistic/{{model}}/{{realistic}}.parquet"
CORPORA = f"{RESULTS}/corpora"
CORPUS_MECHANISM = f"{CORPORA}/mechanism/{{model}}"
CORPUS_MANIPULATION = f"{CORPORA}/manipulation/{{model}}.parquet"
CORPUS_ICL = f"{CORPORA}/icl/{{model}}/{{family}}.parquet"
CORPUS_FINETUNE = f"{CORPORA}/finetune/{{model}}/{{task}}/seed{{seed}}"
PRETRAIN = f"{RESULTS}/pretrain/{{corpus}}/{{architecture}}/seed{{seed}}"  # model/ and summary.parquet
PRETRAIN_CHECKPOINTS = f"{RESULTS}/checkpoints/pretrain/{{corpus}}/{{architecture}}/seed{{seed}}"


def data_path(encoding: str, task: str, length_bin, seed) -> str:
    return f"{RESULTS}/data/{encoding}/{task}/{length_bin}/seed{seed}.parquet"


def log_path(rule: str, pattern: str = "") -> str:
    """The log file of one job: its progress bars, warnings and errors (kept on a cluster too)."""
    return f"{LOGS}/{rule}/{pattern or 'all'}.log"


def benchmark_path(rule: str, pattern: str = "") -> str:
    """Run time and memory of one job, in Snakemake's benchmark format, written by the job itself
    (lengthgen.jobserver); `lengthgen runtimes` sums them."""
    return f"{BENCHMARKS}/{rule}/{pattern or 'all'}.tsv"


def table_path(name: str, suffix: str = "parquet") -> str:
    return f"{TABLES}/{name}.{suffix}"
