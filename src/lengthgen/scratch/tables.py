"""The from-scratch tables: accuracy per (PE, task, bin) with the theory's verdict, and per length."""

from __future__ import annotations

from ..lengthbins.table import accuracy_by_length, bin_markdown, bin_table, per_run_accuracy, read_evals
from ..results.provenance import collect
from ..results.references import scratch_reference
from ..results.tables import with_provenance_columns, write_parquet, write_table


def write_scratch_tables(eval_paths, section: dict, outputs) -> None:
    """outputs: `parquet`, `markdown`, `csv` of the table and `by_length` (accuracy per input length)."""
    provenance, bins = collect(section), section["bins"]
    evals = read_evals(eval_paths)
    table = bin_table(per_run_accuracy(evals), bins, scratch_reference)
    write_table(table, outputs, provenance,
                markdown=bin_markdown(table, bins, provenance, title="From scratch", system_label="PE"))
    write_parquet(with_provenance_columns(accuracy_by_length(evals), provenance), outputs.by_length, provenance)
