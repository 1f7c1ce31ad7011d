"""Adapter: the C-RASP[pos] theory table."""
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table
from lengthgen.tasks import get_task
from lengthgen.tasks.theory import theory_table

section = snakemake.params.section
write_table(theory_table([get_task(t) for t in section["tasks"]]), snakemake.output.parquet, snakemake.output.markdown,
            collect(section), title="Theory: which tasks C-RASP[pos] predicts to length-generalise")
