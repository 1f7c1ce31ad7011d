"""The verdicts of the findings table: how a finding's comparisons (rows of a stage's pairs table,
each with its intervals and test) become `shown`, `contradicted`, `not distinguishable from noise`,
`not run`, and the finding's rows one frame. Which comparisons a finding makes, and the paper's
numbers beside them: `lengthgen.results.findings`.

A claim is the family: every comparison that can make its verdict (every system, arm, measure
and length; for a finding judged `per_system`, such as fine-tuning's protocols, every comparison
of one system) is judged together: with 3-40 comparisons a claim, one would cross 0.05 by chance
often and "any contradicted" would then say contradicted of a claim that holds. Gates are judged
first and take their comparisons out of the family: the learnt gate (a threshold, not a test), the
manipulation check (its own claim's Holm-adjusted p), and the ceiling of an equivalence claim. So:
- a comparison "first above second" (first is the side the paper expects higher) is `shown` when
  its Holm-adjusted p (over the claim) is below LEVEL with the expected sign, `contradicted` when
  below LEVEL with the other sign, and `not distinguishable from noise` otherwise;
- a comparison "the two agree" (an expressible mirror pair) is `shown` when the 95% interval of the
  difference lies inside ±margin (`VerdictRules.margin`, config `findings.margin`),
  `contradicted` when the family-wise interval (the 95% one widened by Bonferroni for the family's
  m intervals) lies wholly outside, and `not distinguishable from noise` otherwise;
- a claim (its family) is `contradicted` if any of its comparisons is, `shown` if all are,
  otherwise `not distinguishable from noise`;
- `not learnt` (findings 1 and 3): a side of the comparison (either: a failure to learn in
  distribution is not a failure to generalise in length) was below `VerdictRules.learnt` in
  distribution; left out of its family, counting neither way; `both fail`: an agreeing pair whose
  sides both fail, never shown; `at ceiling`: an equivalence claim (no change) whose two sides are
  both at or above CEILING, where nothing could have changed;
- a verdict from fewer than three training runs says so: `shown (one run)`, `... (2 runs)`;
  a noise row carries what deciding it would take (`runs_needed` per side at 80% power, the
  smallest p an exact permutation test reaches with the runs there are, `smallest_p`);
- every row also carries `pooled_verdict`, the old rules' (seeds' examples pooled, no gate), and
  its seed counts; the pairs tables treat the training run as the unit (docs/statistics.md);
- `not run`: the config turned the stage off (its table is not made), or its tasks hold nothing the
  claim compares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import polars as pl

from ..stats import (
    LEVEL,
    examples_for_power,
    holm,
    interval_error,
    per_run_errors,
    run_differences_comparison,
    runs_for_power,
    smallest_permutation_p,
    t_quantile,
    widen,
)
from ..tasks import LengthBin

SHOWN, CONTRADICTED, NOISE, NOT_RUN = "shown", "contradicted", "not distinguishable from noise", "not run"
# A comparison whose side(s) never learnt the task in distribution (neither for nor against a claim),
# and an agreement of two sides that both fail out of distribution (never shown).
NOT_LEARNT, FAIL_ALIKE = "not learnt", "both fail"
# An equivalence claim whose sides both sit at the top of the scale: no room to have changed.
AT_CEILING, CEILING = "at ceiling", 0.98
RUNS_FOR_A_PLAIN_VERDICT = 3  # fewer training runs than this, and the verdict says how many
# The verdicts of comparisons that count neither way in their claim (and carry no run count).
NOT_COUNTED = (NOT_RUN, NOT_LEARNT, AT_CEILING)


@dataclass(frozen=True)
class VerdictRules:
    """The two thresholds a reader may move (config `findings`): `margin`, how far apart an agreeing
    pair may be; `learnt`, the in-distribution accuracy a side needs before its out-of-distribution
    accuracy counts as generalisation (or its failure as a failure to generalise)."""

    margin: float = 0.1
    learnt: float = 0.95


DEFAULT_RULES = VerdictRules()


class Judged(Protocol):
    """What the verdicts read of a finding's record (`lengthgen.results.findings.Finding`)."""

    number: int
    section: str
    source: str
    claims: tuple[str, ...]
    per_system: bool


