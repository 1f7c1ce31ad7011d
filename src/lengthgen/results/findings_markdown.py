"""The findings table as markdown: the findings at a glance (one line per claim's family, with its
verdict), then every comparison with its numbers, its test and the paper's numbers. `lengthgen
findings` prints it, and `write_findings` writes the `findings` rule's files (the table with its
provenance, this markdown and the CSV twin). The verdicts are computed in
`lengthgen.results.findings` (by the rules of `lengthgen.results.verdicts`); this module only renders and
writes them."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import to_markdown, write_table
from ..stats import LEVEL, PERMUTATIONS, interval_text, p_text
from .findings import FINDINGS, ModelPaths, findings_table
from .verdicts import (
    AGREE,
    CONTRADICTED,
    DEFAULT_RULES,
    FAIL_ALIKE,
    FAILING,
    NOISE,
    NOT_LEARNT,
    NOT_RUN,
    SHOWN,
    VerdictRules,
    missing,
)


def _side(row: dict, side: str) -> str:
    text = f"{row[side]}: {row[f'{side}_value']:.2f} {interval_text(row[f'{side}_low'], row[f'{side}_high'])}".strip()
    if not missing(row.get(f"{side}_in_distribution")):
        text += f" (in distribution {row[f'{side}_in_distribution']:.2f}, drop {row[f'{side}_drop']:+.2f})"
    return text


def _seeds(row: dict) -> str:
    """How the training runs lean: "3 of 3 seeds first above"; one run says so."""
    if missing(row.get("seeds")):
        return ""
    text = f"{row['seeds_first_above']} of {row['seeds']} seeds {row['first']} above"
    if row["seeds_second_above"]:
        text += f", {row['seeds_second_above']} {row['second']} above"
    return text if row["seeds"] > 1 else text + " (one seed: between-seed variation not measured)"


def _test(row: dict, margin: float) -> str:
    """The difference, and what decided the verdict: the Holm p over the family ("above"), or the
    interval against the margin with its family-wise widening and the margins at which the verdict
    flips ("agree")."""
    if row["kind"] == AGREE:
        text = (f"difference {row['difference']:+.2f} {interval_text(row['difference_low'], row['difference_high'])}"
                f" against ±{margin}")
        if (row["family_size"] or 0) > 1 and not missing(row.get("family_low")):
            text += (f"; family-wise {interval_text(row['family_low'], row['family_high'])} "
                     f"({row['family_size']} pairs)")
        if not missing(row.get("shown_from_margin")):
            text += f"; shown from margin {row['shown_from_margin']:.2f}"
            contradicted = row.get("contradicted_below_margin")
            text += (f", contradicted below {contradicted:.2f}" if not missing(contradicted)
                     else ", contradicted at no margin")
        return text
    text = f"difference {row['difference']:+.2f}"
    if not missing(row.get("difference_low")):
        text += f" {interval_text(row['difference_low'], row['difference_high'])}"
    permutations = PERMUTATIONS if row["test"] == "paired permutation" else None
    text += f"; {row['test']}, {p_text(row['p'], permutations)}"
    if (row["family_size"] or 0) > 1:
        text += f", Holm {p_text(row['p_holm'], permutations)} of {row['family_size']}"
    return text + (f", {row['pairs']} pairs" if row["pairs"] else "")


def _paper(row: dict) -> str:
    values = [f"{row[k]:.2f}" if not missing(row[k]) else "–" for k in ("paper_first", "paper_second")]
    return "" if row["paper_setting"] is None else f"{values[0]} vs {values[1]} ({row['paper_setting']})"


def _finding_name(number: int) -> str:
    finding = FINDINGS[number]
    return f"{number}. {finding.name} ({finding.section})"


def glance(frame: pl.DataFrame) -> pl.DataFrame:
    """One line per finding and family (claim, system, measure, and length for a finding judged
    `by_length`): its verdict and how its comparisons went."""
    rows, named = [], set()
    judged_by_length = [number for number, finding in FINDINGS.items() if finding.by_length]
    by_length = pl.when(pl.col("finding").is_in(judged_by_length)).then(pl.col("length")).otherwise(pl.lit(""))
    for (finding, claim, system, measure, length), group in (
            frame.with_columns(by_length.alias("_length"))
            .group_by(["finding", "claim", "system", "measure", "_length"], maintain_order=True)):
        counts = [f"{n} {v}" for v in (SHOWN, CONTRADICTED, NOISE, FAIL_ALIKE, NOT_LEARNT)
                  if (n := (group["verdict"] == v).sum())]
        if (group["verdict"] != NOT_RUN).any() and (group["seeds"].fill_null(1) <= 1).all():
            counts.append("judged on one seed")
        name = "" if finding in named else _finding_name(finding)  # each finding named on its first line
        named.add(finding)
        rows.append({"finding": name, "claim": claim, "system": system, "measure": measure, "length": length or "",
                     "verdict": f"**{group['claim_verdict'][0]}**",
                     "comparisons": ", ".join(counts) if counts else group["note"][0]})
    return pl.DataFrame(rows)


def findings_markdown(frame: pl.DataFrame, provenance: dict | None = None, rules: VerdictRules = DEFAULT_RULES) -> str:
    """The findings at a glance, then every comparison with its numbers, test and the paper's."""
    margin = rules.margin
    ran = frame.filter(pl.col("verdict") != NOT_RUN)
    details = pl.DataFrame([{
        "finding": r["finding"], "system": r["system"], "measure": r["measure"], "length": r["length"],
        "comparison": r["kind"], "first": _side(r, "first"), "second": _side(r, "second"),
        "test": _test(r, margin), "seeds": _seeds(r), "paper": _paper(r),
        "verdict": r["verdict"] + (f" ({r['note']})" if r["note"] else ""),
        "pooled rules": r["pooled_verdict"]}
        for r in ran.iter_rows(named=True)])
    parts = ["# Did the paper's findings reproduce here?", "",
             "One line per finding, claim, system and measure (fine-tuning: and out-of-distribution bin): a "
             "family of comparisons, corrected for their number (below). A claim is **shown** when every "
             "comparison it makes is shown, **contradicted** when any goes significantly the other way after the "
             "correction, otherwise **not distinguishable "
             "from noise**; **not run** where the config turned the stage off or has no tasks to compare.", "",
             to_markdown(glance(frame)), "## The comparisons", "",
             f"comparison \"above\": first is the side the paper expects higher; shown when the test's "
             f"Holm-adjusted p over its family (the claim's comparisons for that system and measure, and bin for "
             f"fine-tuning) is below "
             f"{LEVEL} with that sign, contradicted when below {LEVEL} with the other (\"Holm p ... of m\"; one "
             f"of 12 at p = 0.03 is Holm p = 0.36, noise). \"agree\": an expressible mirror pair "
             f"(right/forward task first); shown when the 95% interval of the difference lies inside "
             f"±{margin}, contradicted when the family-wise interval (each 95% half-width times "
             f"z(1 - {LEVEL}/2m) / z(1 - {LEVEL}/2), Bonferroni over the family's m pairs) lies wholly outside "
             f"(two sides both below {FAILING} are `{FAIL_ALIKE}`, never shown: agreement then is not "
             f"generalisation). **{NOT_LEARNT}**: the side the theory says generalises (a mirror pair: both) was "
             f"below {rules.learnt} in distribution, so its length generalisation is not what was measured; such a "
             "comparison counts neither way and is left out of its family. The training run (seed) is the unit: "
             "with several seeds, t intervals and tests over the seeds' values (see docs/statistics.md); "
             "`pooled rules` is the verdict the old rules (every seed's examples pooled, no learnt gate) gave. A "
             "permutation p at its floor, 1/(permutations + 1), reads p < 1e-4. Values with their 95% "
             "intervals; the paper's numbers where it reports them, with the setting they are from.", "",
             to_markdown(details) if details.height else "(no stage ran)\n"]
    if provenance:
        parts += [f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(parts)


def write_findings(paths: dict[str, str], model_paths: ModelPaths, provenance: Provenance, rules: dict | None,
                   outputs) -> None:
    """paths: pairs-table name -> parquet, for the stages this config runs; model_paths: registry
    name -> hub path, for the paper's numbers; rules: config `findings` (margin, learnt)."""
    provenance = provenance.record()
    rules = VerdictRules(**(rules or {}))
    frame = findings_table({name: read_frame(path) for name, path in paths.items()}, model_paths, rules)
    write_table(frame, outputs, provenance, markdown=findings_markdown(frame, provenance, rules))
