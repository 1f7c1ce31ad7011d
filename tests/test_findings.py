"""The findings table: every verdict from small hand-made pairs tables, one function per finding,
each outcome (shown, contradicted, not distinguishable from noise, not run); the registry of
findings as the one place a finding is declared."""

from pathlib import Path

import polars as pl
import pytest

from lengthgen.lengthbins.table import beyond_training
from lengthgen.results.findings import (
    FINDINGS,
    Finding,
    ambiguity_finding,
    corpus_finding,
    findings_sources,
    findings_table,
    fine_tuning_finding,
    from_scratch_finding,
    git_finding,
    in_context_finding,
    mechanism_finding,
)
from lengthgen.results.findings_markdown import findings_markdown
from lengthgen.results.verdicts import (
    ABOVE,
    AGREE,
    BOTH_FAIL,
    CONTRADICTED,
    FAIL_ALIKE,
    NO_PAIRS,
    NOISE,
    NOT_LEARNT,
    NOT_RUN,
    SHOWN,
    STAGE_OFF,
    VerdictRules,
    base_verdict,
    comparison_row,
    finding_frame,
    nothing_to_compare,
    power_to_decide,
)
from lengthgen.stats import examples_for_power, runs_for_power

SIGNIFICANT, NOT_SIGNIFICANT = 0.001, 0.4


def pair(first, second, first_value, second_value, p, low=None, high=None, **keys) -> dict:
    """One row of a pairs table (the shared schema), with the difference's interval where given; three
    training runs (a plain verdict) unless `seeds` says otherwise."""
    return {"first": first, "second": second, "test": "McNemar exact", "pairs": 100, "seeds": 3,
            "first_value": first_value, "first_low": first_value - 0.05, "first_high": first_value + 0.05,
            "second_value": second_value, "second_low": second_value - 0.05, "second_high": second_value + 0.05,
            "difference": first_value - second_value, "difference_low": low, "difference_high": high, "p": p,
            "significant": p < 0.05, "verdict": "(the stage's own line)", **keys}


def bins_pairs(rows: list[dict], system="ape", train_lengths=None) -> pl.DataFrame:
    """A scratch_pairs / finetune_pairs table: retrieval's longest bin is 31-45, copying's 26-32;
    with train_lengths (family -> "3-20"), each row's `beyond_training`."""
    frame = pl.DataFrame([{"system": system, "measure": "teacher_forced", **r} for r in rows])
    if train_lengths:
        frame = frame.with_columns(pl.struct("family", "bin").map_elements(
            lambda r: beyond_training(r["bin"], train_lengths[r["family"]]), return_dtype=pl.Boolean)
            .alias("beyond_training"))
    return frame


def above(first, second, first_value, second_value, p, bin_="31-45", family="retrieval"):
    return pair(first, second, first_value, second_value, p, first_value - second_value - 0.1,
                first_value - second_value + 0.1, family=family, bin=bin_, comparison="expressible above inexpressible")


def mirror(first, second, first_value, second_value, low, high, bin_="31-45", family="retrieval"):
    return pair(first, second, first_value, second_value, 0.5, low, high, family=family, bin=bin_,
                comparison="mirror pair")


def verdicts(frame: pl.DataFrame, claim_part: str) -> tuple[list[str], list[str]]:
    """(each comparison's verdict, the claim's verdicts) of the claims whose text contains claim_part."""
    rows = frame.filter(pl.col("claim").str.contains(claim_part, literal=True))
    return rows["verdict"].to_list(), rows["claim_verdict"].unique(maintain_order=True).to_list()


# -- 1: from scratch ------------------------------------------------------------------------------
def test_from_scratch_shown_on_the_longest_bins_only():
    table = bins_pairs([
        above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT),
        above("UL", "NRLast", 0.96, 0.80, SIGNIFICANT),
        above("UF", "NB", 0.96, 0.00, SIGNIFICANT, bin_="26-32", family="copying"),
        mirror("UR", "UL", 0.99, 0.96, -0.01, 0.08),
        # In distribution the inexpressible task is higher: not the longest bin, so it does not count.
        above("UR", "NRLast", 0.99, 1.00, SIGNIFICANT, bin_="1-15"),
        mirror("UR", "UL", 1.00, 0.96, 0.0, 0.08, bin_="1-15"),
        # Greedy exact match is not the paper's measure: left out.
        {**above("UR", "NRLast", 0.10, 0.90, SIGNIFICANT), "measure": "greedy"},
    ])
    frame = from_scratch_finding(table)
    assert verdicts(frame, "expressible tasks above") == ([SHOWN] * 3, [SHOWN])
    assert verdicts(frame, "mirror pairs agree") == ([SHOWN], [SHOWN])
    assert set(frame["note"]) == {""}
    assert set(frame["length"]) == {"31-45", "26-32"} and set(frame["system"]) == {"ape"}
    assert set(frame["finding"]) == {1} and set(frame["measure"]) == {"teacher-forced exact match"}


def test_an_agreement_of_two_failing_tasks_is_never_shown():
    frame = from_scratch_finding(bins_pairs([mirror("UR", "UL", 0.01, 0.0, -0.01, 0.03)]))
    assert verdicts(frame, "mirror pairs agree") == ([FAIL_ALIKE], [NOISE])
    row = frame.filter(pl.col("verdict") == FAIL_ALIKE).row(0, named=True)
    assert row["note"] == BOTH_FAIL and row["pooled_verdict"] == SHOWN  # the old rules called it shown
    assert "1 both fail" in findings_markdown(frame)


