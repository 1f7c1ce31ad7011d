"""Adapter: the in-context table (accuracy per task, model, length, variant; mirror pairs; induction-bias errors)."""
from lengthgen.icl_table import icl_markdown, icl_table
from lengthgen.provenance import collect
from lengthgen.tables import write_table

provenance = collect(snakemake.params.section)  # noqa: F821
table = icl_table(snakemake.input)  # noqa: F821
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,  # noqa: F821
            markdown=icl_markdown(table, provenance))
