"""Adapter: per-example exact match of one fine-tuned model on every length bin of its family."""
import polars as pl

from lengthgen.config.sections import DEFAULT_PROTOCOL
from lengthgen.finetune.tables import system_label
from lengthgen.finetune.train import evaluate_finetuned
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.settings import FinetuneEvalSettings
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
w = snakemake.wildcards
protocol = dict(w).get("protocol", DEFAULT_PROTOCOL)  # the corpora's fine-tuning has no protocol axis
settings = FinetuneEvalSettings.from_config(snakemake.params.section)
frame = evaluate_finetuned(snakemake.input.model, get_task(w.task), dict(zip(settings.bins, snakemake.input.data)),
                           data=settings.data, style=settings.format, batch_size=settings.batch_size,
                           precision=settings.precision)
frame = frame.with_columns(pl.lit(system_label(w.model, protocol)).alias("system"), pl.lit(w.task).alias("task"),
                           pl.lit(int(w.seed)).alias("seed"))
write_parquet(frame, snakemake.output[0], Provenance(snakemake.params.section).record(
    seed=int(w.seed), device=device, extra={"wildcards": dict(w)}))
