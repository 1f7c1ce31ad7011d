"""Adapter: from scratch vs in context vs fine-tuned per mirror pair, beside the theory."""
import polars as pl

from lengthgen.results.comparison import comparison_markdown, comparison_rows
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table

provenance = collect(snakemake.params.section)
rows = comparison_rows(*(pl.read_parquet(snakemake.input[k]) for k in ("scratch", "icl", "finetune")))
write_table(rows, snakemake.output.parquet, snakemake.output.markdown, provenance,
            markdown=comparison_markdown(rows, provenance))
