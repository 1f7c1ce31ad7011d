"""The from-scratch tables: accuracy per (PE, task, bin) with the theory's verdict, and per length;
the pairs of tasks compared on the same bins with their tests (`scratch_pairs`)."""

from __future__ import annotations

from ..lengthbins.table import (
    PAIR_EVAL_COLUMNS,
    accuracy_by_length,
    accuracy_intervals,
    bin_markdown,
    bin_pairs,
    bin_table,
    pairs_markdown,
    per_run_accuracy,
    read_evals,
    read_inputs,
)
from ..records.provenance import Provenance
from ..records.tables import with_provenance_columns, write_parquet, write_table
from ..references import scratch_reference


def write_scratch_tables(eval_paths, bins: dict[str, list[str]], provenance: Provenance, outputs) -> None:
    """outputs: `parquet`, `markdown`, `csv` of the table and `by_length` (accuracy per input length)."""
    provenance = provenance.record()
    evals = read_evals(eval_paths)
    table = bin_table(per_run_accuracy(evals), bins, scratch_reference, accuracy_intervals(evals))
    write_table(table, outputs, provenance,
                markdown=bin_markdown(table, bins, provenance, title="From scratch", system_label="PE",
                                      pairs_name="scratch_pairs"))
    write_parquet(with_provenance_columns(accuracy_by_length(evals), provenance), outputs.by_length, provenance)


def write_scratch_pairs(eval_paths, data_paths, train_lengths, provenance: Provenance, outputs) -> None:
    """Every pair of tasks the theory compares, per PE and bin, on the examples of `eval_paths`
    (paired where `data_paths` show the same inputs)."""
    provenance = provenance.record()
    pairs = bin_pairs(read_evals(eval_paths, PAIR_EVAL_COLUMNS), read_inputs(data_paths), train_lengths)
    write_table(pairs, outputs, provenance, markdown=pairs_markdown(pairs, "From scratch", "PE", provenance))
