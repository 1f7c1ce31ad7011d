"""Protocol x direction: does a fine-tuning protocol change a mirror pair's gap? For each mirror pair
(UF and UB, NRFirst and NLFirst) and test bin that two protocols share, each seed's mirror difference
(first minus second accuracy) under the baseline protocol against the same seed's under the other:
the seeds' differences of differences, a one-sample t test over the seeds (`stats.run_differences_
comparison`; the same seed: the same data and initial weights, so the pairing is by seed), Holm over
the table. Per-protocol verdicts say whether each gap is there; this says whether the protocol moved
it, which is what decides between two readings of a contradiction (e.g. untrained positions against
short training strings: `configs/finetune_positions.yaml`).

Read from a run's `finetune_pairs` table (one `system` per model and protocol, each seed's
accuracies in `first_per_seed` / `second_per_seed`)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import read_provenance, to_markdown, write_table
from ..stats import LEVEL, holm, per_run_errors, run_differences_comparison

SCHEMA = {"model": pl.String, "baseline": pl.String, "protocol": pl.String, "first": pl.String,
          "second": pl.String, "bin": pl.String, "beyond_training": pl.Boolean, "seeds": pl.Int64,
          "baseline_gap": pl.Float64, "protocol_gap": pl.Float64,
          "baseline_per_seed": pl.List(pl.Float64), "protocol_per_seed": pl.List(pl.Float64),
          "difference": pl.Float64, "difference_low": pl.Float64, "difference_high": pl.Float64,
          "test": pl.String, "p": pl.Float64, "p_holm": pl.Float64, "verdict": pl.String}
MIRROR = "mirror pair"


def seed_gaps(row: dict) -> tuple[list[float], list[float]]:
    """Each seed's mirror difference and its sampling error (the two accuracies' Wilson errors over
    the seed's examples, combined as if independent: a bound, the pairing only narrows it)."""
    examples = row.get("pairs") or row.get("first_examples")
    gaps = [a - b for a, b in zip(row["first_per_seed"], row["second_per_seed"])]
    errors = [math.hypot(a, b) for a, b in zip(per_run_errors(row["first_per_seed"], examples),
                                               per_run_errors(row["second_per_seed"], examples))]
    return gaps, errors


def interaction_table(pairs: pl.DataFrame, baseline: str = "default") -> pl.DataFrame:
    """One row per (model, other protocol, mirror pair, bin) that the baseline shares: the mean over
    seeds of (baseline gap - protocol gap), its t interval and test, and the verdict after Holm over
    every row. A row needs the same seeds under both protocols."""
    mirrors = pairs.filter(pl.col("comparison") == MIRROR, pl.col("measure") == "teacher_forced",
                           pl.col("first_per_seed").is_not_null())
    systems = mirrors.get_column("system").unique(maintain_order=True).to_list()
    models = sorted({s.split("/")[0] for s in systems})
    rows = []
    for model in models:
        base = {(r["first"], r["second"], r["bin"]): r
                for r in mirrors.filter(pl.col("system") == model).iter_rows(named=True)}
        for system in systems:
            if not system.startswith(f"{model}/"):
                continue
            protocol = system.split("/", 1)[1]
            for r in mirrors.filter(pl.col("system") == system).iter_rows(named=True):
                b = base.get((r["first"], r["second"], r["bin"]))
                if b is None or len(b["first_per_seed"]) != len(r["first_per_seed"]):
                    continue
                (gaps_b, errors_b), (gaps_p, errors_p) = seed_gaps(b), seed_gaps(r)
                result = run_differences_comparison(gaps_b, gaps_p, errors_b, errors_p,
                                                    f"the gap wider under {baseline}", f"the gap wider under {protocol}",
                                                    bounds=(-2.0, 2.0))
                rows.append({"model": model, "baseline": baseline, "protocol": protocol, "first": r["first"],
                             "second": r["second"], "bin": r["bin"], "beyond_training": r.get("beyond_training"),
                             "seeds": len(gaps_b), "baseline_gap": result.first_value, "protocol_gap": result.second_value,
                             "baseline_per_seed": gaps_b, "protocol_per_seed": gaps_p, "difference": result.difference,
                             "difference_low": result.difference_low, "difference_high": result.difference_high,
                             "test": result.test, "p": result.p})
    adjusted = holm([r["p"] for r in rows]) if rows else []
    for row, p_holm in zip(rows, adjusted):
        row["p_holm"] = float(p_holm)
        row["verdict"] = ("not distinguishable from noise" if p_holm >= LEVEL or row["difference"] == 0
                          else f"the gap wider under {row['baseline'] if row['difference'] > 0 else row['protocol']}")
    return pl.DataFrame(rows, schema=SCHEMA)


def interaction_markdown(table: pl.DataFrame, provenance: dict) -> str:
    def gaps(values):
        return ", ".join(f"{v:+.2f}" for v in values)

    def side(name):
        return pl.struct(f"{name}_gap", f"{name}_per_seed").map_elements(
            lambda r: f"{r[f'{name}_gap']:+.2f} ({gaps(r[f'{name}_per_seed'])})", return_dtype=pl.String)

    shown = table.select(
        "model", "protocol", "first", "second", "bin", "beyond_training",
        side("baseline").alias("baseline gap (per seed)"), side("protocol").alias("protocol gap (per seed)"),
        pl.struct("difference", "difference_low", "difference_high").map_elements(
            lambda r: f"{r['difference']:+.2f} [{r['difference_low']:.2f}, {r['difference_high']:.2f}]",
            return_dtype=pl.String).alias("interaction [95%]"),
        "p", "p_holm", "verdict")
    return ("# Protocol x direction: each seed's mirror gap (first minus second) under the baseline against "
            "the same seed's under the protocol\n\n"
            "The interaction is the mean over seeds of (baseline gap - protocol gap), a one-sample t test over "
            "the seeds, Holm over the table's rows.\n\n" + to_markdown(shown) +
            f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}\n")


def write_interaction(pairs_path, out_stem, baseline: str = "default") -> pl.DataFrame:
    """`interaction_table` of a finished run's finetune_pairs table, written as OUT_STEM.parquet and .md
    with a provenance naming the pairs table it was read from."""
    source = read_provenance(pairs_path)
    table = interaction_table(read_frame(pairs_path), baseline)
    if table.is_empty():
        raise ValueError(f"{pairs_path}: no mirror pair shared by {baseline!r} and another protocol over the same seeds")
    provenance = Provenance({"pairs": str(pairs_path), "baseline": baseline,
                             "pairs_config_hash": source.get("config_hash"),
                             "pairs_code_version": source.get("code_version")}).record()
    stem = Path(out_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_table(table, SimpleNamespace(parquet=stem.with_suffix(".parquet"), markdown=stem.with_suffix(".md")),
                provenance, markdown=interaction_markdown(table, provenance))
    return table

