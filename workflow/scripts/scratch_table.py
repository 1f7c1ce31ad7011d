"""Adapter: the from-scratch table (mean and spread over seeds, theory, mirror pairs)."""
from lengthgen.provenance import collect
from lengthgen.scratch import accuracy_by_length, per_run_accuracy, scratch_markdown, scratch_table
from lengthgen.tables import write_parquet, write_text, with_provenance_columns

section = snakemake.params.section  # noqa: F821
provenance = collect(section)
table = scratch_table(per_run_accuracy(snakemake.input.evals), section["bins"])  # noqa: F821
write_parquet(with_provenance_columns(table, provenance), snakemake.output.parquet, provenance)  # noqa: F821
write_text(snakemake.output.markdown, scratch_markdown(table, section["bins"], provenance))  # noqa: F821
by_length = with_provenance_columns(accuracy_by_length(snakemake.input.evals), provenance)  # noqa: F821
write_parquet(by_length, snakemake.output.by_length, provenance)  # noqa: F821