def test_a_comparison_whose_tasks_were_never_learnt_is_not_learnt_and_counts_neither_way():
    """From scratch NLLast 0.6 in distribution: its failure out of distribution is not one to generalise.
    Either side counts: UF 1.00 against NB 0.11 in distribution is a failure to learn NB, not a
    length limit (the default's finding 1); against NF, learnt at 0.97, it counts."""
    table = bins_pairs([
        above("NLLast", "NB", 0.40, 0.05, SIGNIFICANT, bin_="26-32", family="copying"),
        above("NLLast", "NB", 0.60, 0.11, SIGNIFICANT, bin_="1-15", family="copying"),
        above("UF", "NB", 0.99, 0.05, SIGNIFICANT, bin_="26-32", family="copying"),
        above("UF", "NB", 1.00, 0.11, SIGNIFICANT, bin_="1-15", family="copying"),
        above("UF", "NF", 0.99, 0.05, SIGNIFICANT, bin_="26-32", family="copying"),
        above("UF", "NF", 1.00, 0.97, SIGNIFICANT, bin_="1-15", family="copying"),
        mirror("UR", "UL", 0.50, 0.52, -0.05, 0.04),
        mirror("UR", "UL", 0.99, 0.90, 0.05, 0.13, bin_="1-15"),  # UL never reached 0.95
    ])
    frame = from_scratch_finding(table)
    assert verdicts(frame, "expressible tasks above") == ([NOT_LEARNT, NOT_LEARNT, SHOWN], [SHOWN])
    assert verdicts(frame, "mirror pairs agree") == ([NOT_LEARNT], [NOT_LEARNT])
    nl = frame.filter(pl.col("first") == "NLLast").row(0, named=True)
    assert (nl["first_in_distribution"], nl["second_in_distribution"]) == (0.60, 0.11)
    assert nl["first_drop"] == pytest.approx(0.2) and nl["pooled_verdict"] == SHOWN
    assert "not learnt in distribution (NLLast 0.60, NB 0.11 < 0.95)" in nl["note"]
    nb = frame.filter((pl.col("first") == "UF") & (pl.col("second") == "NB")).row(0, named=True)
    assert nb["verdict"] == NOT_LEARNT and "(NB 0.11 < 0.95)" in nb["note"]
    nf = frame.filter((pl.col("first") == "UF") & (pl.col("second") == "NF")).row(0, named=True)
    assert nf["family_size"] == 1 and nf["second_drop"] == pytest.approx(0.92)  # gated rows are out of Holm's m
    # A threshold the config lowers lets the pair count.
    lowered = from_scratch_finding(table, rules=VerdictRules(learnt=0.5))
    assert verdicts(lowered, "mirror pairs agree")[0] == [SHOWN]


def test_the_margin_moves_agreement_verdicts_and_each_row_says_where_it_flips():
    table = bins_pairs([mirror("UR", "UL", 0.99, 0.93, 0.02, 0.12)])
    assert verdicts(from_scratch_finding(table), "agree")[0] == [NOISE]
    assert verdicts(from_scratch_finding(table, rules=VerdictRules(margin=0.15)), "agree")[0] == [SHOWN]
    assert verdicts(from_scratch_finding(table, rules=VerdictRules(margin=0.01)), "agree")[0] == [CONTRADICTED]
    row = from_scratch_finding(table).filter(pl.col("kind") == "agree").row(0, named=True)
    assert row["shown_from_margin"] == pytest.approx(0.12) and row["contradicted_below_margin"] == pytest.approx(0.02)
    assert "shown from margin 0.12" in findings_markdown(from_scratch_finding(table))


def test_seed_counts_are_kept_and_a_one_run_table_counts_one_seed():
    row = from_scratch_finding(bins_pairs([{**above("UR", "NRLast", 0.99, 0.8, SIGNIFICANT), "seeds": 3,
                                             "seeds_first_above": 3, "seeds_second_above": 0, "pooled_p": 1e-9,
                                             "pooled_low": 0.1, "pooled_high": 0.2}])).row(0, named=True)
    assert (row["seeds"], row["seeds_first_above"], row["seeds_second_above"]) == (3, 3, 0)
    one_run = {**above("UR", "NRLast", 0.99, 0.8, SIGNIFICANT), "seeds": None}
    one = from_scratch_finding(bins_pairs([one_run])).row(0, named=True)
    assert (one["seeds"], one["seeds_first_above"], one["seeds_second_above"]) == (1, 1, 0)
    # one run says so, in the row's verdict and the claim's
    assert (one["verdict"], one["claim_verdict"]) == ("shown (one run)", "shown (one run)")
    two = from_scratch_finding(bins_pairs([{**one_run, "seeds": 2}])).row(0, named=True)
    assert (two["verdict"], two["claim_verdict"]) == ("shown (2 runs)", "shown (2 runs)")
    glance = findings_markdown(from_scratch_finding(bins_pairs([one_run]))).split("## The comparisons")[0]
    assert "**shown (one run)**" in glance


