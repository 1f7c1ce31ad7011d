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
  difference lies inside ±MIRROR_TOLERANCE (the margin of the from-scratch table's own verdict),
  `contradicted` when the family-wise interval (the 95% one widened by Bonferroni for the family's
  m intervals) lies wholly outside, and `not distinguishable from noise` otherwise;
- a claim, per system and measure (its family; for fine-tuning, per system, measure and
  out-of-distribution bin, BY_LENGTH), is `contradicted` if any of its comparisons is, `shown` if
  all are, otherwise `not distinguishable from noise`;
- `not run`: the config turned the stage off (its table is not made), or its tasks hold nothing the
  claim compares.
Beside each comparison, the paper's own numbers where it reports them, with the setting they are from.
"""

from __future__ import annotations

import math

import polars as pl

from ..lengthbins.table import MIRROR_TOLERANCE
from ..records.files import read_frame
from ..records.tables import to_markdown
from ..references import (
    IN_CONTEXT_SETTING,
    LOREM,
    finetune_reference,
    in_context_reference,
    lorem_reference,
    scratch_reference,
)
from ..stats import LEVEL, PERMUTATIONS, holm, interval_text, p_text, widen
from ..tasks import LengthBin, get_task

SHOWN, CONTRADICTED, NOISE, NOT_RUN = "shown", "contradicted", "not distinguishable from noise", "not run"
VERDICTS = (SHOWN, CONTRADICTED, NOISE, NOT_RUN)

# Finding number -> (paper section, what the paper finds).
FINDINGS = {
    1: ("App. B", "from scratch, models follow the theory"),
    2: ("4.1", "in context, pretrained models prefer the induction direction"),
    3: ("4.3", "fine-tuning closes the expressible gaps only"),
    4: ("4.2", "copying fails more after ambiguous tokens"),
    5: ("4.2", "git revert (a forward copy) beats cherry-pick (a backward copy)"),
    6: ("4.4", "induction circuits are stronger than anti-induction ones, and carry the copying"),
}
# The tables each finding reads (the pairs table of its stage).
SOURCES = {1: "scratch_pairs", 2: "icl_pairs", 3: "finetune_pairs", 4: "realistic_pairs", 5: "realistic_pairs",
           6: "mechanism_pairs"}

SCRATCH_ABOVE = "expressible tasks above the inexpressible ones of their family on the longest bin"
SCRATCH_AGREE = f"expressible mirror pairs agree on the longest bin (within ±{MIRROR_TOLERANCE})"
FORWARD = "forward copy above backward copy"
RIGHT = "right-hand retrieval above its left mirror"
FINETUNE_AGREE = f"expressible mirror pairs agree out of distribution (within ±{MIRROR_TOLERANCE})"
FINETUNE_ABOVE = "inexpressible tasks stay below the expressible ones of their family out of distribution"
AMBIGUITY = "copying after unambiguous tokens above copying after ambiguous ones"
GIT = "revert above cherry-pick"
HEADS = "best induction head above best anti-induction head"
PATCHING = ("removing induction edges costs forward copies more than removing anti-induction edges costs "
            "backward copies")
CLAIMS = {1: (SCRATCH_ABOVE, SCRATCH_AGREE), 2: (FORWARD, RIGHT), 3: (FINETUNE_AGREE, FINETUNE_ABOVE),
          4: (AMBIGUITY,), 5: (GIT,), 6: (HEADS, PATCHING)}

SCHEMA = {
    "finding": pl.Int64, "section": pl.String, "claim": pl.String, "system": pl.String, "measure": pl.String,
    "length": pl.String, "kind": pl.String, "first": pl.String, "first_value": pl.Float64,
    "first_low": pl.Float64, "first_high": pl.Float64, "second": pl.String, "second_value": pl.Float64,
    "second_low": pl.Float64, "second_high": pl.Float64, "difference": pl.Float64, "difference_low": pl.Float64,
    "difference_high": pl.Float64, "test": pl.String, "pairs": pl.Int64, "p": pl.Float64,
    "family": pl.String, "family_size": pl.Int64, "p_holm": pl.Float64, "family_low": pl.Float64,
    "family_high": pl.Float64, "paper_first": pl.Float64, "paper_second": pl.Float64, "paper_setting": pl.String,
    "verdict": pl.String,
    "claim_verdict": pl.String, "source": pl.String, "note": pl.String,
}
ABOVE, AGREE = "above", "agree"  # the two kinds of comparison
# Findings judged per length as well as per system and measure: fine-tuning is tested at 2x and 4x
# the training lengths, and the paper's claim is about each (a model may hold at 2x and fail at 4x).
BY_LENGTH = {3}


def family_key(finding: int, row: dict) -> tuple:
    """What a comparison is judged with: the same claim, system and measure (and length, BY_LENGTH)."""
    return (row["claim"], row["system"], row["measure"]) + ((row["length"],) if finding in BY_LENGTH else ())


# -- a row's verdict ------------------------------------------------------------------------------
def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def above_verdict(row: dict) -> str:
    """First above second: the paired (or two-sample) test's Holm-adjusted p over the family decides
    (`p_holm`; the raw p for a family of one), the sign says which way."""
    p = row.get("p_holm", row.get("p"))
    if _missing(p) or p >= LEVEL or _missing(row.get("difference")) or row["difference"] == 0:
        return NOISE
    return SHOWN if row["difference"] > 0 else CONTRADICTED


def agree_verdict(row: dict, margin: float = MIRROR_TOLERANCE) -> str:
    """The two agree: the difference's 95% interval inside ±margin; contradicted only when the
    family-wise interval (`family_low`, `family_high`; the 95% one for a family of one) lies wholly
    outside it, so that one of twelve pairs straying by chance does not contradict the claim."""
    low, high = row.get("difference_low"), row.get("difference_high")
    if _missing(low) or _missing(high):
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
    return all(not _missing(row.get(f"{side}_high")) and row[f"{side}_high"] < FAILING for side in ("first", "second"))


def claim_verdict(verdicts: list[str]) -> str:
    """A claim over its comparisons: any contradicted, all shown, else noise (not run when none ran)."""
    ran = [v for v in verdicts if v != NOT_RUN]
    if not ran:
        return NOT_RUN
    if CONTRADICTED in ran:
        return CONTRADICTED
    return SHOWN if all(v == SHOWN for v in ran) else NOISE


# -- rows -----------------------------------------------------------------------------------------
def _comparison(finding: int, claim: str, kind: str, pair: dict, *, system: str, measure: str, length: str,
                paper: tuple = (None, None, None)) -> dict:
    """One comparison of a pairs-table row, with its verdict."""
    row = {name: pair.get(name) for name in SCHEMA if name in pair}
    row.update(finding=finding, section=FINDINGS[finding][0], claim=claim, system=system, measure=measure,
               length=length, kind=kind, source=SOURCES[finding], note="", paper_first=paper[0],
               paper_second=paper[1], paper_setting=paper[2])
    if kind == AGREE and both_fail(pair):
        row["note"] = BOTH_FAIL
    return row


def _not_run(finding: int, claim: str, note: str) -> dict:
    return {"finding": finding, "section": FINDINGS[finding][0], "claim": claim, "system": "", "measure": "",
            "length": "", "kind": "", "verdict": NOT_RUN, "source": SOURCES[finding], "note": note}


def _family_label(finding: int, key: tuple) -> str:
    """A family's name: finding.claim (the claim's place in CLAIMS), system, measure[, length]."""
    claim, *rest = key
    return f"{finding}.{CLAIMS[finding].index(claim) + 1} " + ", ".join(rest)


def judge_families(finding: int, rows: list[dict]) -> list[dict]:
    """Each row's verdict, judged with the rest of its family (claim, system, measure): Holm over
    the family's p for "above" rows, the Bonferroni-widened interval for "agree" rows' contradiction.
    The family's size counts its comparisons with a test (a p, or an interval)."""
    families: dict[tuple, list[dict]] = {}
    for row in rows:
        families.setdefault(family_key(finding, row), []).append(row)
    for key, members in families.items():
        label = _family_label(finding, key)
        above = [r for r in members if r["kind"] == ABOVE]
        adjusted = holm([math.nan if _missing(r.get("p")) else r["p"] for r in above])
        for row, p_holm in zip(above, adjusted):
            row["p_holm"] = None if math.isnan(p_holm) else float(p_holm)
        agree = [r for r in members if r["kind"] == AGREE]
        tested = [r for r in agree if not any(_missing(r.get(k)) for k in ("difference", "difference_low",
                                                                           "difference_high"))]
        for row in tested:
            row["family_low"], row["family_high"] = widen(row["difference"], row["difference_low"],
                                                          row["difference_high"], len(tested))
        sizes = {ABOVE: sum(not _missing(r["p_holm"]) for r in above), AGREE: len(tested)}
        for row in members:
            row.update(family=label, family_size=sizes[row["kind"]],
                       verdict=above_verdict(row) if row["kind"] == ABOVE else agree_verdict(row))
    return rows