SCHEMA = {
    "finding": pl.Int64, "section": pl.String, "claim": pl.String, "system": pl.String, "measure": pl.String,
    "length": pl.String, "kind": pl.String, "first": pl.String, "first_value": pl.Float64,
    "first_low": pl.Float64, "first_high": pl.Float64, "second": pl.String, "second_value": pl.Float64,
    "second_low": pl.Float64, "second_high": pl.Float64, "difference": pl.Float64, "difference_low": pl.Float64,
    "difference_high": pl.Float64, "test": pl.String, "pairs": pl.Int64, "p": pl.Float64,
    "family": pl.String, "family_size": pl.Int64, "p_holm": pl.Float64, "family_low": pl.Float64,
    "family_high": pl.Float64, "paper_first": pl.Float64, "paper_second": pl.Float64, "paper_setting": pl.String,
    "seeds": pl.Int64, "seeds_first_above": pl.Int64, "seeds_second_above": pl.Int64,
    "first_in_distribution": pl.Float64, "second_in_distribution": pl.Float64, "first_drop": pl.Float64,
    "second_drop": pl.Float64, "spread": pl.Float64, "runs_needed": pl.Int64, "runs_needed_bound": pl.Boolean,
    "examples_needed": pl.Int64, "smallest_p": pl.Float64, "shown_from_margin": pl.Float64,
    "contradicted_below_margin": pl.Float64,
    "verdict": pl.String, "pooled_verdict": pl.String,
    "claim_verdict": pl.String, "source": pl.String, "note": pl.String,
}
ABOVE, AGREE = "above", "agree"  # the two kinds of comparison


def family_key(finding: Judged, row: dict) -> tuple:
    """What a comparison is judged with: every comparison of its claim (of its system too, for a
    finding judged `per_system`: each fine-tuned model and protocol an experiment of its own)."""
    return (row["claim"],) + ((row["system"],) if finding.per_system else ())


def base_verdict(verdict: str | None) -> str | None:
    """A verdict without its run count: "shown (one run)" -> "shown"."""
    return verdict.split(" (")[0] if verdict else verdict


def runs_label(verdict: str, runs) -> str:
    """The verdict with the number of training runs it rests on, where fewer than
    RUNS_FOR_A_PLAIN_VERDICT: `shown (one run)`; verdicts that count neither way stay as they are."""
    if verdict in NOT_COUNTED or missing(runs) or runs >= RUNS_FOR_A_PLAIN_VERDICT:
        return verdict
    return f"{verdict} ({'one run' if runs == 1 else f'{int(runs)} runs'})"


# -- a row's verdict ------------------------------------------------------------------------------
def missing(value) -> bool:
    """No value: None or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def above_verdict(row: dict) -> str:
    """First above second: the paired (or two-sample) test's Holm-adjusted p over the family decides
    (`p_holm`; the raw p for a family of one), the sign says which way."""
    p = row.get("p_holm", row.get("p"))
    if missing(p) or p >= LEVEL or missing(row.get("difference")) or row["difference"] == 0:
        return NOISE
    return SHOWN if row["difference"] > 0 else CONTRADICTED


def agree_verdict(row: dict, margin: float = DEFAULT_RULES.margin) -> str:
    """The two agree: the difference's 95% interval inside ±margin; contradicted only when the
    family-wise interval (`family_low`, `family_high`; the 95% one for a family of one) lies wholly
    outside it, so that one of twelve pairs straying by chance does not contradict the claim."""
    low, high = row.get("difference_low"), row.get("difference_high")
    if missing(low) or missing(high):
        return NOISE
    if -margin <= low and high <= margin:
        return SHOWN
    wide_low, wide_high = row.get("family_low", low), row.get("family_high", high)
    if wide_low > margin or wide_high < -margin:
        return CONTRADICTED
    return NOISE


FAILING = 0.5  # a side whose whole interval is below this does not do the task
BOTH_FAIL = f"both below {FAILING}: they agree by failing alike, not by generalising"


def both_fail(row: dict) -> bool:
    """An agreement that says nothing about generalisation: both sides' intervals below FAILING."""
    return all(not missing(row.get(f"{side}_high")) and row[f"{side}_high"] < FAILING for side in ("first", "second"))