def test_from_scratch_contradicted():
    frame = from_scratch_finding(bins_pairs([
        above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT),
        above("UL", "NRLast", 0.60, 0.80, SIGNIFICANT),  # significantly the other way
        mirror("UR", "UL", 0.99, 0.60, 0.3, 0.48),  # wholly outside ±0.1
    ]))
    assert verdicts(frame, "expressible tasks above") == ([SHOWN, CONTRADICTED], [CONTRADICTED])
    assert verdicts(frame, "mirror pairs agree") == ([CONTRADICTED], [CONTRADICTED])


def test_from_scratch_not_distinguishable_from_noise():
    frame = from_scratch_finding(bins_pairs([
        above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT),
        above("UL", "NRLast", 0.85, 0.80, NOT_SIGNIFICANT),
        mirror("UR", "UL", 0.99, 0.95, -0.05, 0.13),  # straddles the margin
        mirror("UF", "UB", 0.99, 0.95, -0.15, -0.01, bin_="26-32", family="copying"),  # straddles -0.1
    ]))
    assert verdicts(frame, "expressible tasks above") == ([SHOWN, NOISE], [NOISE])
    assert verdicts(frame, "mirror pairs agree") == ([NOISE, NOISE], [NOISE])


def test_from_scratch_not_run():
    frame = from_scratch_finding(None)
    assert frame["verdict"].to_list() == [NOT_RUN, NOT_RUN] == frame["claim_verdict"].to_list()
    assert frame["note"].to_list() == ["the config turned the stage off"] * 2
    # The stage ran, but the config's tasks hold no expressible mirror pair (only an inexpressible one).
    frame = from_scratch_finding(bins_pairs([above("UR", "NRLast", 0.99, 0.8, SIGNIFICANT),
                                             mirror("NRLast", "NLLast", 0.8, 0.4, 0.3, 0.5)]))
    assert verdicts(frame, "mirror pairs agree") == ([NOT_RUN], [NOT_RUN])
    assert verdicts(frame, "expressible tasks above") == ([SHOWN], [SHOWN])


def test_every_positional_encoding_is_one_family_of_the_claim():
    table = pl.concat([bins_pairs([above("UR", "NRLast", 0.99, 0.8, SIGNIFICANT)], "ape"),
                       bins_pairs([above("UR", "NRLast", 0.5, 0.8, SIGNIFICANT)], "rope")])
    frame = from_scratch_finding(table).filter(pl.col("verdict") != NOT_RUN)
    assert dict(frame.select("system", "verdict").rows()) == {"ape": SHOWN, "rope": CONTRADICTED}
    assert set(frame["claim_verdict"]) == {CONTRADICTED} and set(frame["family_size"]) == {2}
    assert frame["p_holm"].to_list() == pytest.approx([0.002, 0.002])
    # The paper's Appendix B numbers on its longest bin, for the same PE.
    ape = frame.filter(pl.col("system") == "ape").row(0, named=True)
    assert (ape["paper_first"], ape["paper_second"]) == (0.99, 0.47) and "APE, 101-150" in ape["paper_setting"]


# -- 2: in context --------------------------------------------------------------------------------
def icl(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{"model": "smollm2", **r} for r in rows])


def test_in_context_per_measure():
    frame = in_context_finding(icl([
        pair("UF", "UB", 0.20, 0.01, SIGNIFICANT, measure="tf_symbol_accuracy"),
        pair("NF", "NB", 0.15, 0.05, SIGNIFICANT, measure="tf_symbol_accuracy"),
        pair("UF", "UB", 0.0, 0.0, 1.0, measure="accuracy"),
        pair("NF", "NB", 0.0, 0.0, 1.0, measure="accuracy"),
        pair("UR", "UL", 0.02, 0.20, SIGNIFICANT, measure="tf_symbol_accuracy"),
        pair("UR", "UL", 0.9, 0.3, SIGNIFICANT, measure="accuracy"),
        pair("NRFirst", "NLFirst", 0.9, 0.3, SIGNIFICANT, measure="accuracy"),
        pair("right-hand neighbour", "left-hand neighbour (UL)", 0.6, 0.4, SIGNIFICANT, measure="right_preference"),
    ]))
    claims = {(r["claim"].split()[0], r["measure"]): r["claim_verdict"]
              for r in frame.iter_rows(named=True)}
    # each claim one family over both measures: forward's noise on greedy makes the claim noise
    assert claims == {("forward", "teacher-forced symbol accuracy"): NOISE, ("forward", "greedy exact match"): NOISE,
                      ("right-hand", "teacher-forced symbol accuracy"): CONTRADICTED,
                      ("right-hand", "greedy exact match"): CONTRADICTED}
    assert set(frame.filter(pl.col("claim").str.starts_with("forward"))["family_size"]) == {4}
    assert frame.height == 7  # the right-preference row is not one of the finding's comparisons
    ur = frame.filter((pl.col("first") == "UR") & (pl.col("measure") == "greedy exact match")).row(0, named=True)
    assert (ur["paper_first"], ur["paper_second"]) == (1.0, 0.25) and "Llama-3.1-70B" in ur["paper_setting"]


def test_in_context_not_run():
    assert set(in_context_finding(None)["verdict"]) == {NOT_RUN}
    only_copying = in_context_finding(icl([pair("UF", "UB", 0.2, 0.01, SIGNIFICANT, measure="accuracy")]))
    assert verdicts(only_copying, "retrieval") == ([NOT_RUN], [NOT_RUN])


