"""Did the paper's findings reproduce here? One table that answers it from the run's own pairs tables.

Each finding of the paper (SPEC's numbered list) is a few claims, and each claim a few comparisons
of two numbers on the same (or the same kind of) examples, read from a stage's pairs table with its
intervals and test. One function per finding picks its rows and computes every verdict.
A claim's comparisons for one system and measure form a family, judged together: with 3-12
comparisons a claim, one would cross 0.05 by chance often and "any contradicted" would then say
contradicted of a claim that holds. So:
- a comparison "first above second" (first is the side the paper expects higher) is `shown` when
  its Holm-adjusted p (over the family) is below LEVEL with the expected sign, `contradicted` when
  below LEVEL with the other sign, and `not distinguishable from noise` otherwise;
- a comparison "the two agree" (an expressible mirror pair) is `shown` when the 95% interval of the
  difference lies inside ±margin (`VerdictRules.margin`, config `findings.margin`),
  `contradicted` when the family-wise interval (the 95% one widened by Bonferroni for the family's
  m intervals) lies wholly outside, and `not distinguishable from noise` otherwise;
- a claim, per system and measure (its family; for fine-tuning, per system, measure and
  out-of-distribution bin: its record's `by_length`), is `contradicted` if any of its comparisons
  is, `shown` if all are, otherwise `not distinguishable from noise`;
- `not learnt` (findings 1 and 3): the side the theory says generalises (a mirror pair: both) was
  below `VerdictRules.learnt` in distribution; left out of its family, counting neither way;
  `both fail`: an agreeing pair whose sides both fail, never shown;
- every row also carries `pooled_verdict`, the old rules' (seeds' examples pooled, no gate), and
  its seed counts; the pairs tables treat the training run as the unit (docs/statistics.md);
- `not run`: the config turned the stage off (its table is not made), or its tasks hold nothing the
  claim compares.
Beside each comparison, the paper's own numbers where it reports them, with the setting they are from.

Each finding is one record (`Finding`) in one registry (`FINDINGS`): its number, the paper's section,
what the paper finds, the pairs table it reads, its claims and the function that judges it. The
table iterates the records, and the workflow reads the tables they name (`findings_sources`), so a
new finding is one record plus its function. The markdown, and the files the `findings` rule
writes: `lengthgen.results.findings_markdown`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from ..corpora.pairs import CONTROL, GAP, HEAD_START, IN_CONTEXT
from ..references import (
    IN_CONTEXT_SETTING,
    LOREM,
    finetune_reference,
    in_context_reference,
    lorem_reference,
    scratch_reference,
)
from ..stats import LEVEL, holm, widen
from ..tasks import LengthBin, get_task

SHOWN, CONTRADICTED, NOISE, NOT_RUN = "shown", "contradicted", "not distinguishable from noise", "not run"
# A comparison whose side(s) never learnt the task in distribution (neither for nor against a claim),
# and an agreement of two sides that both fail out of distribution (never shown).
NOT_LEARNT, FAIL_ALIKE = "not learnt", "both fail"


@dataclass(frozen=True)
class VerdictRules:
    """The two thresholds a reader may move (config `findings`): `margin`, how far apart an agreeing
    pair may be; `learnt`, the in-distribution accuracy a side needs before its out-of-distribution
    accuracy counts as generalisation (or its failure as a failure to generalise)."""

    margin: float = 0.1
    learnt: float = 0.95


DEFAULT_RULES = VerdictRules()
# Registry name -> hub path of each model, for the paper's numbers per hub model (None: unknown).
ModelPaths = Mapping[str, str] | None


@dataclass(frozen=True)
class Finding:
    """One finding of the paper: everything the table, the workflow and the markdown know of it.

    judge(pairs, model_paths, rules) -> the finding's rows: `pairs` is its source table (None when
    the config turned the stage off), `model_paths` the models' hub paths (`ModelPaths`), `rules` the
    margin and learnt threshold (`VerdictRules`)."""

    number: int  # its place in SPEC's list and in the table
    section: str  # the paper's section
    name: str  # what the paper finds
    source: str  # the pairs table it reads, one the workflow makes (TABLE_RULES in lengthgen.plan.tables)
    claims: tuple[str, ...]  # its claims, in the table's order
    judge: Callable[[pl.DataFrame | None, ModelPaths, VerdictRules], pl.DataFrame]
    by_length: bool = False  # judged per length as well as per system and measure


# Each finding's claims (its record lists them, in order).
SCRATCH_ABOVE = "expressible tasks above the inexpressible ones of their family on the longest bin"
SCRATCH_AGREE = "expressible mirror pairs agree on the longest bin (within the margin)"
FORWARD = "forward copy above backward copy"
RIGHT = "right-hand retrieval above its left mirror"
FINETUNE_AGREE = "expressible mirror pairs agree out of distribution (within the margin)"
FINETUNE_ABOVE = "inexpressible tasks stay below the expressible ones of their family out of distribution"
AMBIGUITY = "copying after unambiguous tokens above copying after ambiguous ones"
GIT = "revert above cherry-pick"
HEADS = "best induction head above best anti-induction head"
PATCHING = ("removing induction edges costs forward copies more than removing anti-induction edges costs "
            "backward copies")
CORPUS_GAP = "the balanced corpus narrows the induction/anti-induction gap"
CORPUS_IN_CONTEXT = "backward copy in context rises on the balanced corpus"
CORPUS_CONTROL = "the reversed corpus keeps the natural induction preference"
CORPUS_HEAD_START = "fine-tuning from the balanced corpus starts the backward tasks ahead"

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
    "second_drop": pl.Float64, "shown_from_margin": pl.Float64, "contradicted_below_margin": pl.Float64,
    "verdict": pl.String, "pooled_verdict": pl.String,
    "claim_verdict": pl.String, "source": pl.String, "note": pl.String,
}
ABOVE, AGREE = "above", "agree"  # the two kinds of comparison


def family_key(finding: int, row: dict) -> tuple:
    """What a comparison is judged with: the same claim, system and measure (and length, for a
    finding judged `by_length`)."""
    return (row["claim"], row["system"], row["measure"]) + ((row["length"],) if FINDINGS[finding].by_length else ())


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
    ran = [v for v in ran if v != NOT_LEARNT]
    if not ran:
        return NOT_LEARNT
    if CONTRADICTED in ran:
        return CONTRADICTED
    return SHOWN if all(v == SHOWN for v in ran) else NOISE


# -- rows -----------------------------------------------------------------------------------------
def _comparison(finding: int, claim: str, kind: str, pair: dict, *, system: str, measure: str, length: str,
                paper: tuple = (None, None, None)) -> dict:
    """One comparison of a pairs-table row, with its verdict."""
    row = {name: pair.get(name) for name in SCHEMA if name in pair}
    row.update(finding=finding, section=FINDINGS[finding].section, claim=claim, system=system, measure=measure,
               length=length, kind=kind, source=FINDINGS[finding].source, note="", paper_first=paper[0],
               paper_second=paper[1], paper_setting=paper[2])
    for name in ("pooled_p", "pooled_low", "pooled_high"):
        row[name] = pair.get(name)
    if missing(row.get("seeds")):  # a table of one trained model (in context, mechanism): one run
        difference = row.get("difference")
        row.update(seeds=1, seeds_first_above=int(not missing(difference) and difference > 0),
                   seeds_second_above=int(not missing(difference) and difference < 0))
    if kind == AGREE and both_fail(pair):
        row["note"] = BOTH_FAIL
    return row


def _not_run(finding: int, claim: str, note: str) -> dict:
    return {"finding": finding, "section": FINDINGS[finding].section, "claim": claim, "system": "", "measure": "",
            "length": "", "kind": "", "verdict": NOT_RUN, "source": FINDINGS[finding].source, "note": note}


def _family_label(finding: int, key: tuple) -> str:
    """A family's name: finding.claim (the claim's place in the finding's claims), system, measure[, length]."""
    claim, *rest = key
    return f"{finding}.{FINDINGS[finding].claims.index(claim) + 1} " + ", ".join(rest)


