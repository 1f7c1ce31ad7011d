"""Parquet tables with provenance, written atomically, and their markdown twins."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from .files import atomic_path, read_schema

PROVENANCE_KEY = b"lengthgen.provenance"


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_parquet(table: pa.Table | pl.DataFrame, path, provenance: dict) -> None:
    """Write `table` with the provenance record in its schema metadata, atomically, with its sha256
    in the sidecar `path.sha256` that every read through `records.files` checks."""
    if isinstance(table, pl.DataFrame):
        table = table.to_arrow()
    metadata = dict(table.schema.metadata or {})
    metadata[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True, default=str).encode()
    with atomic_path(path, checksum=True) as tmp:
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
    """The table as CSV for the report (columns that are all null dropped; a list column, which CSV
    cannot hold, as its values joined by ", ", the way the markdown shows it)."""
    def column(name: str) -> pl.Expr:
        if isinstance(frame[name].dtype, pl.List):
            return pl.col(name).list.eval(pl.element().cast(pl.String)).list.join(", ")
        return pl.col(name)

    return frame.select([column(c) for c in frame.columns if frame[c].dtype != pl.Null]).write_csv()


# The report shows a table's HTML twin in its own frame: a page of its own, readable without the report.
HTML_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:1em;}} table{{border-collapse:collapse;margin:1em 0;font-size:0.9em;}}
th,td{{border:1px solid #bbb;padding:0.25em 0.5em;text-align:left;vertical-align:top;}} th{{background:#eee;}}
tbody tr:nth-child(even){{background:#f7f7f7;}}</style></head>
<body>
{body}
</body></html>
"""


def html_page(markdown_text: str, title: str) -> str:
    """The table's markdown (its own layout, headings and notes included) as one HTML page, through
    Python-Markdown's tables extension, so the report's reader sees exactly what the markdown says."""
    import html

    import markdown

    return HTML_PAGE.format(title=html.escape(title), body=markdown.markdown(markdown_text, extensions=["tables"]))


def write_table(frame: pl.DataFrame, paths, provenance: dict, title: str = "", markdown: str | None = None) -> None:
    """A results table: parquet with provenance columns and metadata, a readable markdown file
    (`markdown` when the table has its own layout, else the frame itself under `title`), its HTML
    page (what the report shows) and a CSV twin (a download) where `paths` names them.

    paths: anything with attributes `parquet`, `markdown` and optionally `html`, `csv` (a rule's output)."""
    table = with_provenance_columns(frame, provenance)
    write_parquet(table, paths.parquet, provenance)
    if markdown is None:
        head = f"# {title}\n\n" if title else ""
        foot = (f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}, "
                f"device {provenance['device']}\n")
        markdown = head + to_markdown(frame) + foot
    write_text(paths.markdown, markdown)
    if getattr(paths, "html", None):
        write_text(paths.html, html_page(markdown, title or Path(str(paths.parquet)).stem))
    if getattr(paths, "csv", None):
        write_text(paths.csv, csv_text(table))