# -- 3: fine-tuning -------------------------------------------------------------------------------
def test_fine_tuning_each_outcome():
    table = bins_pairs([
        mirror("UR", "UL", 0.99, 0.97, -0.02, 0.06, bin_="21-40"),
        mirror("NRFirst", "NLFirst", 0.95, 0.11, 0.75, 0.9, bin_="21-40"),
        above("NLFirst", "NLLast", 0.97, 0.69, SIGNIFICANT, bin_="21-40"),
        above("UF", "NF", 0.9, 0.85, NOT_SIGNIFICANT, bin_="13-25", family="copying"),
        mirror("UR", "UL", 1.0, 0.97, 0.0, 0.07, bin_="3-20"),  # in distribution: not the finding's bin
    ], system="embedded", train_lengths={"retrieval": "3-20", "copying": "2-12"})
    frame = fine_tuning_finding(table)
    assert verdicts(frame, "agree out of distribution") == ([SHOWN, CONTRADICTED], [CONTRADICTED])
    assert verdicts(frame, "stay below") == ([SHOWN, NOISE], [NOISE])  # every bin in the claim's family
    nl = frame.filter(pl.col("first") == "NLFirst").row(0, named=True)
    assert (nl["paper_first"], nl["paper_second"]) == (0.97, 0.69)  # the authors' GPT-2, 51-100 pairs
    assert set(fine_tuning_finding(None)["verdict"]) == {NOT_RUN}


def test_fine_tuning_is_judged_on_every_bin_beyond_training_in_one_family_per_system():
    """Shown at 2x, contradicted at 4x: the claim is contradicted; the training bin is left out, and
    Holm runs over every bin's comparisons of the system (a protocol is an experiment of its own)."""
    def split(bin_, nr, nl, p_first, p_last, last=0.5):
        return [mirror("NRFirst", "NLFirst", nr, nl, -0.05, 0.05, bin_=bin_),
                above("NRFirst", "NRLast", nr, last, p_first, bin_=bin_),
                above("NLFirst", "NRLast", nl, last, p_last, bin_=bin_)]

    bins = split("3-20", 1.0, 1.0, 0.5, 0.5, last=0.99) + split("21-40", 0.95, 0.95, 0.001, 0.03) + \
        split("41-80", 0.2, 0.2, 0.001, 0.001)
    # without the column (an older table), every bin but the shortest; with it, the same here
    assert fine_tuning_finding(bins_pairs(bins, system="embedded")).equals(
        fine_tuning_finding(table := bins_pairs(bins, system="embedded", train_lengths={"retrieval": "3-20"})))
    frame = fine_tuning_finding(table)
    assert sorted(set(frame["length"])) == ["21-40", "41-80"]
    by_bin = {b: g for (b,), g in frame.group_by(["length"])}
    assert by_bin["21-40"]["verdict"].to_list() == [SHOWN] * 3
    above_41 = by_bin["41-80"].filter(pl.col("kind") == "above")
    assert above_41["verdict"].to_list() == [CONTRADICTED] * 2 and set(above_41["family_size"]) == {4}
    assert set(frame.filter(pl.col("kind") == "above")["claim_verdict"]) == {CONTRADICTED}
    # Holm over the four ps of both bins: 0.001 x 4, and 0.03 last (x 1)
    assert by_bin["21-40"].filter(pl.col("kind") == "above")["p_holm"].to_list() == pytest.approx([0.004, 0.03])
    assert frame["family"].n_unique() == 2 and set(frame["family"]) == {"3.1 embedded", "3.2 embedded"}
    glance = findings_markdown(frame).split("## The comparisons")[0]
    assert glance.count("| embedded |") == 2


# -- 4, 5: realistic tasks ------------------------------------------------------------------------
def realistic(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{"model": "smollm2", **r} for r in rows])


def test_ambiguity_each_outcome_and_the_papers_numbers():
    table = realistic([
        pair("unambiguous", "ambiguous", 0.87, -0.2, SIGNIFICANT, task="lorem", length="all", measure="greedy"),
        pair("tf_unambiguous", "tf_ambiguous", 0.40, 0.65, SIGNIFICANT, task="lorem", length="all",
             measure="teacher_forced"),
        pair("unambiguous", "ambiguous", 0.2, 0.9, SIGNIFICANT, task="lorem", length="60", measure="greedy"),
        pair("revert", "cherrypick", 0.5, 0.1, SIGNIFICANT, task="git", length="all", measure="exact"),
    ])
    frame = ambiguity_finding(table, {"smollm2": "HuggingFaceTB/SmolLM2-135M-Instruct"})
    assert dict(frame.select("measure", "verdict").rows()) == {"ambiguity score (greedy echo)": SHOWN,
                                                               "teacher-forced next-token accuracy": CONTRADICTED}
    greedy = frame.filter(pl.col("measure") == "ambiguity score (greedy echo)").row(0, named=True)
    assert (greedy["paper_first"], greedy["paper_second"]) == (0.999, 0.970)  # not this model's: named
    assert greedy["paper_setting"] == "meta-llama/Llama-3.1-8B, 500 tokens"
    own = ambiguity_finding(table, {"smollm2": "Qwen/Qwen2.5-7B-Instruct"}).row(0, named=True)
    assert (own["paper_second"], own["paper_setting"]) == (0.75, "this model, 2000 tokens")
    noise = ambiguity_finding(realistic([pair("unambiguous", "ambiguous", 0.8, 0.7, NOT_SIGNIFICANT, task="lorem",
                                              length="all", measure="greedy")]))
    assert noise["verdict"].to_list() == [NOISE]
    assert ambiguity_finding(None)["verdict"].to_list() == [NOT_RUN]


