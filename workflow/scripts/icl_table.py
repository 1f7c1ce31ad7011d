"""Adapter: the in-context table (accuracy per task, model, length, variant; mirror pairs; induction-bias errors)."""
from lengthgen.icl.table import icl_markdown, icl_table
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table

provenance = collect(snakemake.params.section)
table = icl_table(snakemake.input)
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,
            markdown=icl_markdown(table, provenance))