def claim_verdict(verdicts: list[str]) -> str:
    """A claim over its comparisons: any contradicted, all shown, else noise; `not learnt` ones count
    neither way (not learnt when every one that ran is; not run when none ran)."""
    ran = [v for v in verdicts if v != NOT_RUN]
    if not ran:
        return NOT_RUN
    counted = [v for v in ran if v not in (NOT_LEARNT, AT_CEILING)]
    if not counted:
        return AT_CEILING if AT_CEILING in ran else NOT_LEARNT
    ran = counted
    if CONTRADICTED in ran:
        return CONTRADICTED
    return SHOWN if all(v == SHOWN for v in ran) else NOISE


# -- rows -----------------------------------------------------------------------------------------
def comparison_row(finding: Judged, claim: str, kind: str, pair: dict, *, system: str, measure: str, length: str,
                   paper: tuple = (None, None, None)) -> dict:
    """One comparison of a pairs-table row, with its verdict."""
    row = {name: pair.get(name) for name in SCHEMA if name in pair}
    row.update(finding=finding.number, section=finding.section, claim=claim, system=system, measure=measure,
               length=length, kind=kind, source=finding.source, note="", paper_first=paper[0],
               paper_second=paper[1], paper_setting=paper[2])
    for name in ("pooled_p", "pooled_low", "pooled_high"):
        row[name] = pair.get(name)
    row["_runs_measured"] = not missing(pair.get("seeds"))
    if missing(row.get("seeds")):  # a table of one trained model (in context, mechanism): one run
        difference = row.get("difference")
        row.update(seeds=1, seeds_first_above=int(not missing(difference) and difference > 0),
                   seeds_second_above=int(not missing(difference) and difference < 0))
    if kind == AGREE and both_fail(pair):
        row["note"] = BOTH_FAIL
    return row


def _not_run(finding: Judged, claim: str, note: str) -> dict:
    return {"finding": finding.number, "section": finding.section, "claim": claim, "system": "", "measure": "",
            "length": "", "kind": "", "verdict": NOT_RUN, "source": finding.source, "note": note}


def _family_label(finding: Judged, key: tuple) -> str:
    """A family's name: finding.claim (the claim's place in the finding's claims), system, measure[, length]."""
    claim, *rest = key
    return f"{finding.number}.{finding.claims.index(claim) + 1}" + "".join(f" {part}" for part in rest)


def judge_families(finding: Judged, rows: list[dict], margin: float = DEFAULT_RULES.margin,
                   gated: bool = True) -> list[dict]:
    """Each row's verdict, judged with the rest of its family (claim, system, measure): Holm over
    the family's p for "above" rows, the Bonferroni-widened interval for "agree" rows' contradiction.
    The family's size counts its comparisons with a test (a p, or an interval). `gated`: a row marked
    not learnt (`learnt` False) is `not learnt` and left out of its family, and two sides that both
    fail never agree (`both fail`); ungated, the pooled rules of old (every row judged)."""
    families: dict[tuple, list[dict]] = {}
    for row in rows:
        gate = (NOT_LEARNT if row.get("learnt") is False else AT_CEILING if at_ceiling(row) else None) if gated \
            else None
        if gate is None:
            families.setdefault(family_key(finding, row), []).append(row)
            continue
        row.update(verdict=gate, family=_family_label(finding, family_key(finding, row)), family_size=0)
        if gate == AT_CEILING:
            row["note"] = f"both sides at or above {CEILING}: an equivalence at the ceiling, where neither could have risen"
    for key, members in families.items():
        label = _family_label(finding, key)
        above = [r for r in members if r["kind"] == ABOVE]
        adjusted = holm([math.nan if missing(r.get("p")) else r["p"] for r in above])
        for row, p_holm in zip(above, adjusted):
            row["p_holm"] = None if math.isnan(p_holm) else float(p_holm)
        agree = [r for r in members if r["kind"] == AGREE]
        tested = [r for r in agree if not any(missing(r.get(k)) for k in ("difference", "difference_low",
                                                                          "difference_high"))]
        for row in tested:
            row["family_low"], row["family_high"] = widen(row["difference"], row["difference_low"],
                                                          row["difference_high"], len(tested))
            row["shown_from_margin"] = max(abs(row["difference_low"]), abs(row["difference_high"]))
            furthest = max(row["family_low"], -row["family_high"])
            row["contradicted_below_margin"] = furthest if furthest > 0 else None
        sizes = {ABOVE: sum(not missing(r["p_holm"]) for r in above), AGREE: len(tested)}
        for row in members:
            row.update(family=label, family_size=sizes[row["kind"]],
                       verdict=above_verdict(row) if row["kind"] == ABOVE else agree_verdict(row, margin))
            if gated and row["verdict"] == SHOWN and row["note"] == BOTH_FAIL:
                row["verdict"] = FAIL_ALIKE
            if gated and row["verdict"] == NOISE:  # the pooled view's rows are only read for their verdict
                row.update(power_to_decide(row, row["family_size"], margin))
    return rows