def test_git_each_outcome():
    table = realistic([
        pair("revert", "cherrypick", 0.5, 0.1, SIGNIFICANT, task="git", length="all", measure="exact"),
        pair("revert", "cherrypick", 0.01, 0.02, NOT_SIGNIFICANT, task="git", length="all", measure="tf_line_start"),
        pair("revert", "cherrypick", 0.4, 0.5, SIGNIFICANT, task="git", length="all", measure="line_share"),
        pair("revert", "cherrypick", 0.1, 0.5, SIGNIFICANT, task="git", length="3", measure="exact"),
    ])
    frame = git_finding(table)
    assert dict(frame.select("measure", "verdict").rows()) == {"exact match": SHOWN, "teacher-forced line starts": NOISE}
    against = git_finding(realistic([pair("revert", "cherrypick", 0.1, 0.5, SIGNIFICANT, task="git", length="all",
                                          measure="exact")]))
    assert against["claim_verdict"].to_list() == [CONTRADICTED]
    assert git_finding(None)["verdict"].to_list() == [NOT_RUN]
    only_lorem = git_finding(realistic([pair("unambiguous", "ambiguous", 0.8, 0.7, SIGNIFICANT, task="lorem",
                                             length="all", measure="greedy")]))
    assert only_lorem["verdict"].to_list() == [NOT_RUN] and only_lorem["note"].to_list() == ["no git results"]


# -- 6: mechanism ---------------------------------------------------------------------------------
def mechanism(model, heads, loss) -> list[dict]:
    return [pair("induction head 2.3", "anti-induction head 2.2", *heads, model=model, measure="best head score",
                 test="paired permutation"),
            pair("remove induction, forward copies", "remove anti-induction, backward copies", *loss, model=model,
                 measure="loss change", test="paired permutation"),
            pair("remove induction, forward copies", "unpatched, forward copies", 3.0, 2.0, SIGNIFICANT, model=model,
                 measure="loss")]


def test_mechanism_each_outcome_for_pretrained_models_only():
    table = pl.DataFrame(mechanism("model-embedded", (0.27, 0.05, SIGNIFICANT), (0.90, 0.04, SIGNIFICANT))
                         + mechanism("model-smollm2", (0.05, 0.3, SIGNIFICANT), (0.10, 0.08, NOT_SIGNIFICANT))
                         + mechanism("scratch-UB-ape-seed0", (0.1, 0.97, SIGNIFICANT), (0.0, 6.8, SIGNIFICANT)))
    frame = mechanism_finding(table)
    assert frame.select("system", "measure", "verdict").rows() == [
        ("embedded", "mean attention", SHOWN), ("smollm2", "mean attention", CONTRADICTED),
        ("embedded", "loss change", SHOWN), ("smollm2", "loss change", NOISE)]
    trained_only = mechanism_finding(pl.DataFrame(mechanism("scratch-UF-ape-seed0", (0.9, 0.1, SIGNIFICANT),
                                                            (7.0, 0.0, SIGNIFICANT))))
    assert trained_only["verdict"].to_list() == [NOT_RUN, NOT_RUN]
    assert set(trained_only["note"]) == {"no pretrained model in mechanism.models"}
    assert mechanism_finding(None)["verdict"].to_list() == [NOT_RUN, NOT_RUN]


# -- a claim's comparisons are one family ----------------------------------------------------------
def twelve(p_first: float, p_rest: float, against: bool) -> pl.DataFrame:
    """Twelve "above" comparisons of one PE on the longest bin: the first at p_first (the other way
    when against), eleven more in the expected direction at p_rest."""
    first = above("UR", "NRLast", 0.6, 0.8, p_first) if against else above("UR", "NRLast", 0.9, 0.8, p_first)
    return bins_pairs([first] + [above("UL", "NRLast", 0.9, 0.8, p_rest)] * 11)


def test_one_of_twelve_at_p_003_the_other_way_is_noise_not_a_contradiction():
    frame = from_scratch_finding(twelve(0.03, NOT_SIGNIFICANT, against=True))
    stray = frame.filter(pl.col("first") == "UR").row(0, named=True)
    assert stray["p_holm"] == pytest.approx(0.36) and stray["verdict"] == NOISE  # uncorrected, contradicted
    assert verdicts(frame, "expressible tasks above") == ([NOISE] * 12, [NOISE])
    assert set(frame.filter(pl.col("verdict") != NOT_RUN)["family_size"]) == {12}
    assert set(frame.filter(pl.col("verdict") != NOT_RUN)["family"]) == {"1.1"}
    assert "Holm p = 0.36 of 12" in findings_markdown(frame)


def test_twelve_at_p_0001_are_shown_and_one_at_1e4_the_other_way_contradicts():
    frame = from_scratch_finding(twelve(SIGNIFICANT, SIGNIFICANT, against=False))
    assert verdicts(frame, "expressible tasks above") == ([SHOWN] * 12, [SHOWN])
    assert frame.filter(pl.col("verdict") == SHOWN)["p_holm"].to_list() == pytest.approx([0.012] * 12)
    frame = from_scratch_finding(twelve(1e-4, SIGNIFICANT, against=True))
    assert verdicts(frame, "expressible tasks above") == ([CONTRADICTED] + [SHOWN] * 11, [CONTRADICTED])
    assert frame.filter(pl.col("first") == "UR")["p_holm"].to_list() == pytest.approx([0.0012])


