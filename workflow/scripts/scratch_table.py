"""Adapter: the from-scratch table (mean and spread over seeds, theory, mirror pairs) and the per-length table."""
from lengthgen.results.provenance import collect
from lengthgen.results.tables import with_provenance_columns, write_parquet, write_table
from lengthgen.scratch import scratch_markdown, scratch_tables

section = snakemake.params.section
provenance = collect(section)
table, by_length = scratch_tables(snakemake.input.evals, section["bins"])
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,
            markdown=scratch_markdown(table, section["bins"], provenance))
write_parquet(with_provenance_columns(by_length, provenance), snakemake.output.by_length, provenance)
