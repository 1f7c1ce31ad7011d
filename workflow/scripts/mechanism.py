"""Adapter: head scores and patching of one model on copy prompts."""
import polars as pl

from lengthgen.mechanism.run import analyse_subject
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.settings import MechanismSettings

device = start_job(snakemake, uses_torch=True)
settings = MechanismSettings.from_config(snakemake.params.section)
heads, patching = analyse_subject(settings, snakemake.input.get("model", None))
record = Provenance(snakemake.params.section).record(device=device, extra={"wildcards": dict(snakemake.wildcards)})
for frame, path in ((heads, snakemake.output.heads), (patching, snakemake.output.patching)):
    write_parquet(frame.with_columns(pl.lit(settings.subject).alias("model")), path, record)