def test_an_agreement_is_contradicted_only_when_its_family_wise_interval_lies_outside_the_margin():
    # Alone, [0.11, 0.19] lies outside ±0.1: contradicted.
    alone = from_scratch_finding(bins_pairs([mirror("UR", "UL", 0.99, 0.84, 0.11, 0.19)]))
    assert verdicts(alone, "mirror pairs agree") == ([CONTRADICTED], [CONTRADICTED])
    # One of twelve: widened 1.46 times about +0.15 it reaches 0.09, inside the margin: noise.
    fine = [mirror("UF", "UB", 0.99, 0.98, -0.02, 0.04, bin_="26-32", family="copying")] * 11
    frame = from_scratch_finding(bins_pairs([mirror("UR", "UL", 0.99, 0.84, 0.11, 0.19)] + fine))
    stray = frame.filter(pl.col("first") == "UR").row(0, named=True)
    assert stray["verdict"] == NOISE and stray["family_low"] == pytest.approx(0.15 - 0.04 * 1.4619, abs=1e-4)
    assert verdicts(frame, "mirror pairs agree") == ([NOISE] + [SHOWN] * 11, [NOISE])
    assert "family-wise [0.09, 0.21] (12 pairs)" in findings_markdown(frame)
    # Far outside, it stays contradicted among twelve.
    frame = from_scratch_finding(bins_pairs([mirror("UR", "UL", 0.99, 0.60, 0.3, 0.48)] + fine))
    assert verdicts(frame, "mirror pairs agree") == ([CONTRADICTED] + [SHOWN] * 11, [CONTRADICTED])


def test_a_claim_is_one_family_over_its_models_and_a_permutation_floor_prints_as_a_bound():
    floor = 1 / 10001
    table = pl.DataFrame(mechanism("model-embedded", (0.27, 0.05, floor), (0.90, 0.04, SIGNIFICANT))
                         + mechanism("model-smollm2", (0.27, 0.05, floor), (0.90, 0.04, SIGNIFICANT)))
    frame = mechanism_finding(table)
    assert frame["family_size"].to_list() == [2] * 4 and frame["family"].n_unique() == 2
    assert frame["p_holm"].to_list() == pytest.approx([2 * p for p in frame["p"].to_list()])
    details = findings_markdown(frame).split("## The comparisons")[1]
    assert "paired permutation, p < 1e-4" in details and "p = 0.0001" not in details
    assert "Holm-adjusted p" in details and "Bonferroni" in details  # the legend states the correction


# -- every finding -------------------------------------------------------------------------------
@pytest.mark.parametrize("finding", [from_scratch_finding, in_context_finding, fine_tuning_finding,
                                     ambiguity_finding, git_finding, mechanism_finding, corpus_finding])
def test_a_stage_that_compared_nothing_is_not_run(finding):
    """A stage whose tasks hold no pair writes a pairs table without rows (from the in-context,
    realistic and mechanism stages, without columns either)."""
    for empty in (pl.DataFrame(), pl.DataFrame(schema={"model": pl.String, "measure": pl.String})):
        frame = finding(empty)
        assert set(frame["verdict"]) == {NOT_RUN} and set(frame["note"]) == {NO_PAIRS}
    assert set(finding(None)["note"]) == {STAGE_OFF}


# -- the whole table ------------------------------------------------------------------------------
def test_the_table_has_every_finding_in_order_and_its_markdown_opens_with_the_verdicts():
    frame = findings_table({"scratch_pairs": bins_pairs([above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT),
                                                         mirror("UR", "UL", 0.99, 0.96, -0.01, 0.08)])})
    assert frame["finding"].unique(maintain_order=True).to_list() == [1, 2, 3, 4, 5, 6, 7]
    assert set(frame.filter(pl.col("finding") > 1)["verdict"]) == {NOT_RUN}
    assert set(frame["verdict"]) <= {SHOWN, CONTRADICTED, NOISE, NOT_RUN}
    markdown = findings_markdown(frame, {"config_hash": "abc", "code_version": "0.1.0"})
    assert markdown.startswith("# Did the paper's findings reproduce here?")
    glance, details = markdown.split("## The comparisons")
    assert glance.count("| **shown** |") == 2 and glance.count("| **not run** |") == 13
    assert "UR: 0.99 [0.94, 1.04]" in details and "McNemar exact, p = 0.001, 100 pairs" in details
    assert "0.99 vs 0.47 (App. B, APE, 101-150)" in details and "config hash abc" in markdown


@pytest.mark.parametrize("verdict_column", ["verdict", "claim_verdict"])
def test_no_verdict_is_missing(verdict_column):
    frame = findings_table({})
    assert frame[verdict_column].null_count() == 0 and set(frame[verdict_column]) == {NOT_RUN}