def at_ceiling(row: dict) -> bool:
    """An equivalence claim (`equivalence`: no change) whose two sides are both at or above CEILING."""
    return bool(row.get("equivalence")) and all(
        not missing(row.get(f"{side}_value")) and row[f"{side}_value"] >= CEILING for side in ("first", "second"))


def _design(row: dict) -> str:
    """How a comparison's runs are laid out, from its test: `paired` (runs each giving both sides;
    one arm against 0 alike), `arms` (two arms of independent models), `ranks` (capped values),
    `one run` (a training-run table with one run), `examples` (one model's examples)."""
    test = row.get("test") or ""
    if "rank permutation" in test:
        return "ranks"
    if test.startswith("Welch") or test.startswith("z, one pretraining seed each"):
        return "arms"
    if test.startswith("t over") or test.startswith("z, one pretraining seed"):
        return "paired"
    return "one run" if row.get("_runs_measured") else "examples"


def _spread(row: dict, design: str) -> float | None:
    """The between-run standard deviation a power calculation needs: the table's `spread`, else
    what the interval implies (shipped tables made before it was stored)."""
    if not missing(row.get("spread")):
        return row["spread"]
    low, high, runs = row.get("difference_low"), row.get("difference_high"), row.get("seeds")
    if missing(low) or missing(high) or missing(runs) or runs < 2 or design != "paired":
        return None
    return (high - low) / (2 * t_quantile(0.975, runs - 1)) * math.sqrt(runs)


def distance_to_decide(row: dict, family_size: int, margin: float) -> tuple[float | None, float]:
    """(the effect a test must resolve, its level) for a noise row. "Above": the difference, at
    Holm's first step over the claim (LEVEL / m). "Agree": the distance from the difference to the
    margin: inside it, the 95% interval must fit between the difference and the margin (LEVEL); outside
    it, the family-wise interval must clear the margin (LEVEL / m)."""
    difference, alpha = row.get("difference"), LEVEL / max(1, family_size or 1)
    if row.get("kind") != AGREE or missing(difference):
        return difference, alpha
    inside = abs(difference) < margin
    return abs(margin - abs(difference)), LEVEL if inside else alpha


