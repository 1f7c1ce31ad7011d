"""The shipped studies' findings tables are what the current verdict rules make of the pairs tables
shipped beside them (remade by resources/remake_findings.py), and the findings carry the pairs
tables' numbers unchanged: only the verdicts, families and power columns are the findings' own."""

import math
from pathlib import Path

import polars as pl
import pytest

from lengthgen.records.files import read_frame
from lengthgen.results.findings import findings_sources, findings_table
from lengthgen.results.verdicts import VerdictRules

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
STUDIES = ["corpora/tables", "finetune_seeds", "finetune_protocols", "finetune_protocols/full_budget"]
CARRIED = ["first_value", "first_low", "first_high", "second_value", "second_low", "second_high", "difference",
           "difference_low", "difference_high", "p"]
JUDGED = ["family", "family_size", "p_holm", "verdict", "pooled_verdict", "claim_verdict", "runs_needed",
          "runs_needed_bound", "examples_needed", "smallest_p", "note"]


def pairs_tables(folder: Path) -> dict[str, pl.DataFrame]:
    return {name: read_frame(folder / f"{name}.parquet") for name in findings_sources()
            if (folder / f"{name}.parquet").exists()}


@pytest.mark.parametrize("study", STUDIES)
def test_a_shipped_findings_table_is_what_the_rules_make_of_its_pairs(study):
    folder = RESOURCES / study
    shipped = read_frame(folder / "findings.parquet")
    remade = findings_table(pairs_tables(folder), None, VerdictRules())
    assert remade.select(JUDGED + CARRIED).equals(shipped.select(JUDGED + CARRIED)), \
        f"{study}: run resources/remake_findings.py {folder}"


@pytest.mark.parametrize("study", STUDIES)
def test_the_findings_carry_the_pairs_numbers_unchanged(study):
    folder = RESOURCES / study
    findings = read_frame(folder / "findings.parquet").filter(pl.col("test").is_not_null(),
                                                              ~pl.col("measure").str.contains("drop"))
    pairs = pl.concat([t.select(CARRIED) for t in pairs_tables(folder).values()], how="vertical_relaxed")
    rows = {rounded(r) for r in pairs.iter_rows()}
    carried = [rounded(r) for r in findings.select(CARRIED).iter_rows()]
    assert carried and [row for row in carried if row not in rows] == []


def rounded(row: tuple) -> tuple:
    """A row's numbers to 9 places, NaN as None (NaN equals nothing, itself included)."""
    return tuple(None if v is None or math.isnan(v) else round(v, 9) for v in row)
