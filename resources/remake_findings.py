"""Remake a shipped study's findings table from the pairs tables shipped beside it, with the verdict
rules of the code that runs this (the trainings are not rerun: a pairs table holds each comparison's
numbers, each run's values included). The corpora study's steps-to-reach rows are first re-tested
on ranks from each model's stored value ("never" ranked last, `stats.rank_comparison`), as the
pairs table now makes them; rows made before the pairs tables stored `spread` (one model's
between-run standard deviation, which sizes `runs_needed`) get it back from their interval and p (`spread_from_interval`).

    .venv/bin/python resources/remake_findings.py resources/corpora/tables resources/finetune_seeds \
        resources/finetune_protocols resources/finetune_protocols/full_budget
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import polars as pl

from lengthgen.corpora.pairs import SCHEMA, STEPS
from lengthgen.records.files import read_frame
from lengthgen.records.provenance import collect
from lengthgen.records.tables import read_provenance, write_table
from lengthgen.results.findings import findings_sources, findings_table
from lengthgen.results.findings_markdown import findings_markdown
from lengthgen.results.verdicts import VerdictRules
from lengthgen.stats import rank_comparison, t_quantile, t_two_sided_p

SELF = "resources/remake_findings.py"


def outputs(folder: Path, name: str) -> SimpleNamespace:
    return SimpleNamespace(parquet=folder / f"{name}.parquet", markdown=folder / f"{name}.md")


def spread_from_interval(row: dict) -> tuple[float | None, int | None]:
    """(spread, df) as `stats.runs_comparison` would have stored them, recovered from the row's
    interval and p: Welch's df is the integer whose t quantile and p fit both, the arms' standard
    error follows, and with equal arms of n models one model's sd is that error times sqrt(n / 2)
    (one arm: times sqrt(n))."""
    sizes = [len(v) for v in (row["first_per_seed"], row["second_per_seed"]) if v is not None]
    low, high, difference, p = row["difference_low"], row["difference_high"], row["difference"], row["p"]
    if not sizes or min(sizes) < 2 or len(set(sizes)) > 1 or None in (low, high, difference, p) or high <= low:
        return None, None
    def misfit(df):
        error = (high - low) / 2 / t_quantile(0.975, df)
        return abs(math.log(max(t_two_sided_p(difference / error, df), 1e-300)) - math.log(max(p, 1e-300)))
    df = min(range(1, 200), key=misfit)
    error = (high - low) / 2 / t_quantile(0.975, df)
    return error * math.sqrt(sizes[0] / (2 if len(sizes) == 2 else 1)), df


def rerank_steps(pairs: pl.DataFrame, cap: float) -> pl.DataFrame:
    """The steps-to-reach rows re-tested on the models' ranks (their stored per-model values), and
    every row's `spread` where the table predates it."""
    if "spread" not in pairs.columns:
        pairs = pairs.with_columns(pl.lit(None, pl.Float64).alias("spread"), pl.lit(None, pl.Int64).alias("df"))
    rows = []
    for row in pairs.iter_rows(named=True):
        if row["spread"] is None and row["measure"] != STEPS:
            row["spread"], row["df"] = spread_from_interval(row)
        if row["measure"] == STEPS:
            result = rank_comparison(row["first_per_seed"], row["second_per_seed"], cap,
                                     f"{row['first']} above", f"{row['second']} above").row()
            row = {**row, **result}
        rows.append({name: row.get(name) for name in SCHEMA})
    return pl.DataFrame(rows, schema=SCHEMA)


def remake_corpus_pairs(folder: Path) -> None:
    path = folder / "corpus_pairs.parquet"
    old = read_provenance(path)
    curve = old["config"]["finetune"]
    cap = curve["max_steps"] + curve["eval_every"]  # "never": one evaluation past the last step
    provenance = collect(old["config"], extra={"remade_from": old["code_version"], "remade_by": SELF})
    shipped = read_frame(path)
    pairs = rerank_steps(shipped.select([name for name in SCHEMA if name in shipped.columns]), cap)
    write_table(pairs, outputs(folder, "corpus_pairs"), provenance,
                title="Corpora: the arms compared over their pretraining seeds, on the same prompts and examples "
                      "(95% intervals; Welch's t over the seeds, a z test where an arm has one; steps to reach "
                      "on ranks)")
    (folder / "corpus_pairs.provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")


def remake_findings(folder: Path) -> None:
    if (folder / "corpus_pairs.parquet").exists():
        remake_corpus_pairs(folder)
    tables = {name: read_frame(folder / f"{name}.parquet") for name in findings_sources()
              if (folder / f"{name}.parquet").exists()}
    if not tables:
        raise SystemExit(f"{folder}: no pairs table ({', '.join(findings_sources())}) to remake findings from")
    old_path = folder / "findings.parquet"
    old = read_provenance(old_path) if old_path.exists() else {"config": {}, "code_version": None}
    config = old["config"]
    rules = VerdictRules(**config.get("rules", {}))
    provenance = collect(config, extra={"remade_from": old["code_version"], "remade_by": SELF})
    frame = findings_table(tables, config.get("models") or None, rules)
    write_table(frame, outputs(folder, "findings"), provenance, markdown=findings_markdown(frame, provenance, rules))
    (folder / "findings.provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")


if __name__ == "__main__":
    for name in sys.argv[1:] or sys.exit(__doc__):
        remake_findings(Path(name))
        print(f"remade {name}/findings")
