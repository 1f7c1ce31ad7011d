"""Adapter: from scratch vs in context vs fine-tuned per mirror pair, beside the theory."""
import polars as pl

from lengthgen.comparison import comparison_markdown, comparison_rows
from lengthgen.provenance import collect
from lengthgen.tables import write_table

provenance = collect(snakemake.params.section)  # noqa: F821
rows = comparison_rows(*(pl.read_parquet(snakemake.input[k]) for k in ("scratch", "icl", "finetune")))  # noqa: F821
write_table(rows, snakemake.output.parquet, snakemake.output.markdown, provenance,  # noqa: F821
            markdown=comparison_markdown(rows, provenance))
