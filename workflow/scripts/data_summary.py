"""Adapter: one summary row per data file."""
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table
from lengthgen.tasks.summary import summarise

write_table(summarise(snakemake.input), snakemake.output.parquet, snakemake.output.markdown,
            collect(snakemake.params.section), title="Data summary: per file, the checks that matter")
