"""Finding 3 across fine-tuning protocols: each comparison's verdict under every protocol, side by
side by the bin's place beyond training (the first bin past the training lengths, the second), with
the accuracies as mean ± std over seeds, and whether the verdict holds under every protocol or
depends on the protocol.

Read from the findings table (its finding-3 comparisons, one system per protocol) and the
fine-tuning table (the spread over seeds); the bins differ between protocols (21-40 by default,
51-100 at the paper's lengths), so a comparison is matched across protocols by its place beyond
training, not by its bin.
"""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import write_table
from ..stats import interval_text
from ..tasks import TASKS, get_task
from ..tasks.lengths import bins_beyond
from .tables import system_label

HOLDS, DEPENDS, ONE = "holds under every protocol", "depends on the protocol", "one protocol judged it"
NONE = "no protocol judged it"
# Not a verdict on the claim: the comparison was gated (a side never learnt the task in distribution)
# or not made; such a protocol neither keeps nor changes a verdict.
UNJUDGED = ("not learnt", "not run")


def beyond_place(bins: list[str], train_lengths: str, length_bin: str) -> int | None:
    """1 for the first test bin past the training lengths, 2 for the next, ...; None in distribution."""
    beyond = bins_beyond(bins, train_lengths)
    return beyond.index(length_bin) + 1 if length_bin in beyond else None


ROW_SCHEMA = {"claim": pl.String, "kind": pl.String, "first": pl.String, "second": pl.String, "model": pl.String,
              "protocol": pl.String, "beyond": pl.Int64, "bin": pl.String, "train_lengths": pl.String,
              "seeds": pl.Int64, "first_value": pl.Float64, "first_std": pl.Float64, "second_value": pl.Float64,
              "second_std": pl.Float64, "difference": pl.Float64, "difference_low": pl.Float64,
              "difference_high": pl.Float64, "verdict": pl.String}


def robustness_rows(findings: pl.DataFrame, accuracies: pl.DataFrame, protocols: dict[str, dict],
                    models) -> pl.DataFrame:
    """One row per (claim, comparison, place beyond training, protocol): the two sides' mean ± std
    over seeds, the difference with its interval and the verdict."""
    system_of = {system_label(m, p): (m, p) for m in models for p in protocols}
    spread = {(r["system"], r["task"], r["bin"]): r["accuracy_std"] for r in accuracies.iter_rows(named=True)}
    rows = []
    for r in findings.filter(pl.col("finding") == 3).iter_rows(named=True):
        if r["system"] not in system_of or r["first"] not in TASKS:
            continue  # another model's, or a drop comparison (its sides "<task> drop"): not accuracy at a place
        model, protocol = system_of[r["system"]]
        family = get_task(r["first"]).family
        lengths = protocols[protocol]
        rows.append({
            "claim": r["claim"], "kind": r["kind"], "first": r["first"], "second": r["second"], "model": model,
            "protocol": protocol, "beyond": beyond_place(lengths["bins"][family], lengths["train_lengths"][family],
                                                         r["length"]),
            "bin": r["length"], "train_lengths": lengths["train_lengths"][family], "seeds": r["seeds"],
            "first_value": r["first_value"], "first_std": spread.get((r["system"], r["first"], r["length"])),
            "second_value": r["second_value"], "second_std": spread.get((r["system"], r["second"], r["length"])),
            "difference": r["difference"], "difference_low": r["difference_low"],
            "difference_high": r["difference_high"], "verdict": r["verdict"]})
    return pl.DataFrame(rows, schema=ROW_SCHEMA)