# -- the command line -----------------------------------------------------------------------------
def test_the_command_prints_a_finished_runs_findings(tmp_path, capsys):
    from types import SimpleNamespace

    from lengthgen.cli import main
    from lengthgen.records.provenance import Provenance
    from lengthgen.results.findings_markdown import write_findings

    bins_pairs([above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT)]).write_parquet(tmp_path / "scratch_pairs.parquet")
    outputs = SimpleNamespace(**{kind: tmp_path / f"findings.{ext}"
                                 for kind, ext in (("parquet", "parquet"), ("markdown", "md"), ("html", "html"),
                                                   ("csv", "csv"))})
    write_findings({"scratch_pairs": tmp_path / "scratch_pairs.parquet"}, None, Provenance({"tables": ["scratch_pairs"]}),
                   {"margin": 0.1, "learnt": 0.95}, outputs)
    assert main(["findings", str(outputs.parquet)]) == 0
    printed = capsys.readouterr().out
    assert printed == outputs.markdown.read_text()  # what the rule wrote, verdicts first
    assert printed.startswith("# Did the paper's findings reproduce here?") and "| **shown** |" in printed
    assert "expressible tasks above" in pl.read_csv(outputs.csv)["claim"][0]
    page = outputs.html.read_text()  # what the report shows: the markdown's tables as HTML tables
    assert page.startswith("<!doctype html>") and "<h1>Did the paper's findings reproduce here?</h1>" in page
    assert "<th>verdict</th>" in page and "<td><strong>shown</strong></td>" in page


def test_the_command_says_how_to_make_a_missing_table(tmp_path, capsys):
    from lengthgen.cli import main

    assert main(["findings", str(tmp_path / "findings.parquet")]) == 2
    error = capsys.readouterr().err
    assert error.strip().splitlines() == [
        f"lengthgen: {tmp_path / 'findings.parquet'} not found: run `snakemake results/tables/findings.md` first"]


# -- the registry: one record per finding ---------------------------------------------------------
WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"


def tables_the_workflow_makes() -> dict[str, str]:
    """The planning layer's tables: table name -> the rule that writes it."""
    from lengthgen.plan.tables import TABLE_RULES

    return {name: rule for name, (rule, _, _) in TABLE_RULES.items()}


def test_every_record_reads_a_table_the_workflow_makes_and_the_workflow_reads_the_records():
    made = tables_the_workflow_makes()
    rules = "".join(path.read_text() for path in (WORKFLOW / "rules").glob("*.smk"))
    for finding in FINDINGS.values():
        assert finding.source in made, f"finding {finding.number} reads {finding.source}, which no rule makes"
        assert f"\nrule {made[finding.source]}:\n" in rules
    assert findings_sources() == ("scratch_pairs", "icl_pairs", "finetune_pairs", "realistic_pairs", "mechanism_pairs",
                                  "corpus_pairs")
    # the findings rule's inputs come from the records, never from a list of its own
    import yaml

    from lengthgen.config import validate_config
    from lengthgen.plan.tables import findings_inputs

    default = validate_config(yaml.safe_load((WORKFLOW.parent / "config.yaml").read_text()), check_availability=False,
                              search=(".", str(WORKFLOW.parent)))
    assert tuple(findings_inputs(default)) == findings_sources()


def test_every_finding_number_has_its_claims_and_its_function():
    assert sorted(FINDINGS) == list(range(1, len(FINDINGS) + 1))
    for number, finding in FINDINGS.items():
        assert isinstance(finding, Finding) and finding.number == number and finding.section and finding.name
        assert finding.claims and len(set(finding.claims)) == len(finding.claims)
        off = finding.judge(None, None)  # every judge takes (pairs, model_paths)
        assert off["claim"].to_list() == list(finding.claims) and set(off["verdict"]) == {NOT_RUN}
        assert set(off["finding"]) == {number} and set(off["section"]) == {finding.section}
        assert set(off["source"]) == {finding.source}
    assert findings_table({})["finding"].unique(maintain_order=True).to_list() == sorted(FINDINGS)


NEW_CLAIM = "expressible tasks above the inexpressible ones of their family on every bin"


def new_finding(pairs, model_paths=None, rules=None):
    """An eighth finding, written as the seven are: its rows from its source table."""
    if (nothing := nothing_to_compare(FINDINGS[8], pairs)) is not None:
        return nothing
    rows = [comparison_row(FINDINGS[8], NEW_CLAIM, ABOVE, pair, system=pair["system"],
                           measure="teacher-forced exact match", length=pair["bin"])
            for pair in pairs.filter(pl.col("comparison") == "expressible above inexpressible").iter_rows(named=True)]
    return finding_frame(FINDINGS[8], rows, "the config's tasks hold no such pair")


def test_a_new_finding_is_one_record_plus_its_function(monkeypatch):
    monkeypatch.setitem(FINDINGS, 8, Finding(8, "9.9", "a new finding", "new_pairs", (NEW_CLAIM,), new_finding,
                                             per_system=True))
    assert findings_sources()[-1] == "new_pairs"  # the findings rule reads it where it is made
    table = bins_pairs([above("UR", "NRLast", 0.99, 0.80, SIGNIFICANT),
                        above("UR", "NRLast", 0.60, 0.80, SIGNIFICANT, bin_="1-15")])
    frame = findings_table({"new_pairs": table})
    assert frame["finding"].unique(maintain_order=True).to_list() == [1, 2, 3, 4, 5, 6, 7, 8]
    new = frame.filter(pl.col("finding") == 8)
    assert new.select("length", "verdict", "claim_verdict").rows() == [("31-45", SHOWN, CONTRADICTED),
                                                                       ("1-15", CONTRADICTED, CONTRADICTED)]
    assert set(new["section"]) == {"9.9"} and set(new["source"]) == {"new_pairs"}
    assert set(new["family"]) == {"8.1 ape"}  # per system: its lengths in one family
    glance = findings_markdown(frame).split("## The comparisons")[0]
    assert "| 8. a new finding (9.9) | " + NEW_CLAIM + " | ape | **contradicted** |" in glance
    assert set(findings_table({})["finding"].to_list()) == set(range(1, 9))  # its stage off: not run


