"""Per data file, the numbers that show the data is what its task says it is."""

from __future__ import annotations

import polars as pl

from ..records.provenance import Provenance
from .datafile import read_examples
from .definitions import get_task


def _checks(row: dict) -> dict:
    context, occurrences = row["context"], row["occurrences"]
    n = len(context)
    counted = [i for i, s in enumerate(context) if s == row["query"]] if row["query"] >= 0 else []
    return {
        "occurrences": len(occurrences),
        "occurrences_match": counted == list(occurrences),
        "neighbours_inside": all(0 < p < n - 1 for p in occurrences),
        "non_adjacent": all(b - a >= 2 for a, b in zip(occurrences, occurrences[1:])),
        "distinct_share": len(set(context)) / n,
        "min_symbol_count": min(context.count(s) for s in set(context)),
    }


def summarise_file(path) -> dict:
    """One summary row for one data file."""
    table = read_examples(path).to_pylist()
    first = table[0]
    task = get_task(first["task"])
    checks = [_checks(row) for row in table]

    def mean(key: str) -> float:
        return sum(c[key] for c in checks) / len(checks)

    occurrence_ok = all(c["occurrences_match"] and c["neighbours_inside"] and c["non_adjacent"] for c in checks)
    if task.family == "retrieval":
        expected = (lambda c: c["occurrences"] == 1) if task.unique else (lambda c: c["occurrences"] >= 2)
        constraint_ok = occurrence_ok and all(expected(c) for c in checks)
    else:
        constraint_ok = all(c["distinct_share"] == 1.0 for c in checks) if task.unique else True
    lengths = [row["length"] for row in table]
    return {
        "encoding": first["encoding"], "task": task.name, "bin": first["bin"], "seed": first["seed"],
        "examples": len(table), "min_length": min(lengths), "max_length": max(lengths),
        "mean_length": sum(lengths) / len(lengths),
        "mean_query_occurrences": mean("occurrences") if task.family == "retrieval" else None,
        "mean_distinct_share": mean("distinct_share"),
        "share_every_symbol_repeated": sum(c["min_symbol_count"] >= 2 for c in checks) / len(checks),
        "constraints_hold": constraint_ok,
    }


def summarise(paths) -> pl.DataFrame:
    rows = [summarise_file(p) for p in paths]
    if not rows:  # a grid without data (e.g. only the mechanism stage): an empty table, not an error
        return pl.DataFrame(schema={"encoding": pl.Utf8, "task": pl.Utf8, "bin": pl.Utf8, "seed": pl.Int64})
    return pl.DataFrame(rows).sort(["encoding", "task", "bin", "seed"])


def write_data_summary(paths, provenance: Provenance, outputs) -> None:
    from ..records.tables import write_table

    write_table(summarise(paths), outputs, provenance.record(), title="Data summary: per file, the checks that matter")
