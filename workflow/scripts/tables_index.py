"""Adapter: the index of result tables (name, rule, inputs, rows, config hash, code version)."""
from lengthgen.results.index import tables_index
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table

section = snakemake.params.section
write_table(tables_index(section, snakemake.input.tables), snakemake.output.parquet, snakemake.output.markdown,
            collect(section), title="Result tables: the rule that made each and its inputs")
