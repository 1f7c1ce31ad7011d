"""Adapter: the index of result tables (name, rule, inputs, rows, config hash, code version)."""
import polars as pl

from lengthgen.provenance import collect
from lengthgen.tables import read_provenance, write_table

section = snakemake.params.section  # noqa: F821
rows = []
for (name, made), path in zip(section.items(), snakemake.input.tables):  # noqa: F821
    record = read_provenance(path)
    rows.append({"table": name, "parquet": path, "rule": made["rule"], "inputs": len(made["inputs"]),
                 "input_files": "; ".join(made["inputs"][:5]) + (" ..." if len(made["inputs"]) > 5 else ""),
                 "rows": pl.read_parquet(path).height, "table_config_hash": record["config_hash"],
                 "table_code_version": record["code_version"]})
index = pl.DataFrame(rows)
write_table(index, snakemake.output.parquet, snakemake.output.markdown, collect(section),  # noqa: F821
            title="Result tables: the rule that made each and its inputs")
