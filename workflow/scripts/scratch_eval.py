"""Adapter: per-example exact match of one from-scratch model on every length bin of its family."""
import polars as pl

from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.scratch.train import evaluate_scratch_model
from lengthgen.settings import ScratchEvalSettings
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
w = snakemake.wildcards
settings = ScratchEvalSettings.from_config(snakemake.params.section)
frame = evaluate_scratch_model(snakemake.input.model, get_task(w.task), dict(zip(settings.bins, snakemake.input.data)),
                               batch_size=settings.batch_size, greedy=settings.greedy, precision=settings.precision,
                               eos=settings.eos)
frame = frame.with_columns(pl.lit(w.pe).alias("system"), pl.lit(w.task).alias("task"), pl.lit(int(w.seed)).alias("seed"))
write_parquet(frame, snakemake.output[0], Provenance(snakemake.params.section).record(
    seed=int(w.seed), device=device, extra={"wildcards": dict(w)}))
