"""Adapter: the from-scratch table (mean and spread over seeds, theory, mirror pairs) and the per-length table."""
from lengthgen.provenance import collect
from lengthgen.scratch import accuracy_by_length, per_run_accuracy, read_evals, scratch_markdown, scratch_table
from lengthgen.tables import with_provenance_columns, write_parquet, write_table

section = snakemake.params.section  # noqa: F821
provenance = collect(section)
evals = read_evals(snakemake.input.evals)  # noqa: F821
table = scratch_table(per_run_accuracy(evals), section["bins"])
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,  # noqa: F821
            markdown=scratch_markdown(table, section["bins"], provenance))
by_length = with_provenance_columns(accuracy_by_length(evals), provenance)
write_parquet(by_length, snakemake.output.by_length, provenance)  # noqa: F821
