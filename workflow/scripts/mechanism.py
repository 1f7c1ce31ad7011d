"""Adapter: head scores and patching of one model on copy prompts."""
import polars as pl

from lengthgen.mechanism.run import analyse_subject
from lengthgen.records.provenance import collect
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job

device = start_job(snakemake, uses_torch=True)
section = snakemake.params.section
heads, patching = analyse_subject(section, snakemake.input.get("model", None))
provenance = collect(section, device=device, extra={"wildcards": dict(snakemake.wildcards)})
for frame, path in ((heads, snakemake.output.heads), (patching, snakemake.output.patching)):
    write_parquet(frame.with_columns(pl.lit(section["subject"]).alias("model")), path, provenance)
