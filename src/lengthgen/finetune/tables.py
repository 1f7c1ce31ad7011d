"""The fine-tuning table: accuracy per (model, task, bin) with the theory's verdict; the pairs of
tasks compared on the same bins with their tests (`finetune_pairs`); copying scored by source place
(`finetune_places`)."""

from __future__ import annotations

from ..lengthbins.places import place_accuracy, places_markdown, read_copying_evals
from ..lengthbins.table import (
    PAIR_EVAL_COLUMNS,
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
from ..records.tables import write_table
from ..references import finetune_reference


def write_finetune_table(eval_paths, bins: dict[str, list[str]], provenance: Provenance, outputs) -> None:
    provenance = provenance.record()
    evals = read_evals(eval_paths)
    table = bin_table(per_run_accuracy(evals), bins, finetune_reference, accuracy_intervals(evals))
    write_table(table, outputs, provenance,
                markdown=bin_markdown(table, bins, provenance, title="Fine-tuned", system_label="model",
                                      pairs_name="finetune_pairs"))


def write_finetune_pairs(eval_paths, data_paths, train_lengths, provenance: Provenance, outputs) -> None:
    """Every pair of tasks the theory compares, per model and bin (paired where the data files show
    the same inputs)."""
    provenance = provenance.record()
    pairs = bin_pairs(read_evals(eval_paths, PAIR_EVAL_COLUMNS), read_inputs(data_paths), train_lengths)
    write_table(pairs, outputs, provenance, markdown=pairs_markdown(pairs, "Fine-tuned", "model", provenance))


def write_finetune_places(eval_paths, bins: dict[str, list[str]], train_lengths, provenance: Provenance,
                          outputs) -> None:
    """Each copying task's accuracy by the source place of its output symbols: whether the copy is
    found by matching or by position (the reason a backward copy fails beyond the training lengths)."""
    provenance, train_lengths = provenance.record(), train_lengths["copying"]
    table = place_accuracy(read_copying_evals(eval_paths), train_lengths)
    write_table(table, outputs, provenance,
                markdown=places_markdown(table, bins["copying"], train_lengths, provenance))
