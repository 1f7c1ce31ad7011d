"""Adapter: the fine-tuning table (per model, task and bin: mean and spread over seeds, theory, mirror pairs)."""
from lengthgen.provenance import collect
from lengthgen.scratch import per_run_accuracy, read_evals, scratch_markdown, scratch_table
from lengthgen.tables import write_table

section = snakemake.params.section  # noqa: F821
provenance = collect(section)
table = scratch_table(per_run_accuracy(read_evals(snakemake.input.evals, "model"), "model"), section["bins"], "model")  # noqa: F821
write_table(table, snakemake.output.parquet, snakemake.output.markdown, provenance,  # noqa: F821
            markdown=scratch_markdown(table, section["bins"], provenance, unit="model", title="Fine-tuned"))
