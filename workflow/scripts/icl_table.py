"""Adapter: the in-context table (accuracy per task, model, length, variant; mirror pairs; induction-bias errors)."""
from lengthgen.icl_table import icl_markdown, icl_table
from lengthgen.provenance import collect
from lengthgen.tables import with_provenance_columns, write_parquet, write_text

provenance = collect(snakemake.params.section)  # noqa: F821
table = icl_table(snakemake.input)  # noqa: F821
write_parquet(with_provenance_columns(table, provenance), snakemake.output.parquet, provenance)  # noqa: F821
write_text(snakemake.output.markdown, icl_markdown(table, provenance))  # noqa: F821