def power_to_decide(row: dict, family_size: int, margin: float = DEFAULT_RULES.margin) -> dict:
    """What deciding a noise row would take (`distance_to_decide`): the runs per side for 80% power
    from the measured difference and between-run spread (`runs_needed`; `runs_needed_bound` where
    that is a lower bound: one run, whose own sampling error stands in for the spread it did not
    measure, or ranks, where it is the fewest runs whose best split could reach the level), the
    smallest p an exact permutation test reaches with the runs there are (`smallest_p`), and for one
    model's examples the examples needed instead."""
    difference, alpha = distance_to_decide(row, family_size, margin)
    design, runs = _design(row), row.get("seeds") or 1
    if design == "examples":
        return {"examples_needed": examples_for_power(row.get("pairs") or row.get("first_examples"), row.get("p"),
                                                      alpha)}
    if design == "ranks":
        needed = next((n for n in range(2, 100) if smallest_permutation_p(n, n) < alpha), None)
        return {"runs_needed": needed, "runs_needed_bound": True, "smallest_p": smallest_permutation_p(runs, runs)}
    if design == "one run":
        own = interval_error(row["difference_low"], row["difference_high"]) if not missing(
            row.get("difference_low")) else None
        return {"runs_needed": runs_for_power(difference, own, two_arms=False, alpha=alpha),
                "runs_needed_bound": True, "smallest_p": 1.0}
    spread = _spread(row, design)
    if design == "arms":
        sizes = [len(row[k]) for k in ("first_per_seed", "second_per_seed") if row.get(k) is not None]
        smallest = smallest_permutation_p(*sizes) if len(sizes) == 2 else smallest_permutation_p(runs, runs)
        if spread is None:  # one model an arm: each model's own error as the spread, a lower bound
            own = interval_error(row["difference_low"], row["difference_high"]) / math.sqrt(2)
            return {"runs_needed": runs_for_power(difference, own, two_arms=True, alpha=alpha),
                    "runs_needed_bound": True, "smallest_p": smallest}
        return {"runs_needed": runs_for_power(difference, spread, two_arms=True, alpha=alpha),
                "runs_needed_bound": False, "smallest_p": smallest, "spread": spread}
    return {"runs_needed": runs_for_power(difference, spread, two_arms=False, alpha=alpha),
            "runs_needed_bound": False, "smallest_p": smallest_permutation_p(runs), "spread": spread}


def _pooled_view(row: dict) -> dict:
    """The row as the pooled rules saw it: every seed's examples as one sample, no learnt gate."""
    pooled = {**row, "learnt": None}
    if not missing(row.get("pooled_p")):
        pooled.update(p=row["pooled_p"], difference_low=row["pooled_low"], difference_high=row["pooled_high"])
    return pooled


