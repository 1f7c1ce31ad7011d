"""The fine-tuning table: accuracy per (model, task, bin) with the theory's verdict; the pairs of
tasks compared on the same bins with their tests (`finetune_pairs`); copying scored by source place
(`finetune_places`)."""

from __future__ import annotations

import polars as pl

from ..config.sections import DEFAULT_PROTOCOL
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


def system_label(model: str, protocol: str) -> str:
    """The `system` of a fine-tuned model in the tables: the model under the default protocol, else
    `model/protocol`, so that every comparison (and finding 3's verdict) is per protocol."""
    return model if protocol == DEFAULT_PROTOCOL else f"{model}/{protocol}"


def by_protocol(evals: pl.DataFrame, protocols: dict[str, dict], models) -> list[tuple[str, dict, pl.DataFrame]]:
    """(protocol, its lengths {train_lengths, bins}, its rows) for each protocol with evaluations."""
    parts = []
    for protocol, lengths in protocols.items():
        part = evals.filter(pl.col("system").is_in([system_label(m, protocol) for m in models]))
        if part.height:
            parts.append((protocol, lengths, part))
    first = next(iter(protocols))
    return parts or [(first, protocols[first], evals)]  # nothing evaluated (no copying task): one empty part


def _write_per_protocol(parts, protocols: dict, outputs, provenance: dict, table_of, markdown_of) -> None:
    """One table over the protocols: `table_of(lengths, rows)` per protocol with its `protocol`
    column, the markdown of each (`markdown_of(table, lengths, title)`) one after the other."""
    tables, texts = [], []
    for protocol, lengths, part in parts:
        table = table_of(lengths, part)
        tables.append(table.with_columns(pl.lit(protocol).alias("protocol")))
        title = "Fine-tuned" if len(protocols) == 1 else f"Fine-tuned, protocol {protocol}"
        texts.append(markdown_of(table, lengths, title))
    write_table(pl.concat(tables, how="diagonal_relaxed"), outputs, provenance, markdown="\n".join(texts))


def write_finetune_table(eval_paths, protocols: dict[str, dict], models, provenance: Provenance, outputs) -> None:
    """Per protocol, accuracy per (model, task, bin) on that protocol's bins."""
    provenance, evals = provenance.record(), read_evals(eval_paths)
    _write_per_protocol(
        by_protocol(evals, protocols, models), protocols, outputs, provenance,
        lambda lengths, part: bin_table(per_run_accuracy(part), lengths["bins"], finetune_reference,
                                        accuracy_intervals(part)),
        lambda table, lengths, title: bin_markdown(table, lengths["bins"], provenance, title=title,
                                                   system_label="model", pairs_name="finetune_pairs"))


def write_finetune_pairs(eval_paths, data_paths, protocols: dict[str, dict], models, provenance: Provenance,
                         outputs) -> None:
    """Every pair of tasks the theory compares, per model, protocol and bin (paired where the data
    files show the same inputs), in distribution by each protocol's training lengths."""
    provenance = provenance.record()
    evals, inputs = read_evals(eval_paths, PAIR_EVAL_COLUMNS), read_inputs(data_paths)
    _write_per_protocol(
        by_protocol(evals, protocols, models), protocols, outputs, provenance,
        lambda lengths, part: bin_pairs(part, inputs, lengths["train_lengths"]),
        lambda pairs, lengths, title: pairs_markdown(pairs, title, "model", provenance))


def write_finetune_places(eval_paths, protocols: dict[str, dict], models, provenance: Provenance, outputs) -> None:
    """Each copying task's accuracy by the source place of its output symbols, per protocol: whether
    the copy is found by matching or by position (the reason a backward copy fails beyond the
    training lengths)."""
    provenance, evals = provenance.record(), read_copying_evals(eval_paths)
    _write_per_protocol(
        by_protocol(evals, protocols, models), protocols, outputs, provenance,
        lambda lengths, part: place_accuracy(part, lengths["train_lengths"]["copying"]),
        lambda table, lengths, title: places_markdown(table, lengths["bins"]["copying"],
                                                      lengths["train_lengths"]["copying"], provenance))
