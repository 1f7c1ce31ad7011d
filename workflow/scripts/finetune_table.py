"""Adapter: the fine-tuning table (per model, task and bin: mean and spread over seeds, theory, mirror pairs)."""
from lengthgen.finetune import finetune_markdown, finetune_table
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_table

section = snakemake.params.section
provenance = collect(section)
table = finetune_table(snakemake.input.evals, section["bins"])
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,
            markdown=finetune_markdown(table, section["bins"], provenance))