def finding_frame(finding: Judged, rows: list[dict], why_not: str, rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """The finding's rows, each judged within its family, with each claim's verdict per family
    (`family_key`), and the verdict the pooled rules gave (`pooled_verdict`); a `not run` row for
    every claim without a comparison."""
    pooled = judge_families(finding, [_pooled_view(r) for r in rows], rules.margin, gated=False)
    rows = judge_families(finding, rows, rules.margin)
    for row, old in zip(rows, pooled):
        row["pooled_verdict"] = old["verdict"]
    for claim in finding.claims:
        if not any(r["claim"] == claim for r in rows):
            rows.append(_not_run(finding, claim, why_not))
    frame = pl.DataFrame([{name: r.get(name) for name in SCHEMA} for r in rows], schema=SCHEMA)
    keys = [family_key(finding, row) for row in frame.iter_rows(named=True)]
    verdicts: dict[tuple, list[str]] = {}
    runs: dict[tuple, list[int]] = {}
    for key, verdict, seeds in zip(keys, frame["verdict"], frame["seeds"]):
        verdicts.setdefault(key, []).append(verdict)
        if verdict not in NOT_COUNTED and seeds is not None:
            runs.setdefault(key, []).append(seeds)
    claims = {key: runs_label(claim_verdict(found), min(runs[key]) if key in runs else None)
              for key, found in verdicts.items()}
    labelled = [runs_label(verdict, seeds) for verdict, seeds in zip(frame["verdict"], frame["seeds"])]
    order = {claim: k for k, claim in enumerate(finding.claims)}
    frame = frame.with_columns(pl.Series("verdict", labelled, pl.String))
    return (frame.with_columns(pl.Series("claim_verdict", [claims[key] for key in keys], pl.String),
                               pl.col("claim").replace_strict(order, return_dtype=pl.Int64).alias("_claim"))
            .with_row_index("_row").sort("_claim", "_row").drop("_claim", "_row"))


STAGE_OFF = "the config turned the stage off"
NO_PAIRS = "the stage compared nothing: the config's tasks hold no pair"


def nothing_to_compare(finding: Judged, pairs: pl.DataFrame | None) -> pl.DataFrame | None:
    """The finding's `not run` rows when its stage was off (no table) or its table is empty (a
    stage's pairs table has no rows, nor always columns, when the tasks hold no pair); None when
    there are rows to read."""
    if pairs is None:
        return finding_frame(finding, [], STAGE_OFF)
    if pairs.is_empty() or "measure" not in pairs.columns:
        return finding_frame(finding, [], NO_PAIRS)
    return None


# -- length bins, and the learnt gate -----------------------------------------------------------
_BIN_HIGH = pl.col("bin").map_elements(lambda b: LengthBin.parse(b).high, return_dtype=pl.Int64)


def longest_bin(pairs: pl.DataFrame) -> pl.DataFrame:
    """The rows of each (system, family)'s longest bin (a bin "51-100" counts by its upper end)."""
    return (pairs.with_columns(_BIN_HIGH.alias("_high"))
            .filter(pl.col("_high") == pl.col("_high").max().over("system", "family")).drop("_high"))


def out_of_distribution_bins(pairs: pl.DataFrame) -> pl.DataFrame:
    """The rows of every bin beyond the training lengths (the pairs table's `beyond_training`; a table
    without it: every bin but each (system, family)'s shortest, where the stages put the training
    lengths)."""
    if "beyond_training" in pairs.columns and pairs["beyond_training"].null_count() == 0:
        return pairs.filter(pl.col("beyond_training"))
    return (pairs.with_columns(_BIN_HIGH.alias("_high"))
            .filter(pl.col("_high") > pl.col("_high").min().over("system", "family")).drop("_high"))


def in_distribution_bins(pairs: pl.DataFrame) -> pl.DataFrame:
    """The rows of the bins within the training lengths (`beyond_training` false; a table without it:
    each (system, family)'s shortest bin)."""
    if "beyond_training" in pairs.columns and pairs["beyond_training"].null_count() == 0:
        return pairs.filter(~pl.col("beyond_training"))
    return (pairs.with_columns(_BIN_HIGH.alias("_high"))
            .filter(pl.col("_high") == pl.col("_high").min().over("system", "family")).drop("_high"))


def learnt_gate(row: dict, trained: dict | None, learnt: float) -> None:
    """Each side's in-distribution accuracy and its drop out of distribution, and whether the
    comparison counts (`learnt`): both sides reached `learnt` in distribution (a side that never
    learnt the task says nothing of length generalisation, either way). Without an in-distribution
    row nothing is gated."""
    if trained is None or trained["bin"] == row["length"]:
        return
    for side in ("first", "second"):
        row[f"{side}_in_distribution"] = trained[f"{side}_value"]
        row[f"{side}_drop"] = trained[f"{side}_value"] - row[f"{side}_value"]
    short = [f"{row[side]} {trained[f'{side}_value']:.2f}" for side in ("first", "second")
             if trained[f"{side}_value"] < learnt]
    row["learnt"] = not short
    if short:
        row["note"] = f"not learnt in distribution ({', '.join(short)} < {learnt})"


DROP = "drop from its in-distribution accuracy"


def drop_comparison(pair: dict, trained: dict) -> dict | None:
    """For an "above" pair whose sides were both learnt: each run's drop from its own in-distribution
    accuracy, the second side's (expected larger) against the first's, over the runs both rows hold
    (None without per-run values). Its sides are named "<task> drop", the second task's first, so
    that "first above" is the claim's direction."""
    per_run = [pair.get(k) for k in ("first_per_seed", "second_per_seed")] + \
        [trained.get(k) for k in ("first_per_seed", "second_per_seed")]
    if any(values is None or len(values) != len(per_run[0]) for values in per_run) or not per_run[0]:
        return None

    def errors(row, side):
        return per_run_errors(row[f"{side}_per_seed"], row.get(f"{side}_examples") or row.get("pairs"))

    drops = {side: [a - b for a, b in zip(trained[f"{side}_per_seed"], pair[f"{side}_per_seed"])]
             for side in ("first", "second")}
    spread = {side: [math.hypot(a, b) for a, b in zip(errors(trained, side), errors(pair, side))]
              for side in ("first", "second")}
    result = run_differences_comparison(drops["second"], drops["first"], spread["second"], spread["first"],
                                        f"{pair['second']} drops more", f"{pair['first']} drops more")
    return {**result.row(), "first": f"{pair['second']} drop", "second": f"{pair['first']} drop"}