def _frame(finding: int, rows: list[dict], why_not: str) -> pl.DataFrame:
    """The finding's rows, each judged within its family, with each claim's verdict per family
    (`family_key`); a `not run` row for every claim without a comparison."""
    rows = judge_families(finding, rows)
    for claim in CLAIMS[finding]:
        if not any(r["claim"] == claim for r in rows):
            rows.append(_not_run(finding, claim, why_not))
    frame = pl.DataFrame([{name: r.get(name) for name in SCHEMA} for r in rows], schema=SCHEMA)
    keys = [family_key(finding, row) for row in frame.iter_rows(named=True)]
    verdicts: dict[tuple, list[str]] = {}
    for key, verdict in zip(keys, frame["verdict"]):
        verdicts.setdefault(key, []).append(verdict)
    order = {claim: k for k, claim in enumerate(CLAIMS[finding])}
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


def _theory_split(finding: int, pairs: pl.DataFrame, above_claim: str, agree_claim: str, paper,
                  bins=longest_bin) -> list[dict]:
    """On the bins `bins` picks (by default each (system, family)'s longest), teacher-forced exact
    match: each expressible task above each inexpressible one of its family, each expressible
    mirror pair in agreement."""
    rows = []
    for pair in bins(pairs.filter(pl.col("measure") == "teacher_forced")).iter_rows(named=True):
        common = {"system": pair["system"], "measure": "teacher-forced exact match", "length": pair["bin"],
                  "paper": paper(pair)}
        if pair["comparison"] == "expressible above inexpressible":
            rows.append(_comparison(finding, above_claim, ABOVE, pair, **common))
        elif pair["comparison"] == "mirror pair" and get_task(pair["first"]).expressible:
            rows.append(_comparison(finding, agree_claim, AGREE, pair, **common))
    return rows


