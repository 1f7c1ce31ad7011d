"""The index of result tables: which rule made each, from which inputs, under which config and code."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.tables import read_provenance

SHOWN_INPUTS = 5


def tables_index(made: dict, paths) -> pl.DataFrame:
    """made: table name -> {"rule", "inputs"}, in the order of `paths` (the tables' parquet files)."""
    rows = []
    for (name, entry), path in zip(made.items(), paths):
        record, inputs = read_provenance(path), entry["inputs"]
        rows.append({"table": name, "parquet": str(path), "rule": entry["rule"], "inputs": len(inputs),
                     "input_files": "; ".join(inputs[:SHOWN_INPUTS]) + (" ..." if len(inputs) > SHOWN_INPUTS else ""),
                     "rows": read_frame(path).height, "table_config_hash": record["config_hash"],
                     "table_code_version": record["code_version"]})
    return pl.DataFrame(rows)


def write_tables_index(made: dict, paths, outputs) -> None:
    from ..records.provenance import collect
    from ..records.tables import write_table

    write_table(tables_index(made, paths), outputs, collect(made),
                title="Result tables: the rule that made each and its inputs")
