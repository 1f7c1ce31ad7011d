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
    AT_CEILING,
    CONTRADICTED,
    DEFAULT_RULES,
    FAIL_ALIKE,
    FAILING,
    NOISE,
    NOT_COUNTED,
    NOT_LEARNT,
    NOT_RUN,
    SHOWN,
    VerdictRules,
    base_verdict,
    family_key,
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
    return text if row["seeds"] > 1 else text + " (one run: between-run variation not measured)"


def _power(row: dict) -> str:
    """What deciding a noise row would take: runs per side (or examples) at 80% power, and the
    smallest p an exact permutation test reaches with the runs there are."""
    if base_verdict(row["verdict"]) != NOISE:
        return ""
    parts = []
    if not missing(row.get("runs_needed")):
        bound = "at least " if row.get("runs_needed_bound") else ""
        parts.append(f"{bound}{row['runs_needed']} runs a side for 80% power at {LEVEL}/{max(1, row['family_size'])}")
    elif not missing(row.get("examples_needed")):
        parts.append(f"{row['examples_needed']} examples for 80% power at {LEVEL}/{max(1, row['family_size'])}")
    elif row.get("runs_needed_bound") is not None or not missing(row.get("smallest_p")):
        parts.append("no difference or spread to size runs by")
    if not missing(row.get("smallest_p")):
        parts.append(f"smallest exact permutation p with these runs {row['smallest_p']:.2g}")
    return "; ".join(parts)


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
    """One line per finding and family (a claim; for a finding judged `per_system`, a claim and
    system): its verdict, its size (the m Holm corrects over), how its comparisons went, and the
    training runs they rest on."""
    rows, named = [], set()
    keyed = frame.with_columns(pl.Series("_family", [
        "/".join(family_key(FINDINGS[r["finding"]], r)) for r in frame.iter_rows(named=True)], pl.String))
    for (finding, _), group in keyed.group_by(["finding", "_family"], maintain_order=True):
        verdicts = [base_verdict(v) for v in group["verdict"]]
        counts = [f"{n} {v}" for v in (SHOWN, CONTRADICTED, NOISE, FAIL_ALIKE, AT_CEILING, NOT_LEARNT)
                  if (n := verdicts.count(v))]
        counted = group.filter(~pl.col("verdict").is_in(list(NOT_COUNTED)))
        sizes = counted["family_size"].drop_nulls()
        runs = counted["seeds"].drop_nulls()
        name = "" if finding in named else _finding_name(finding)  # each finding named on its first line
        named.add(finding)
        systems = ", ".join(dict.fromkeys(s for s in group["system"] if s))
        rows.append({"finding": name, "claim": group["claim"][0], "systems": systems,
                     "verdict": f"**{group['claim_verdict'][0]}**",
                     "comparisons": ", ".join(counts) + (f" (Holm over {sizes.max()})" if sizes.len() and sizes.max() > 1
                                                         else "") if counts else group["note"][0],
                     "runs": "" if not runs.len() else str(runs.min()) if runs.min() == runs.max()
                     else f"{runs.min()}-{runs.max()}"})
    return pl.DataFrame(rows)


def findings_markdown(frame: pl.DataFrame, provenance: dict | None = None, rules: VerdictRules = DEFAULT_RULES) -> str:
    """The findings at a glance, then every comparison with its numbers, test and the paper's."""
    margin = rules.margin
    ran = frame.filter(pl.col("verdict") != NOT_RUN)
    details = pl.DataFrame([{
        "finding": r["finding"], "system": r["system"], "measure": r["measure"], "length": r["length"],
        "comparison": r["kind"], "first": _side(r, "first"), "second": _side(r, "second"),
        "test": _test(r, margin), "seeds": _seeds(r), "paper": _paper(r),
        "verdict": r["verdict"] + (f" ({r['note']})" if r["note"] else ""), "to decide": _power(r),
        "pooled rules": r["pooled_verdict"]}
        for r in ran.iter_rows(named=True)])
    parts = ["# Did the paper's findings reproduce here?", "",
             "One line per claim (fine-tuning: per claim and fine-tuned model/protocol, each an experiment of its "
             "own): its family, every comparison that can make its verdict (systems, arms, measures, lengths), "
             "corrected for their number (below). A claim is **shown** when every "
             "comparison it makes is shown, **contradicted** when any goes significantly the other way after the "
             "correction, otherwise **not distinguishable "
             "from noise**; **not run** where the config turned the stage off or has no tasks to compare. A "
             "verdict resting on fewer than three training runs says how many (`shown (one run)`); `runs`: the "
             "training runs per side of the comparisons that count.", "",
             to_markdown(glance(frame)), "## The comparisons", "",
             f"comparison \"above\": first is the side the paper expects higher; shown when the test's "
             f"Holm-adjusted p over its family (every comparison of the claim; fine-tuning: of the claim and "
             f"system) is below "
             f"{LEVEL} with that sign, contradicted when below {LEVEL} with the other (\"Holm p ... of m\"; one "
             f"of 12 at p = 0.03 is Holm p = 0.36, noise). \"agree\": an expressible mirror pair "
             f"(right/forward task first); shown when the 95% interval of the difference lies inside "
             f"±{margin}, contradicted when the family-wise interval (each 95% half-width times "
             f"z(1 - {LEVEL}/2m) / z(1 - {LEVEL}/2), Bonferroni over the family's m pairs) lies wholly outside "
             f"(two sides both below {FAILING} are `{FAIL_ALIKE}`, never shown: agreement then is not "
             f"generalisation). **{NOT_LEARNT}**: a side was below {rules.learnt} in distribution (a failure to "
             "learn, not to generalise; finding 7: the manipulation check, judged first with Holm over its arms, "
             "did not show the corpus took), so such a comparison counts neither way and is left out of its "
             f"family; where both sides were learnt, \"above\" also compares each side's drop from its own "
             f"in-distribution accuracy, run by run. **{AT_CEILING}**: a claim of no change whose two sides are "
             "both at 0.98 or above, where nothing could have moved. `to decide` (noise rows): the runs per side "
             "that would find the measured difference at 80% power given the measured between-run spread, at "
             "Holm's first-step level 0.05/m (\"at least\" where one run stands in its own sampling error for "
             "the spread), and the smallest p an exact permutation test reaches with the runs there are (2 v 2: "
             "0.33); steps to reach a threshold are tested on ranks, a run that never reached it ranked last. "
             "The training run (seed) is the unit: "
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
