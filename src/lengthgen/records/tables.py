"""Parquet tables with provenance, written atomically, and their markdown twins."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from .files import read_schema

PROVENANCE_KEY = b"lengthgen.provenance"
_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; rename it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's private 0600 would hide results from the rest of a group
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_parquet(table: pa.Table | pl.DataFrame, path, provenance: dict) -> None:
    """Write `table` with the provenance record in its schema metadata, atomically."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    metadata = dict(table.schema.metadata or {})
    metadata[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True, default=str).encode()
    with atomic_path(path) as tmp:
        pq.write_table(table.replace_schema_metadata(metadata), tmp)


def with_provenance_columns(frame: pl.DataFrame, provenance: dict) -> pl.DataFrame:
    """Add the per-row provenance columns (config hash, code version, device; seed if absent)."""
    columns = [pl.lit(provenance["config_hash"]).alias("config_hash"),
               pl.lit(provenance["code_version"]).alias("code_version"),
               pl.lit(provenance["device"]).alias("device")]
    if "seed" not in frame.columns:
        columns.append(pl.lit(provenance.get("seed")).alias("seed"))
    return frame.with_columns(columns)


def read_provenance(path) -> dict:
    metadata = read_schema(path).metadata or {}
    if PROVENANCE_KEY not in metadata:
        raise ValueError(f"{path} carries no lengthgen provenance")
    return json.loads(metadata[PROVENANCE_KEY])


def to_markdown(frame: pl.DataFrame, float_digits: int = 3) -> str:
    """A GitHub-flavoured markdown table (no extra dependency)."""
    def cell(value) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.{float_digits}f}"
        if isinstance(value, (list, tuple)):
            return ", ".join(cell(v) for v in value)
        return str(value).replace("|", "\\|")

    header = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join([header, rule, *rows]) + "\n"


def csv_text(frame: pl.DataFrame) -> str:
    """The table as CSV for the report (columns that are all null dropped)."""
    return frame.select([c for c in frame.columns if frame[c].dtype != pl.Null]).write_csv()


def write_table(frame: pl.DataFrame, paths, provenance: dict, title: str = "", markdown: str | None = None) -> None:
    """A results table: parquet with provenance columns and metadata, a readable markdown file
    (`markdown` when the table has its own layout, else the frame itself under `title`), and a
    CSV twin for the report where `paths` names one.

    paths: anything with attributes `parquet`, `markdown` and optionally `csv` (a rule's output)."""
    table = with_provenance_columns(frame, provenance)
    write_parquet(table, paths.parquet, provenance)
    if markdown is None:
        head = f"# {title}\n\n" if title else ""
        foot = (f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}, "
                f"device {provenance['device']}\n")
        markdown = head + to_markdown(frame) + foot
    write_text(paths.markdown, markdown)
    if getattr(paths, "csv", None):
        write_text(paths.csv, csv_text(table))
