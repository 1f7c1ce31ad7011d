"""Did the paper's findings reproduce here? One table that answers it from the run's own pairs tables.

Each finding of the paper (SPEC's numbered list) is a few claims, and each claim a few comparisons
of two numbers on the same (or the same kind of) examples, read from a stage's pairs table with its
intervals and test. One function per finding picks its rows; `lengthgen.results.verdicts` judges
them (how: that module's docstring).
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

from ..corpora.pairs import AT_STEP, CONTROL, HEAD_START, MANIPULATION, NATURAL, PREFERENCE, STEPS, TAKERS, UNCHANGED
from ..references import (
    IN_CONTEXT_SETTING,
    LOREM,
    finetune_reference,
    in_context_reference,
    lorem_reference,
    scratch_reference,
)
from ..stats import LEVEL, holm
from ..tasks import get_task
from .verdicts import (
    ABOVE,
    AGREE,
    DEFAULT_RULES,
    DROP,
    VerdictRules,
    comparison_row,
    drop_comparison,
    finding_frame,
    in_distribution_bins,
    learnt_gate,
    longest_bin,
    nothing_to_compare,
    out_of_distribution_bins,
)

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
    per_system: bool = False  # each system its own family (an experiment of its own), not one per claim


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
CORPUS_MANIPULATION = "the corpora with reversed copies taught them (the manipulation check)"
CORPUS_PREFERENCE = "the induction preference narrows after pretraining on reversed copies"
CORPUS_CONTROL = "the reversed corpus keeps the natural induction preference"
CORPUS_HEAD_START = "fine-tuning from the balanced corpus starts the backward task ahead, beyond any extra copying"
CORPUS_UNCHANGED = "fine-tuned from the balanced corpus, the forward tasks (UR, UF) stay where they were (within the margin)"


# -- findings 1 and 3: the theory's split of length-bin pairs -----------------------------------
def _theory_split(finding: Finding, pairs: pl.DataFrame, above_claim: str, agree_claim: str, paper, learnt: float,
                  bins=longest_bin) -> list[dict]:
    """On the bins `bins` picks (by default each (system, family)'s longest), teacher-forced exact
    match: each expressible task above each inexpressible one of its family, each expressible
    mirror pair in agreement; each gated by the in-distribution accuracy (`learnt_gate`)."""
    rows = []
    teacher_forced = pairs.filter(pl.col("measure") == "teacher_forced")
    trained = {(r["system"], r["first"], r["second"]): r for r in in_distribution_bins(teacher_forced).iter_rows(
        named=True)}
    for pair in bins(teacher_forced).iter_rows(named=True):
        common = {"system": pair["system"], "measure": "teacher-forced exact match", "length": pair["bin"],
                  "paper": paper(pair)}
        if pair["comparison"] == "expressible above inexpressible":
            row = comparison_row(finding, above_claim, ABOVE, pair, **common)
        elif pair["comparison"] == "mirror pair" and get_task(pair["first"]).expressible:
            row = comparison_row(finding, agree_claim, AGREE, pair, **common)
        else:
            continue
        in_distribution = trained.get((pair["system"], pair["first"], pair["second"]))
        learnt_gate(row, in_distribution, learnt)
        rows.append(row)
        if row["kind"] == ABOVE and row.get("learnt") and (drops := drop_comparison(pair, in_distribution)):
            rows.append(comparison_row(finding, above_claim, ABOVE, drops, **{**common, "measure": f"{common['measure']}, "
                                                                                                  f"{DROP}"}))
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
    finding = FINDINGS[1]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = _theory_split(finding, pairs, SCRATCH_ABOVE, SCRATCH_AGREE, _scratch_paper, rules.learnt)
    return finding_frame(finding, rows, "the config's tasks hold no such pair", rules)


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
    finding = FINDINGS[3]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = _theory_split(finding, pairs, FINETUNE_ABOVE, FINETUNE_AGREE, _finetune_paper, rules.learnt,
                         bins=out_of_distribution_bins)
    return finding_frame(finding, rows, "the config's tasks hold no such pair", rules)


ICL_MEASURES = {"accuracy": "greedy exact match", "tf_symbol_accuracy": "teacher-forced symbol accuracy"}


def in_context_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                       rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """2 (4.1), per model and measure (greedy exact match; teacher-forced symbol accuracy), from
    `icl_pairs` (pooled over lengths, seeds and prompt variants): each forward copy above its backward
    mirror, each right-hand retrieval above its left mirror."""
    finding = FINDINGS[2]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = []
    for pair in pairs.filter(pl.col("measure").is_in(list(ICL_MEASURES))).iter_rows(named=True):
        task = get_task(pair["first"])
        paper = (in_context_reference(pair["first"]), in_context_reference(pair["second"]), IN_CONTEXT_SETTING) \
            if pair["measure"] == "accuracy" and in_context_reference(pair["first"]) is not None else (None,) * 3
        rows.append(comparison_row(finding, FORWARD if task.family == "copying" else RIGHT, ABOVE, pair,
                                   system=pair["model"], measure=ICL_MEASURES[pair["measure"]], length="all",
                                   paper=paper))
    return finding_frame(finding, rows, "the config's tasks hold no mirror pair of this family", rules)


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
    finding = FINDINGS[4]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = []
    lorem = pairs.filter((pl.col("task") == "lorem") & (pl.col("length") == "all")
                         & pl.col("measure").is_in(list(LOREM_MEASURES)))
    for pair in lorem.iter_rows(named=True):
        paper = _lorem_paper((model_paths or {}).get(pair["model"])) if pair["measure"] == "greedy" else (None,) * 3
        rows.append(comparison_row(finding, AMBIGUITY, ABOVE, pair, system=pair["model"],
                                   measure=LOREM_MEASURES[pair["measure"]], length="all", paper=paper))
    return finding_frame(finding, rows, "no lorem-ipsum results", rules)


GIT_MEASURES = {"exact": "exact match", "tf_line_start": "teacher-forced line starts"}


def git_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """5 (4.2), per model, from `realistic_pairs` over all lengths: revert above cherry-pick, by exact
    match and teacher-forced at line starts (the one place the two directions differ). The authors'
    repository stores no numbers for it."""
    finding = FINDINGS[5]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = [comparison_row(finding, GIT, ABOVE, pair, system=pair["model"], measure=GIT_MEASURES[pair["measure"]],
                           length="all")
            for pair in pairs.filter((pl.col("task") == "git") & (pl.col("length") == "all")
                                     & pl.col("measure").is_in(list(GIT_MEASURES))).iter_rows(named=True)]
    return finding_frame(finding, rows, "no git results", rules)


PRETRAINED = "model-"  # the mechanism stage's name of a registry (pretrained) model


def mechanism_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                      rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """6 (4.4), per pretrained model, from `mechanism_pairs` (same prompts, paired permutation tests):
    the best induction head above the best anti-induction head, and removing induction edges costing
    forward copies more than removing anti-induction edges costs backward copies. Models this run
    trained on one direction are left out: the paper's claim is about pretraining."""
    finding = FINDINGS[6]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    rows = []
    pretrained = pairs.filter(pl.col("model").str.starts_with(PRETRAINED))
    for pair in pretrained.filter(pl.col("measure").is_in(["best head score", "loss change"])).iter_rows(named=True):
        heads = pair["measure"] == "best head score"
        rows.append(comparison_row(finding, HEADS if heads else PATCHING, ABOVE, pair,
                                   system=pair["model"].removeprefix(PRETRAINED),
                                   measure="mean attention" if heads else "loss change", length="all"))
    return finding_frame(finding, rows, "no pretrained model in mechanism.models", rules)


# Which claim each of corpus_pairs' comparisons serves (its no-claim rows are there to read, not
# judged), and what each measure is.
CORPUS_CLAIMS = {MANIPULATION: CORPUS_MANIPULATION, PREFERENCE: CORPUS_PREFERENCE, CONTROL: CORPUS_CONTROL,
                 HEAD_START: CORPUS_HEAD_START, UNCHANGED: CORPUS_UNCHANGED}
CORPUS_AGREE = {UNCHANGED}  # claims of no change: the two sides agree within the margin
CORPUS_MEASURES = {"copy continuation": "teacher-forced accuracy continuing inserted copies",
                   "tf_symbol_accuracy": "teacher-forced symbol accuracy in context",
                   "best head score": "best head's mean attention", "teacher_forced": "teacher-forced exact match",
                   STEPS: "fine-tuning steps to reach the in-distribution accuracy (fewer on the second)"}
CURVE_STEP = AT_STEP.split("{")[0]  # the learning curve's measures beyond training, one per step
DID_NOT_TAKE = "the manipulation check did not show that {arm} learnt its reversed copies"


def _manipulation_failed(pairs: pl.DataFrame, level: float = LEVEL) -> dict[str, str]:
    """arm -> why its comparisons are not judged: its models were not shown better than the natural
    ones at continuing reversed copies. The gate is the manipulation claim's own verdict, judged
    before the others: Holm over its comparisons (one per arm), as the claim is."""
    checks = pairs.filter(pl.col("comparison") == MANIPULATION)
    adjusted = holm([math.nan if p is None else p for p in checks["p"]])
    failed = {}
    for row, p in zip(checks.iter_rows(named=True), adjusted):
        arm = row["model"].removesuffix(f" vs {NATURAL}")
        if not (not math.isnan(p) and p < level and row["difference"] > 0):
            failed[arm] = DID_NOT_TAKE.format(arm=arm) + f" (Holm p = {p:.2g} over the check's {len(checks)})"
    return failed


def _arm_of(pair: dict) -> str | None:
    """The arm with reversed copies a comparison is about (None: the reversed control)."""
    return next((arm for arm in TAKERS if arm in pair["model"].split(" vs ")), None)


def corpus_finding(pairs: pl.DataFrame | None, model_paths: ModelPaths = None,
                   rules: VerdictRules = DEFAULT_RULES) -> pl.DataFrame:
    """7 (beyond the paper), from `corpus_pairs` (the pretraining seed the unit): the balanced and
    backward-only models continue reversed copies better than the natural ones (the manipulation
    check; an arm that fails it has its other comparisons marked `not learnt`: the corpus did not
    take); the corpus x direction interaction (forward minus backward, natural's wider); the
    reversed models still prefer the forward direction; fine-tuned alike, the balanced models ahead
    on UB of the natural and of the forward-only ones, per test bin and along the learning curve; and
    on the forward tasks (UR, UF) where the natural ones are, within the margin (an equivalence claim,
    judged as a mirror pair's agreement). The paper has no numbers for it."""
    finding = FINDINGS[7]
    if (nothing := nothing_to_compare(finding, pairs)) is not None:
        return nothing
    failed = _manipulation_failed(pairs)
    judged = pairs.filter(pl.col("comparison").is_in(list(CORPUS_CLAIMS))
                          & (pl.col("measure").is_in(list(CORPUS_MEASURES)) | pl.col("measure").str.starts_with(CURVE_STEP)))
    rows = []
    for pair in judged.iter_rows(named=True):
        measure = CORPUS_MEASURES.get(pair["measure"], f"teacher-forced accuracy {pair['measure']} of fine-tuning")
        row = comparison_row(finding, CORPUS_CLAIMS[pair["comparison"]],
                             AGREE if pair["comparison"] in CORPUS_AGREE else ABOVE, pair, system=pair["model"],
                             measure=measure, length=pair["bin"])
        row["equivalence"] = pair["comparison"] in CORPUS_AGREE
        arm = _arm_of(pair)
        if pair["comparison"] != MANIPULATION and arm in failed:
            row.update(learnt=False, note=failed[arm])
        rows.append(row)
    return finding_frame(finding, rows, "its stage ran no corpus model this claim compares", rules)


# -- the registry: one record per finding -------------------------------------------------------
FINDINGS: dict[int, Finding] = {finding.number: finding for finding in (
    Finding(1, "App. B", "from scratch, models follow the theory", "scratch_pairs",
            (SCRATCH_ABOVE, SCRATCH_AGREE), from_scratch_finding),
    Finding(2, "4.1", "in context, pretrained models prefer the induction direction", "icl_pairs",
            (FORWARD, RIGHT), in_context_finding),
    # Each fine-tuned model and protocol is an experiment of its own (a protocol's verdict is what the
    # protocols study compares): one family per claim and system, its lengths and measures in it.
    Finding(3, "4.3", "fine-tuning closes the expressible gaps only", "finetune_pairs",
            (FINETUNE_AGREE, FINETUNE_ABOVE), fine_tuning_finding, per_system=True),
    Finding(4, "4.2", "copying fails more after ambiguous tokens", "realistic_pairs", (AMBIGUITY,),
            ambiguity_finding),
    Finding(5, "4.2", "git revert (a forward copy) beats cherry-pick (a backward copy)", "realistic_pairs", (GIT,),
            git_finding),
    Finding(6, "4.4", "induction circuits are stronger than anti-induction ones, and carry the copying",
            "mechanism_pairs", (HEADS, PATCHING), mechanism_finding),
    # Beyond the paper (SPEC 8): no paper numbers. Each claim one family over its arms, measures,
    # test bins and learning-curve steps.
    Finding(7, "beyond the paper", "the induction preference follows the pretraining data", "corpus_pairs",
            (CORPUS_MANIPULATION, CORPUS_PREFERENCE, CORPUS_CONTROL, CORPUS_HEAD_START, CORPUS_UNCHANGED), corpus_finding),
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