# -- one function per finding ---------------------------------------------------------------------
PAPER_SCRATCH_BIN = "101-150"  # the paper's longest from-scratch bin
PAPER_FINETUNE_BIN = "51-100"  # the authors' fine-tuning test bin (retrieval pairs)


def _scratch_paper(pair: dict) -> tuple:
    pe = pair["system"]
    values = (scratch_reference(pe, pair["first"], PAPER_SCRATCH_BIN),
              scratch_reference(pe, pair["second"], PAPER_SCRATCH_BIN))
    return (*values, f"App. B, {pe.upper()}, {PAPER_SCRATCH_BIN}") if any(v is not None for v in values) else \
        (None, None, None)


def from_scratch_finding(pairs: pl.DataFrame | None) -> pl.DataFrame:
    """1 (App. B), per positional encoding, from `scratch_pairs`: on each family's longest bin every
    expressible task above every inexpressible one, and the expressible mirror pairs in agreement."""
    if (nothing := _nothing_to_compare(1, pairs)) is not None:
        return nothing
    return _frame(1, _theory_split(1, pairs, SCRATCH_ABOVE, SCRATCH_AGREE, _scratch_paper),
                  "the config's tasks hold no such pair")


def _finetune_paper(pair: dict) -> tuple:
    values = (finetune_reference(pair["system"], pair["first"], PAPER_FINETUNE_BIN),
              finetune_reference(pair["system"], pair["second"], PAPER_FINETUNE_BIN))
    return (*values, f"4.3, fine-tuned GPT-2, {PAPER_FINETUNE_BIN} pairs") if any(v is not None for v in values) \
        else (None, None, None)