def test_a_new_finding_is_one_record_and_its_judge_seen_through_the_plan_and_the_table(monkeypatch):
    """Adding a finding: one `Finding` in FINDINGS and its function. The findings rule's inputs
    (the planner), the table and the markdown follow from the record, with nothing else edited."""
    import yaml

    from lengthgen.config import validate_config
    from lengthgen.plan.tables import findings_inputs

    claim = "right-hand retrieval above its left mirror, from scratch"

    def toy_judge(pairs, model_paths=None, rules=None):
        finding = FINDINGS[8]
        if (nothing := nothing_to_compare(finding, pairs)) is not None:
            return nothing
        rows = [comparison_row(finding, claim, ABOVE, row, system=row["system"], measure="teacher-forced exact match",
                               length=row["bin"]) for row in pairs.iter_rows(named=True) if row["first"] == "UR"]
        return finding_frame(finding, rows, "no UR pairs", rules or VerdictRules())

    toy = Finding(8, "toy", "a toy finding", "scratch_pairs", (claim,), toy_judge)
    monkeypatch.setitem(FINDINGS, 8, toy)
    default = validate_config(yaml.safe_load((WORKFLOW.parent / "config.yaml").read_text()), check_availability=False,
                              search=(".", str(WORKFLOW.parent)))
    assert "scratch_pairs" in findings_inputs(default) and findings_sources()[0] == "scratch_pairs"
    frame = findings_table({"scratch_pairs": bins_pairs([above("UR", "UL", 0.99, 0.50, 1e-6)])})
    toy_rows = frame.filter(pl.col("finding") == 8)
    assert toy_rows["claim"].to_list() == [claim] and toy_rows["verdict"].to_list() == [SHOWN]
    assert frame["finding"].unique(maintain_order=True).to_list() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "a toy finding" in findings_markdown(frame, {"config_hash": "abc", "code_version": "0.1.0"})
    assert set(findings_table({}).filter(pl.col("finding") == 8)["verdict"]) == {NOT_RUN}


def test_every_noise_row_says_what_deciding_it_would_take():
    """Runs per side for 80% power at Holm's first step over the claim (LEVEL / m), from the measured
    difference and spread; for an agreement the distance to the margin (inside: the 95% interval must
    fit, outside: the family-wise one must clear it); the smallest p a permutation test reaches now."""
    paired = {"kind": ABOVE, "test": "t over 3 seeds", "seeds": 3, "difference": 0.1, "spread": 0.1}
    assert power_to_decide(paired, 4) == {"runs_needed": runs_for_power(0.1, 0.1, False, alpha=0.05 / 4),
                                          "runs_needed_bound": False, "smallest_p": 0.25, "spread": 0.1}
    inside = {**paired, "kind": AGREE, "difference": -0.04}
    assert power_to_decide(inside, 6, margin=0.1)["runs_needed"] == runs_for_power(0.06, 0.1, False, alpha=0.05)
    outside = {**paired, "kind": AGREE, "difference": 0.25}
    assert power_to_decide(outside, 6, margin=0.1)["runs_needed"] == runs_for_power(0.15, 0.1, False, alpha=0.05 / 6)
    arms = {"kind": ABOVE, "test": "Welch t over 2 and 2 pretraining seeds", "seeds": 2, "difference": 0.3,
            "spread": 0.1, "first_per_seed": [0.5, 0.6], "second_per_seed": [0.2, 0.3]}
    decided = power_to_decide(arms, 2)
    assert decided["runs_needed"] == runs_for_power(0.3, 0.1, True, alpha=0.025) == 5
    assert decided["smallest_p"] == pytest.approx(1 / 3)
    one_run = {"kind": ABOVE, "test": "McNemar exact", "seeds": 1, "_runs_measured": True, "difference": 0.05,
               "difference_low": -0.01, "difference_high": 0.11}
    assert power_to_decide(one_run, 1)["runs_needed_bound"] is True and power_to_decide(one_run, 1)["smallest_p"] == 1.0
    examples = {"kind": ABOVE, "test": "McNemar exact", "seeds": 1, "pairs": 100, "p": 0.2, "difference": 0.05}
    assert power_to_decide(examples, 1) == {"examples_needed": examples_for_power(100, 0.2)}
    frame = finding_frame(FINDINGS[1], [comparison_row(FINDINGS[1], FINDINGS[1].claims[0], ABOVE, {
        **pair("UR", "NRLast", 0.7, 0.6, 0.3, 0.0, 0.2, test="t over 3 seeds", spread=0.1)},
        system="ape", measure="teacher_forced", length="31-45")], "")
    assert base_verdict(frame["verdict"][0]) == NOISE and frame["runs_needed"][0] == runs_for_power(0.1, 0.1, False)
