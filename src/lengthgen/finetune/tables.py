"""The fine-tuning table: accuracy per (model, task, bin) with the theory's verdict."""

from __future__ import annotations

from ..lengthbins.table import bin_markdown, bin_table, per_run_accuracy, read_evals
from ..results.provenance import collect
from ..results.references import finetune_reference
from ..results.tables import write_table


def write_finetune_table(eval_paths, section: dict, outputs) -> None:
    provenance, bins = collect(section), section["bins"]
    table = bin_table(per_run_accuracy(read_evals(eval_paths)), bins, finetune_reference)
    write_table(table, outputs, provenance,
                markdown=bin_markdown(table, bins, provenance, title="Fine-tuned", system_label="model"))