def judge_families(finding: int, rows: list[dict], margin: float = DEFAULT_RULES.margin,
                   gated: bool = True) -> list[dict]:
    """Each row's verdict, judged with the rest of its family (claim, system, measure): Holm over
    the family's p for "above" rows, the Bonferroni-widened interval for "agree" rows' contradiction.
    The family's size counts its comparisons with a test (a p, or an interval). `gated`: a row marked
    not learnt (`learnt` False) is `not learnt` and left out of its family, and two sides that both
    fail never agree (`both fail`); ungated, the pooled rules of old (every row judged)."""
    families: dict[tuple, list[dict]] = {}
    for row in rows:
        if gated and row.get("learnt") is False:
            row.update(verdict=NOT_LEARNT, family=_family_label(finding, family_key(finding, row)), family_size=0)
            continue
        families.setdefault(family_key(finding, row), []).append(row)
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
    return rows


def _pooled_view(row: dict) -> dict:
    """The row as the pooled rules saw it: every seed's examples as one sample, no learnt gate."""
    pooled = {**row, "learnt": None}
    if not missing(row.get("pooled_p")):
        pooled.update(p=row["pooled_p"], difference_low=row["pooled_low"], difference_high=row["pooled_high"])
    return pooled


def _frame(finding: int, rows: list[dict], why_not: str, rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """The finding's rows, each judged within its family, with each claim's verdict per family
    (`family_key`), and the verdict the pooled rules gave (`pooled_verdict`); a `not run` row for
    every claim without a comparison."""
    pooled = judge_families(finding, [_pooled_view(r) for r in rows], rules.margin, gated=False)
    rows = judge_families(finding, rows, rules.margin)
    for row, old in zip(rows, pooled):
        row["pooled_verdict"] = old["verdict"]
    for claim in FINDINGS[finding].claims:
        if not any(r["claim"] == claim for r in rows):
            rows.append(_not_run(finding, claim, why_not))
    frame = pl.DataFrame([{name: r.get(name) for name in SCHEMA} for r in rows], schema=SCHEMA)
    keys = [family_key(finding, row) for row in frame.iter_rows(named=True)]
    verdicts: dict[tuple, list[str]] = {}
    for key, verdict in zip(keys, frame["verdict"]):
        verdicts.setdefault(key, []).append(verdict)
    order = {claim: k for k, claim in enumerate(FINDINGS[finding].claims)}
    return (frame.with_columns(pl.Series("claim_verdict", [claim_verdict(verdicts[key]) for key in keys], pl.String),
                               pl.col("claim").replace_strict(order, return_dtype=pl.Int64).alias("_claim"))
            .with_row_index("_row").sort("_claim", "_row").drop("_claim", "_row"))


STAGE_OFF = "the config turned the stage off"
NO_PAIRS = "the stage compared nothing: the config's tasks hold no pair"


def _nothing_to_compare(finding: int, pairs: pl.DataFrame | None) -> pl.DataFrame | None:
    """The finding's `not run` rows when its stage was off (no table) or its table is empty (a
    stage's pairs table has no rows, nor always columns, when the tasks hold no pair); None when
    there are rows to read."""
    if pairs is None:
        return _frame(finding, [], STAGE_OFF)
    if pairs.is_empty() or "measure" not in pairs.columns:
        return _frame(finding, [], NO_PAIRS)
    return None


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


def _learnt_gate(row: dict, trained: dict | None, learnt: float) -> None:
    """Each side's in-distribution accuracy and its drop out of distribution, and whether the
    comparison counts (`learnt`): the side the theory says generalises ("above": first; a mirror
    pair: both) reached `learnt` in distribution. Without an in-distribution row nothing is gated."""
    if trained is None or trained["bin"] == row["length"]:
        return
    for side in ("first", "second"):
        row[f"{side}_in_distribution"] = trained[f"{side}_value"]
        row[f"{side}_drop"] = trained[f"{side}_value"] - row[f"{side}_value"]
    gated = ("first",) if row["kind"] == ABOVE else ("first", "second")
    short = [f"{row[side]} {trained[f'{side}_value']:.2f}" for side in gated if trained[f"{side}_value"] < learnt]
    row["learnt"] = not short
    if short:
        row["note"] = f"not learnt in distribution ({', '.join(short)} < {learnt})"
    elif row["kind"] == ABOVE and trained["second_value"] < learnt:
        row["note"] = (f"{row['second']} {trained['second_value']:.2f} in distribution: its failure is partly "
                       "one to learn, not to generalise")


def _theory_split(finding: int, pairs: pl.DataFrame, above_claim: str, agree_claim: str, paper, learnt: float,
                  bins=longest_bin) -> list[dict]:
    """On the bins `bins` picks (by default each (system, family)'s longest), teacher-forced exact
    match: each expressible task above each inexpressible one of its family, each expressible
    mirror pair in agreement; each gated by the in-distribution accuracy (`_learnt_gate`)."""
    rows = []
    teacher_forced = pairs.filter(pl.col("measure") == "teacher_forced")
    trained = {(r["system"], r["first"], r["second"]): r for r in in_distribution_bins(teacher_forced).iter_rows(
        named=True)}
    for pair in bins(teacher_forced).iter_rows(named=True):
        common = {"system": pair["system"], "measure": "teacher-forced exact match", "length": pair["bin"],
                  "paper": paper(pair)}
        if pair["comparison"] == "expressible above inexpressible":
            row = _comparison(finding, above_claim, ABOVE, pair, **common)
        elif pair["comparison"] == "mirror pair" and get_task(pair["first"]).expressible:
            row = _comparison(finding, agree_claim, AGREE, pair, **common)
        else:
            continue
        _learnt_gate(row, trained.get((pair["system"], pair["first"], pair["second"])), learnt)
        rows.append(row)
    return rows


# -- one function per finding: (pairs, model_paths) -> its rows ----------------------------------
# (model_paths is read only where the paper's numbers are per hub model: the ambiguity finding)
PAPER_SCRATCH_BIN = "101-150"  # the paper's longest from-scratch bin
PAPER_FINETUNE_BIN = "51-100"  # the authors' fine-tuning test bin (retrieval pairs)


def _scratch_paper(pair: dict) -> tuple:
    pe = pair["system"]
    values = (scratch_reference(pe, pair["first"], PAPER_SCRATCH_BIN),
              scratch_reference(pe, pair["second"], PAPER_SCRATCH_BIN))
    return (*values, f"App. B, {pe.upper()}, {PAPER_SCRATCH_BIN}") if any(v is not None for v in values) else \
        (None, None, None)


def from_scratch_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                         rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """1 (App. B), per positional encoding, from `scratch_pairs`: on each family's longest bin every
    expressible task above every inexpressible one, and the expressible mirror pairs in agreement."""
    if (nothing := _nothing_to_compare(1, pairs)) is not None:
        return nothing
    return _frame(1, _theory_split(1, pairs, SCRATCH_ABOVE, SCRATCH_AGREE, _scratch_paper, rules.learnt),
                  "the config's tasks hold no such pair", rules)


def _finetune_paper(pair: dict) -> tuple:
    values = (finetune_reference(pair["system"], pair["first"], PAPER_FINETUNE_BIN),
              finetune_reference(pair["system"], pair["second"], PAPER_FINETUNE_BIN))
    return (*values, f"4.3, fine-tuned GPT-2, {PAPER_FINETUNE_BIN} pairs") if any(v is not None for v in values) \
        else (None, None, None)


def fine_tuning_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                        rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """3 (4.3), per fine-tuned model and on each out-of-distribution bin, from `finetune_pairs`: the
    expressible mirror pairs agree, and the inexpressible tasks stay below the expressible ones of
    their family."""
    if (nothing := _nothing_to_compare(3, pairs)) is not None:
        return nothing
    return _frame(3, _theory_split(3, pairs, FINETUNE_ABOVE, FINETUNE_AGREE, _finetune_paper, rules.learnt,
                                   bins=out_of_distribution_bins),
                  "the config's tasks hold no such pair", rules)


ICL_MEASURES = {"accuracy": "greedy exact match", "tf_symbol_accuracy": "teacher-forced symbol accuracy"}


def in_context_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                       rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """2 (4.1), per model and measure (greedy exact match; teacher-forced symbol accuracy), from
    `icl_pairs` (pooled over lengths, seeds and prompt variants): each forward copy above its backward
    mirror, each right-hand retrieval above its left mirror."""
    if (nothing := _nothing_to_compare(2, pairs)) is not None:
        return nothing
    rows = []
    for pair in pairs.filter(pl.col("measure").is_in(list(ICL_MEASURES))).iter_rows(named=True):
        task = get_task(pair["first"])
        paper = (in_context_reference(pair["first"]), in_context_reference(pair["second"]), IN_CONTEXT_SETTING) \
            if pair["measure"] == "accuracy" and in_context_reference(pair["first"]) is not None else (None,) * 3
        rows.append(_comparison(2, FORWARD if task.family == "copying" else RIGHT, ABOVE, pair,
                                system=pair["model"], measure=ICL_MEASURES[pair["measure"]], length="all",
                                paper=paper))
    return _frame(2, rows, "the config's tasks hold no mirror pair of this family", rules)


LOREM_MEASURES = {"greedy": "ambiguity score (greedy echo)", "teacher_forced": "teacher-forced next-token accuracy"}


def _lorem_paper(model_path: str | None) -> tuple:
    """The paper's (unambiguous, ambiguous) scores for this model where it reports them, else its
    first base model's, named in the setting."""
    for tokens in (500, 2000):
        if model_path and (values := lorem_reference(model_path, tokens)):
            return (*values, f"this model, {tokens} tokens")
    (path, tokens), values = next(iter(LOREM.items()))
    return (*values, f"{path}, {tokens} tokens")


def ambiguity_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                      rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """4 (4.2), per model, from `realistic_pairs` over all lengths: lorem-ipsum copying scores higher
    after unambiguous tokens than after ambiguous ones, greedily (the ambiguity scorer) and
    teacher-forced. model_paths: registry name -> hub path, to find the paper's numbers."""
    if (nothing := _nothing_to_compare(4, pairs)) is not None:
        return nothing
    rows = []
    lorem = pairs.filter((pl.col("task") == "lorem") & (pl.col("length") == "all")
                         & pl.col("measure").is_in(list(LOREM_MEASURES)))
    for pair in lorem.iter_rows(named=True):
        paper = _lorem_paper((model_paths or {}).get(pair["model"])) if pair["measure"] == "greedy" else (None,) * 3
        rows.append(_comparison(4, AMBIGUITY, ABOVE, pair, system=pair["model"],
                                measure=LOREM_MEASURES[pair["measure"]], length="all", paper=paper))
    return _frame(4, rows, "no lorem-ipsum results", rules)


GIT_MEASURES = {"exact": "exact match", "tf_line_start": "teacher-forced line starts"}


def git_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """5 (4.2), per model, from `realistic_pairs` over all lengths: revert above cherry-pick, by exact
    match and teacher-forced at line starts (the one place the two directions differ). The authors'
    repository stores no numbers for it."""
    if (nothing := _nothing_to_compare(5, pairs)) is not None:
        return nothing
    rows = [_comparison(5, GIT, ABOVE, pair, system=pair["model"], measure=GIT_MEASURES[pair["measure"]],
                        length="all")
            for pair in pairs.filter((pl.col("task") == "git") & (pl.col("length") == "all")
                                     & pl.col("measure").is_in(list(GIT_MEASURES))).iter_rows(named=True)]
    return _frame(5, rows, "no git results", rules)


PRETRAINED = "model-"  # the mechanism stage's name of a registry (pretrained) model


def mechanism_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                      rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """6 (4.4), per pretrained model, from `mechanism_pairs` (same prompts, paired permutation tests):
    the best induction head above the best anti-induction head, and removing induction edges costing
    forward copies more than removing anti-induction edges costs backward copies. Models this run
    trained on one direction are left out: the paper's claim is about pretraining."""
    if (nothing := _nothing_to_compare(6, pairs)) is not None:
        return nothing
    rows = []
    pretrained = pairs.filter(pl.col("model").str.starts_with(PRETRAINED))
    for pair in pretrained.filter(pl.col("measure").is_in(["best head score", "loss change"])).iter_rows(named=True):
        heads = pair["measure"] == "best head score"
        rows.append(_comparison(6, HEADS if heads else PATCHING, ABOVE, pair,
                                system=pair["model"].removeprefix(PRETRAINED),
                                measure="mean attention" if heads else "loss change", length="all"))
    return _frame(6, rows, "no pretrained model in mechanism.models", rules)


# Which claim each of corpus_pairs' comparisons serves, and the measures judged (its greedy rows,
# and its forward tasks after fine-tuning, are there to read, not judged).
CORPUS_CLAIMS = {GAP: CORPUS_GAP, IN_CONTEXT: CORPUS_IN_CONTEXT, CONTROL: CORPUS_CONTROL, HEAD_START: CORPUS_HEAD_START}
CORPUS_MEASURES = {"induction gap": "mean attention, induction minus anti-induction", "best head score": "mean attention",
                   "tf_symbol_accuracy": "teacher-forced symbol accuracy", "teacher_forced": "teacher-forced exact match"}


def corpus_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                   rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """7 (beyond the paper), from `corpus_pairs` (same prompts and examples for the two sides): the
    balanced corpus's model has a narrower induction/anti-induction gap than the natural one's and
    copies backward better in context (teacher-forced); the reversed corpus's model still prefers
    induction (heads) and forward copies; fine-tuned alike, the balanced model is ahead on the
    backward tasks, per test bin (in distribution and out). The paper has no numbers for it."""
    if (nothing := _nothing_to_compare(7, pairs)) is not None:
        return nothing
    judged = pairs.filter(pl.col("comparison").is_in(list(CORPUS_CLAIMS))
                          & pl.col("measure").is_in(list(CORPUS_MEASURES)))
    rows = [_comparison(7, CORPUS_CLAIMS[pair["comparison"]], ABOVE, pair, system=pair["model"],
                        measure=CORPUS_MEASURES[pair["measure"]], length=pair["bin"])
            for pair in judged.iter_rows(named=True)]
    return _frame(7, rows, "its stage ran no corpus model this claim compares", rules)


# -- the registry: one record per finding -------------------------------------------------------
FINDINGS: dict[int, Finding] = {finding.number: finding for finding in (
    Finding(1, "App. B", "from scratch, models follow the theory", "scratch_pairs",
            (SCRATCH_ABOVE, SCRATCH_AGREE), from_scratch_finding),
    Finding(2, "4.1", "in context, pretrained models prefer the induction direction", "icl_pairs",
            (FORWARD, RIGHT), in_context_finding),
    # Fine-tuning is tested at 2x and 4x the training lengths, and the paper's claim is about each (a
    # model may hold at 2x and fail at 4x): judged per length.
    Finding(3, "4.3", "fine-tuning closes the expressible gaps only", "finetune_pairs",
            (FINETUNE_AGREE, FINETUNE_ABOVE), fine_tuning_finding, by_length=True),
    Finding(4, "4.2", "copying fails more after ambiguous tokens", "realistic_pairs", (AMBIGUITY,),
            ambiguity_finding),
    Finding(5, "4.2", "git revert (a forward copy) beats cherry-pick (a backward copy)", "realistic_pairs", (GIT,),
            git_finding),
    Finding(6, "4.4", "induction circuits are stronger than anti-induction ones, and carry the copying",
            "mechanism_pairs", (HEADS, PATCHING), mechanism_finding),
    # Beyond the paper (SPEC 8): no paper numbers. Fine-tuning's head start is judged per test bin, as
    # finding 3 is (the other claims pool every length: bin "all").
    Finding(7, "beyond the paper", "the induction preference follows the pretraining data", "corpus_pairs",
            (CORPUS_GAP, CORPUS_IN_CONTEXT, CORPUS_CONTROL, CORPUS_HEAD_START), corpus_finding, by_length=True),
)}


def findings_sources() -> tuple[str, ...]:
    """The pairs tables the findings read, in the findings' order, each once (the `findings` rule's
    inputs where their stages run)."""
    return tuple(dict.fromkeys(FINDINGS[number].source for number in sorted(FINDINGS)))


def findings_table(tables: dict[str, pl.DataFrame], model_paths: ModelPaths = None,
                   rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """Every finding, in the order of its number, from the pairs tables this run made (a table
    missing from `tables`: its stage was off)."""
    return pl.concat([FINDINGS[number].judge(tables.get(FINDINGS[number].source), model_paths, rules)
                      for number in sorted(FINDINGS)])

