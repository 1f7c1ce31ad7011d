"""Adapter: per-example exact match of one from-scratch model on one length bin."""
import polars as pl

from lengthgen.lengthbins.evaluate import evaluate_file
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_parquet
from lengthgen.runtime import configure

device = configure(snakemake.threads)
w, section = snakemake.wildcards, snakemake.params.section
frame = evaluate_file(snakemake.input.model, snakemake.input.data, section["batch_size"], section["greedy"],
                      section["precision"])
frame = frame.with_columns(pl.lit(w.pe).alias("system"), pl.lit(w.task).alias("task"),
                           pl.lit(int(w.seed)).alias("seed"), pl.lit(w.bin).alias("bin"))
write_parquet(frame, snakemake.output[0], collect(section, seed=int(w.seed), device=device,
                                                  extra={"wildcards": dict(w)}))