def fine_tuning_finding(pairs: pl.DataFrame | None) -> pl.DataFrame:
    """3 (4.3), per fine-tuned model and on each out-of-distribution bin, from `finetune_pairs`: the
    expressible mirror pairs agree, and the inexpressible tasks stay below the expressible ones of
    their family."""
    if (nothing := _nothing_to_compare(3, pairs)) is not None:
        return nothing
    return _frame(3, _theory_split(3, pairs, FINETUNE_ABOVE, FINETUNE_AGREE, _finetune_paper,
                                   bins=out_of_distribution_bins),
                  "the config's tasks hold no such pair")


ICL_MEASURES = {"accuracy": "greedy exact match", "tf_symbol_accuracy": "teacher-forced symbol accuracy"}


def in_context_finding(pairs: pl.DataFrame | None) -> pl.DataFrame:
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
    return _frame(2, rows, "the config's tasks hold no mirror pair of this family")


LOREM_MEASURES = {"greedy": "ambiguity score (greedy echo)", "teacher_forced": "teacher-forced next-token accuracy"}


def _lorem_paper(model_path: str | None) -> tuple:
    """The paper's (unambiguous, ambiguous) scores for this model where it reports them, else its
    first base model's, named in the setting."""
    for tokens in (500, 2000):
        if model_path and (values := lorem_reference(model_path, tokens)):
            return (*values, f"this model, {tokens} tokens")
    (path, tokens), values = next(iter(LOREM.items()))
    return (*values, f"{path}, {tokens} tokens")


def ambiguity_finding(pairs: pl.DataFrame | None, model_paths: dict[str, str] | None = None) -> pl.DataFrame:
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
    return _frame(4, rows, "no lorem-ipsum results")


GIT_MEASURES = {"exact": "exact match", "tf_line_start": "teacher-forced line starts"}


def git_finding(pairs: pl.DataFrame | None) -> pl.DataFrame:
    """5 (4.2), per model, from `realistic_pairs` over all lengths: revert above cherry-pick, by exact
    match and teacher-forced at line starts (the one place the two directions differ). The authors'
    repository stores no numbers for it."""
    if (nothing := _nothing_to_compare(5, pairs)) is not None:
        return nothing
    rows = [_comparison(5, GIT, ABOVE, pair, system=pair["model"], measure=GIT_MEASURES[pair["measure"]],
                        length="all")
            for pair in pairs.filter((pl.col("task") == "git") & (pl.col("length") == "all")
                                     & pl.col("measure").is_in(list(GIT_MEASURES))).iter_rows(named=True)]
    return _frame(5, rows, "no git results")


PRETRAINED = "model-"  # the mechanism stage's name of a registry (pretrained) model


def mechanism_finding(pairs: pl.DataFrame | None) -> pl.DataFrame:
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
    return _frame(6, rows, "no pretrained model in mechanism.models")


def findings_table(tables: dict[str, pl.DataFrame], model_paths: dict[str, str] | None = None) -> pl.DataFrame:
    """Every finding, in the paper's order of this table (1-6), from the pairs tables this run made
    (a table missing from `tables`: its stage was off)."""
    return pl.concat([
        from_scratch_finding(tables.get("scratch_pairs")),
        in_context_finding(tables.get("icl_pairs")),
        fine_tuning_finding(tables.get("finetune_pairs")),
        ambiguity_finding(tables.get("realistic_pairs"), model_paths),
        git_finding(tables.get("realistic_pairs")),
        mechanism_finding(tables.get("mechanism_pairs")),
    ])


# -- markdown -------------------------------------------------------------------------------------
def _side(row: dict, side: str) -> str:
    return (f"{row[side]}: {row[f'{side}_value']:.2f} {interval_text(row[f'{side}_low'], row[f'{side}_high'])}"
            .strip())