def with_agreement(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with `across_protocols`: whether each comparison's verdict, at its place beyond
    training, is the same under every protocol that judged it."""
    key = ["claim", "first", "second", "model", "beyond"]
    judged = pl.col("verdict").filter(~pl.col("verdict").is_in(UNJUDGED))
    across = rows.group_by(key).agg(judged.n_unique().alias("_verdicts"), judged.len().alias("_protocols"))
    return (rows.join(across, on=key, how="left")
            .with_columns(pl.when(pl.col("_protocols") == 0).then(pl.lit(NONE))
                          .when(pl.col("_protocols") == 1).then(pl.lit(ONE))
                          .when(pl.col("_verdicts") == 1).then(pl.lit(HOLDS))
                          .otherwise(pl.lit(DEPENDS)).alias("across_protocols"))
            .drop("_verdicts", "_protocols"))


def robustness_table(findings: pl.DataFrame, accuracies: pl.DataFrame, protocols: dict[str, dict],
                     models) -> pl.DataFrame:
    """`robustness_rows` with `across_protocols` (`with_agreement`)."""
    return with_agreement(robustness_rows(findings, accuracies, protocols, models))


def combined_robustness(paths) -> tuple[pl.DataFrame, list[str], dict]:
    """The robustness tables of a study run in parts (each part's own protocols, written by its
    run) as one: their rows, `across_protocols` judged again over all of them, the protocols in the
    order the parts give them, and a provenance naming each part's table and record. A protocol in
    two parts is an error: which part's verdict to keep is not this function's choice."""
    from ..records.tables import read_provenance

    frames, parts, order = [], [], []
    for path in paths:
        frame = read_frame(path)
        for protocol in frame.get_column("protocol").unique(maintain_order=True):
            if protocol in order:
                raise ValueError(f"protocol {protocol!r} is in two parts (the second: {path})")
            order.append(protocol)
        frames.append(frame.select(list(ROW_SCHEMA)).cast(ROW_SCHEMA))
        record = read_provenance(path)
        parts.append({"table": str(path), **{k: record.get(k) for k in ("config_hash", "code_version", "git_commit",
                                                                        "created_utc", "device")}})
    if not frames:
        raise ValueError("no robustness tables to combine")
    provenance = Provenance({"parts": parts}).record(device=",".join(sorted({p["device"] or "?" for p in parts})))
    return with_agreement(pl.concat(frames)), order, provenance


def write_combined_robustness(paths, out_stem) -> None:
    """`combined_robustness` written as OUT_STEM.parquet and .md (the command shipping a study that
    ran in parts uses)."""
    from pathlib import Path
    from types import SimpleNamespace

    table, protocols, provenance = combined_robustness(paths)
    stem = Path(out_stem)
    parts = [f"- {p['table']}: config hash {p['config_hash']}, code {p['code_version']}, {p['created_utc']}"
             for p in provenance["config"]["parts"]]
    markdown = robustness_markdown(table, protocols, provenance) + "\nCombined from the parts:\n\n" + "\n".join(parts) + "\n"
    write_table(table, SimpleNamespace(parquet=stem.with_suffix(".parquet"), markdown=stem.with_suffix(".md")),
                provenance, markdown=markdown)


def _side(value, std) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if std is None else f"{value:.2f} ± {std:.2f}"


def robustness_markdown(table: pl.DataFrame, protocols: list[str], provenance: dict) -> str:
    """Per claim: one line per comparison and place beyond training, a column per protocol."""
    lines = ["# Finding 3 under each fine-tuning protocol", "",
             "Each comparison of finding 3 (the findings table's, one system per protocol) beside itself under "
             "every protocol, matched by the bin's place past the training lengths (1: the first bin beyond "
             "them, 2: the next). A cell: the verdict, then first vs second as mean ± std over seeds, the "
             f"difference with its 95% interval, the bin and the seeds. **{HOLDS}**: every protocol that judged "
             f"it gave the same verdict; **{DEPENDS}**: not; a protocol where it is `not learnt` (a side below "
             "the learnt threshold in distribution) did not judge it.", ""]
    for claim in table.get_column("claim").unique(maintain_order=True):
        part = table.filter(pl.col("claim") == claim)
        lines += [f"## {claim}", "", "| comparison | beyond | " + " | ".join(protocols) + " | across protocols |",
                  "|---|---|" + "---|" * len(protocols) + "---|"]
        for group in part.partition_by(["first", "second", "model", "beyond"], maintain_order=True):
            cells = {r["protocol"]: r for r in group.iter_rows(named=True)}
            first = group.row(0, named=True)
            texts = []
            for protocol in protocols:
                r = cells.get(protocol)
                texts.append("–" if r is None else (
                    f"**{r['verdict']}**: {_side(r['first_value'], r['first_std'])} vs "
                    f"{_side(r['second_value'], r['second_std'])}, difference {r['difference']:+.2f} "
                    f"{interval_text(r['difference_low'], r['difference_high'])} ({r['bin']}, "
                    f"{r['seeds']} seed{'' if r['seeds'] == 1 else 's'})"))
            lines.append(f"| {first['first']} {first['kind']} {first['second']} ({first['model']}) | {first['beyond']} | "
                         + " | ".join(texts) + f" | {first['across_protocols']} |")
        lines.append("")
    lines.append(f"config hash {provenance['config_hash']}, code {provenance['code_version']}, "
                 f"device {provenance['device']}")
    return "\n".join(lines) + "\n"


def write_finetune_robustness(findings_path, finetune_path, protocols: dict[str, dict], models,
                              provenance: Provenance, outputs) -> None:
    """The robustness table of finding 3 over the run's protocols (parquet, markdown, CSV)."""
    provenance = provenance.record()
    table = robustness_table(read_frame(findings_path), read_frame(finetune_path), protocols, models)
    write_table(table, outputs, provenance, markdown=robustness_markdown(table, list(protocols), provenance))
