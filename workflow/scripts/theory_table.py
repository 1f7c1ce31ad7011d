"""Adapter: the C-RASP[pos] theory table."""
from lengthgen.provenance import collect
from lengthgen.tables import write_table
from lengthgen.theory import theory_table

section = snakemake.params.section  # noqa: F821
write_table(theory_table(section["tasks"]), snakemake.output.parquet, snakemake.output.markdown,  # noqa: F821
            collect(section), title="Theory: which tasks C-RASP[pos] predicts to length-generalise")