def _test(row: dict) -> str:
    """The difference, and what decided the verdict: the Holm p over the family ("above"), or the
    interval against the margin with its family-wise widening ("agree")."""
    if row["kind"] == AGREE:
        text = (f"difference {row['difference']:+.2f} {interval_text(row['difference_low'], row['difference_high'])}"
                f" against ±{MIRROR_TOLERANCE}")
        if (row["family_size"] or 0) > 1 and not _missing(row.get("family_low")):
            text += (f"; family-wise {interval_text(row['family_low'], row['family_high'])} "
                     f"({row['family_size']} pairs)")
        return text
    text = f"difference {row['difference']:+.2f}"
    if not _missing(row.get("difference_low")):
        text += f" {interval_text(row['difference_low'], row['difference_high'])}"
    permutations = PERMUTATIONS if row["test"] == "paired permutation" else None
    text += f"; {row['test']}, {p_text(row['p'], permutations)}"
    if (row["family_size"] or 0) > 1:
        text += f", Holm {p_text(row['p_holm'], permutations)} of {row['family_size']}"
    return text + (f", {row['pairs']} pairs" if row["pairs"] else "")


def _paper(row: dict) -> str:
    values = [f"{row[k]:.2f}" if not _missing(row[k]) else "–" for k in ("paper_first", "paper_second")]
    return "" if row["paper_setting"] is None else f"{values[0]} vs {values[1]} ({row['paper_setting']})"


def _finding_name(number: int) -> str:
    section, text = FINDINGS[number]
    return f"{number}. {text} ({section})"


def glance(frame: pl.DataFrame) -> pl.DataFrame:
    """One line per finding and family (claim, system, measure, and length for BY_LENGTH): its
    verdict and how its comparisons went."""
    rows, named = [], set()
    by_length = pl.when(pl.col("finding").is_in(list(BY_LENGTH))).then(pl.col("length")).otherwise(pl.lit(""))
    for (finding, claim, system, measure, length), group in (
            frame.with_columns(by_length.alias("_length"))
            .group_by(["finding", "claim", "system", "measure", "_length"], maintain_order=True)):
        counts = [f"{n} {v}" for v in (SHOWN, CONTRADICTED, NOISE) if (n := (group["verdict"] == v).sum())]
        if failing := (group["note"] == BOTH_FAIL).sum():
            counts.append(f"{failing} of them {BOTH_FAIL}")
        name = "" if finding in named else _finding_name(finding)  # each finding named on its first line
        named.add(finding)
        rows.append({"finding": name, "claim": claim, "system": system, "measure": measure, "length": length or "",
                     "verdict": f"**{group['claim_verdict'][0]}**",
                     "comparisons": ", ".join(counts) if counts else group["note"][0]})
    return pl.DataFrame(rows)


def findings_markdown(frame: pl.DataFrame, provenance: dict | None = None) -> str:
    """The findings at a glance, then every comparison with its numbers, test and the paper's."""
    ran = frame.filter(pl.col("verdict") != NOT_RUN)
    details = pl.DataFrame([{
        "finding": r["finding"], "system": r["system"], "measure": r["measure"], "length": r["length"],
        "comparison": r["kind"], "first": _side(r, "first"), "second": _side(r, "second"), "test": _test(r),
        "paper": _paper(r), "verdict": r["verdict"] + (f" ({r['note']})" if r["note"] else "")}
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
             f"±{MIRROR_TOLERANCE}, contradicted when the family-wise interval (each 95% half-width times "
             f"z(1 - {LEVEL}/2m) / z(1 - {LEVEL}/2), Bonferroni over the family's m pairs) lies wholly outside "
             f"(a note says when both sides are below {FAILING}: agreement then is not generalisation). A "
             "permutation p at its floor, 1/(permutations + 1), reads p < 1e-4. Values with their 95% "
             "intervals; the paper's numbers where it reports them, with the setting they are from.", "",
             to_markdown(details) if details.height else "(no stage ran)\n"]
    if provenance:
        parts += [f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(parts)


def write_findings(paths: dict[str, str], section: dict, outputs) -> None:
    """paths: pairs-table name -> parquet, for the stages this config runs; section: the rule's params
    (`models`: registry name -> hub path, for the paper's numbers)."""
    from ..records.provenance import collect
    from ..records.tables import write_table

    provenance = collect(section)
    frame = findings_table({name: read_frame(path) for name, path in paths.items()}, section.get("models"))
    write_table(frame, outputs, provenance, markdown=findings_markdown(frame, provenance))
