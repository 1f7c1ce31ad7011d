"""Adapter: one summary row per data file."""
from lengthgen.provenance import collect
from lengthgen.summary import summarise
from lengthgen.tables import write_table

write_table(summarise(snakemake.input), snakemake.output.parquet, snakemake.output.markdown,  # noqa: F821
            collect(snakemake.params.section), title="Data summary: per file, the checks that matter")  # noqa: F821
