"""The corpus experiment (finding 7): its pairs table from hand-made heads, in-context and
fine-tuning files shaped as those stages write them, with exact differences; the finding's
verdicts (shown, contradicted, noise, not run) from hand-made pairs tables; the pretraining figure."""

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from matplotlib.colors import to_hex

from lengthgen.corpora.pairs import CONTROL, FORWARD_TASKS, GAP, HEAD_START, IN_CONTEXT, corpus_pairs, write_corpus_pairs
from lengthgen.icl.table import pair_tests
from lengthgen.records.files import read_frame
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import read_provenance
from lengthgen.results import figures
from lengthgen.results.findings import (
    CORPUS_CONTROL,
    CORPUS_GAP,
    CORPUS_HEAD_START,
    CORPUS_IN_CONTEXT,
    FINDINGS,
    corpus_finding,
    findings_table,
)
from lengthgen.results.findings_markdown import findings_markdown
from lengthgen.results.verdicts import CONTRADICTED, NO_PAIRS, NOISE, NOT_RUN, SHOWN, STAGE_OFF
from lengthgen.stats import fisher_exact

NATURAL, BALANCED, REVERSED = "corpus_natural", "corpus_balanced", "corpus_reversed"
EMBEDDED = Path(__file__).resolve().parents[1] / "resources" / "embedded" / "gpt2.provenance.json"


# -- hand-made stage outputs ----------------------------------------------------------------------
def head_rows(model: str, heads: dict, lengths=(5,), seed=0) -> list[dict]:
    """Rows of a mechanism heads file (analyse's columns, the script's `model`): heads maps
    (direction, layer, head) -> (induction per prompt, anti-induction per prompt)."""
    rows = []
    for length in lengths:
        for (direction, layer, head), (induction, anti) in heads.items():
            rows.append({"direction": direction, "length": length, "seed": seed, "layer": layer, "head": head,
                         "previous_token": 0.0, "duplicate": 0.0, "induction": sum(induction) / len(induction),
                         "anti_induction": sum(anti) / len(anti), "before_occurrence": 0.0,
                         "induction_per_prompt": induction, "anti_induction_per_prompt": anti, "copy_accuracy": 0.5,
                         "model": model})
    return rows


ZERO = [0.0] * 6
NATURAL_HEADS = {  # best induction 1.1 (gap 0.6 on every prompt against anti-induction 0.0)
    ("forward", 0, 0): ([0.2] * 6, ZERO), ("forward", 1, 1): ([0.9, 0.8] * 3, ZERO),
    ("backward", 0, 0): (ZERO, [0.3, 0.2] * 3),
    ("backward", 1, 1): ([0.99] * 6, [0.1] * 6),  # induction on backward prompts: not the induction head
}
BALANCED_HEADS = {  # gap 0.3, 0.1, ... (mean 0.2): 1.0 against 0.1
    ("forward", 1, 0): ([0.7, 0.6] * 3, ZERO), ("forward", 0, 1): ([0.3] * 6, ZERO),
    ("backward", 0, 1): (ZERO, [0.4, 0.5] * 3), ("backward", 1, 0): (ZERO, [0.2] * 6),
}
REVERSED_HEADS = {("forward", 0, 1): ([0.8] * 3 + [0.6] * 3, ZERO), ("backward", 0, 1): (ZERO, [0.1] * 6)}


def write_heads(tmp_path) -> list[Path]:
    files = {"natural": head_rows(f"model-{NATURAL}", NATURAL_HEADS),
             # a second length the natural model was not asked: its prompts pair with nothing
             "balanced": head_rows(f"model-{BALANCED}", BALANCED_HEADS, lengths=(5, 7)),
             "reversed": head_rows(f"model-{REVERSED}", REVERSED_HEADS),
             "other": head_rows("model-smollm2", REVERSED_HEADS)}
    paths = []
    for name, rows in files.items():
        pl.DataFrame(rows).write_parquet(path := tmp_path / f"heads-{name}.parquet")
        paths.append(path)
    return paths


def example_rows(model, task, tf, correct, seed=0) -> list[dict]:
    """Rows of an in-context prediction file (with columns the pairs do not read)."""
    return [{"model": model, "task": task, "bin": "10", "seed": seed, "variant": "bare", "example": i,
             "correct": bool(c), "correct_strict": bool(c), "tf_symbol_accuracy": t, "tf_exact": bool(c),
             "target_logprob": -1.0, "right_neighbour_error": None, "p_right": None, "p_left": None,
             "batch_size": 4} for i, (t, c) in enumerate(zip(tf, correct))]


def write_icl(tmp_path) -> list[Path]:
    rows = (example_rows(NATURAL, "UB", [0.2] * 10, [0] * 10) + example_rows(NATURAL, "NB", [0.1] * 10, [0] * 10)
            + example_rows(BALANCED, "UB", [0.6] * 10, [1] * 5 + [0] * 5)
            + example_rows(BALANCED, "UB", [1.0] * 10, [1] * 10, seed=1)  # natural has no seed 1: unpaired
            + example_rows(BALANCED, "NB", [0.1] * 10, [0] * 10)
            + example_rows(REVERSED, "UF", [0.9] * 10, [1] * 10) + example_rows(REVERSED, "UB", [0.3] * 10, [0] * 10))
    frame = pl.DataFrame(rows, schema_overrides={"right_neighbour_error": pl.Boolean, "p_right": pl.Float64,
                                                 "p_left": pl.Float64})
    paths = []
    for model, part in frame.group_by("model", maintain_order=True):
        part.write_parquet(path := tmp_path / f"icl-{model[0]}.parquet")
        paths.append(path)
    return paths


def eval_rows(system, task, length_bin, outcomes, length=10, greedy=True) -> list[dict]:
    """Rows of a fine-tuning evaluation file (the script adds system, task and seed)."""
    return [{"bin": length_bin, "length": length, "example": i, "teacher_forced": bool(o),
             "greedy": bool(o) if greedy else None, "system": system, "task": task, "seed": 0}
            for i, o in enumerate(outcomes)]


def write_finetune(tmp_path) -> list[Path]:
    paths = []
    for system, ub, ul_lengths in ((NATURAL, [1] * 5 + [0] * 15, 30), (BALANCED, [1] * 17 + [0] * 3, 31)):
        ul = [1] * 5 + [0] * 15 if system == NATURAL else [1] * 15 + [0] * 5
        files = {"UB": eval_rows(system, "UB", "2-12", [1] * 20) + eval_rows(system, "UB", "13-25", ub, 20),
                 # other input lengths in 21-40: not the same examples, compared unpaired
                 "UL": eval_rows(system, "UL", "3-20", [1] * 20) + eval_rows(system, "UL", "21-40", ul, ul_lengths),
                 "UF": eval_rows(system, "UF", "2-12", [1] * 20, greedy=False)}
        for task, rows in files.items():
            pl.DataFrame(rows, schema_overrides={"greedy": pl.Boolean}).write_parquet(
                path := tmp_path / f"eval-{system}-{task}.parquet")
            paths.append(path)
    return paths


@pytest.fixture
def stages(tmp_path):
    return write_heads(tmp_path), write_icl(tmp_path), write_finetune(tmp_path)


def row(pairs: pl.DataFrame, comparison: str, measure: str, **keys) -> dict:
    found = pairs.filter((pl.col("comparison") == comparison) & (pl.col("measure") == measure),
                         *(pl.col(k) == v for k, v in keys.items()))
    assert found.height == 1, found
    return found.row(0, named=True)


# -- corpus_pairs -------------------------------------------------------------------------------
def test_the_gap_is_compared_prompt_by_prompt_between_the_best_heads(stages):
    pairs = corpus_pairs(*stages)
    gap = row(pairs, GAP, "induction gap")
    assert gap["model"] == f"{NATURAL} vs {BALANCED}" and gap["bin"] == "all"
    assert gap["first"] == f"{NATURAL}: induction head 1.1 minus anti-induction head 0.0"
    assert gap["second"] == f"{BALANCED}: induction head 1.0 minus anti-induction head 0.1"
    assert gap["pairs"] == 6  # the balanced model's length 7 pairs with nothing
    assert gap["first_value"] == pytest.approx(0.6) and gap["second_value"] == pytest.approx(0.2)
    assert gap["difference"] == pytest.approx(0.4) and gap["test"] == "paired permutation"
    assert gap["p"] == pytest.approx(2 / 2 ** 6) and gap["verdict"].startswith(f"{NATURAL}'s gap wider")
    control = row(pairs, CONTROL, "best head score")
    assert (control["model"], control["first"], control["second"]) == (REVERSED, "induction head 0.1",
                                                                        "anti-induction head 0.1")
    assert control["difference"] == pytest.approx(0.6) and control["p"] == pytest.approx(2 / 2 ** 6)
    assert "smollm2" not in "".join(pairs["model"])


def test_backward_copy_in_context_is_compared_on_the_same_examples(stages):
    pairs = corpus_pairs(*stages)
    tf = row(pairs, IN_CONTEXT, "tf_symbol_accuracy", task="UB")
    assert (tf["model"], tf["first"], tf["second"]) == (f"{BALANCED} vs {NATURAL}", f"UB on {BALANCED}",
                                                        f"UB on {NATURAL}")
    assert tf["pairs"] == 10  # the balanced model's seed 1 pairs with nothing
    assert (tf["first_value"], tf["second_value"]) == pytest.approx((0.6, 0.2))
    assert tf["difference"] == pytest.approx(0.4) and tf["p"] == pytest.approx(2 / 2 ** 10)
    greedy = row(pairs, IN_CONTEXT, "accuracy", task="UB")
    assert greedy["test"] == "McNemar exact" and greedy["difference"] == pytest.approx(0.5)
    assert greedy["p"] == pytest.approx(2 / 2 ** 5)  # 5 discordant examples, all one way
    same = row(pairs, IN_CONTEXT, "tf_symbol_accuracy", task="NB")
    assert same["difference"] == pytest.approx(0.0) and same["p"] == 1.0


def test_the_reversed_models_forward_and_backward_copies_are_the_in_context_stages_own_pair(stages):
    pairs = corpus_pairs(*stages)
    ours = row(pairs, CONTROL, "tf_symbol_accuracy")
    assert (ours["model"], ours["first"], ours["second"], ours["task"]) == (REVERSED, "UF", "UB", None)
    assert ours["difference"] == pytest.approx(0.6) and ours["pairs"] == 10
    examples = pl.concat([read_frame(p) for p in stages[1]]).filter(pl.col("model") == REVERSED)
    theirs = pair_tests(examples).filter(pl.col("measure") == "tf_symbol_accuracy").row(0, named=True)
    assert {k: ours[k] for k in theirs} == theirs


def test_fine_tuned_models_are_compared_per_test_bin(stages):
    pairs = corpus_pairs(*stages)
    ub = row(pairs, HEAD_START, "teacher_forced", task="UB", bin="13-25")
    assert (ub["first"], ub["second"], ub["beyond_training"]) == (f"UB on {BALANCED}", f"UB on {NATURAL}", True)
    assert ub["test"] == "McNemar exact" and ub["pairs"] == 20
    assert ub["difference"] == pytest.approx(0.6) and ub["p"] == pytest.approx(2 / 2 ** 12)
    inside = row(pairs, HEAD_START, "teacher_forced", task="UB", bin="2-12")
    assert inside["beyond_training"] is False and inside["difference"] == 0.0 and inside["p"] == 1.0
    ul = row(pairs, HEAD_START, "teacher_forced", task="UL", bin="21-40")
    assert ul["test"] == "Fisher exact" and ul["pairs"] is None and ul["first_examples"] == 20
    assert ul["difference"] == pytest.approx(0.5) and ul["p"] == pytest.approx(fisher_exact(15, 20, 5, 20))
    assert ul["difference_low"] < 0.5 < ul["difference_high"]
    forward = pairs.filter(pl.col("comparison") == FORWARD_TASKS)
    assert forward.select("task", "bin", "measure").rows() == [("UF", "2-12", "teacher_forced")]  # greedy not scored
    assert pairs.filter(pl.col("comparison") == HEAD_START).height == 8  # 2 tasks x 2 bins x 2 measures


def test_a_stage_off_gives_the_rows_of_the_others(stages, tmp_path):
    heads, icl, finetune = stages
    assert corpus_pairs(None, [], None).is_empty()
    assert set(corpus_pairs(None, icl, None)["comparison"]) == {IN_CONTEXT, CONTROL}
    assert set(corpus_pairs(heads, None, None)["comparison"]) == {GAP, CONTROL}
    assert set(corpus_pairs(None, None, finetune)["comparison"]) == {HEAD_START, FORWARD_TASKS}
    # Without the balanced model only the reversed control is left.
    assert set(corpus_pairs([heads[0], heads[2]], None, None)["comparison"]) == {CONTROL}
    outputs = SimpleNamespace(parquet=tmp_path / "corpus_pairs.parquet", markdown=tmp_path / "corpus_pairs.md")
    roles = {"natural": "corpus_natural", "balanced": "corpus_balanced", "reversed": "corpus_reversed"}
    write_corpus_pairs(heads, icl, finetune, roles, Provenance({"corpora": ["natural", "balanced"]}), outputs)
    assert read_frame(outputs.parquet).height == corpus_pairs(*stages).height
    assert read_provenance(outputs.parquet)["config"] == {"corpora": ["natural", "balanced"]}
    assert outputs.markdown.read_text().startswith("# Corpora: natural, balanced and reversed pretraining")


# -- finding 7 ----------------------------------------------------------------------------------
def pair(comparison, measure, difference, p, model=f"{BALANCED} vs {NATURAL}", bin_="all", task=None) -> dict:
    """One row of a corpus_pairs table."""
    return {"comparison": comparison, "model": model, "first": f"{task} on a", "second": f"{task} on b",
            "measure": measure, "task": task, "bin": bin_, "test": "paired permutation", "pairs": 40,
            "first_value": 0.5 + difference, "first_low": 0.45 + difference, "first_high": 0.55 + difference,
            "second_value": 0.5, "second_low": 0.45, "second_high": 0.55, "difference": difference, "p": p,
            "significant": p < 0.05, "verdict": "(the table's own line)"}


def claims(frame: pl.DataFrame) -> dict[str, list[str]]:
    """Each claim's verdicts, one per family, in order."""
    return {claim: rows["claim_verdict"].to_list() for (claim,), rows in
            frame.unique(["claim", "system", "measure", "length"], maintain_order=True)
            .group_by("claim", maintain_order=True)}


SHOWING = [
    pair(GAP, "induction gap", 0.4, 0.001, model=f"{NATURAL} vs {BALANCED}"),
    pair(IN_CONTEXT, "tf_symbol_accuracy", 0.3, 0.001, task="UB"),
    pair(IN_CONTEXT, "tf_symbol_accuracy", 0.2, 0.002, task="NB"),
    pair(CONTROL, "best head score", 0.5, 0.001, model=REVERSED),
    pair(CONTROL, "tf_symbol_accuracy", 0.4, 0.001, model=REVERSED),
    pair(HEAD_START, "teacher_forced", 0.3, 0.001, bin_="13-25", task="UB"),
    pair(HEAD_START, "teacher_forced", 0.2, 0.01, bin_="21-40", task="UL"),
    # Not judged: greedy rows and the forward tasks, here all significantly the other way.
    pair(IN_CONTEXT, "accuracy", -0.3, 0.001, task="UB"),
    pair(HEAD_START, "greedy", -0.3, 0.001, bin_="13-25", task="UB"),
    pair(FORWARD_TASKS, "teacher_forced", -0.3, 0.001, bin_="13-25", task="UF"),
]


def test_the_corpus_finding_shown():
    frame = corpus_finding(pl.DataFrame(SHOWING))
    assert claims(frame) == {CORPUS_GAP: [SHOWN], CORPUS_IN_CONTEXT: [SHOWN], CORPUS_CONTROL: [SHOWN, SHOWN],
                             CORPUS_HEAD_START: [SHOWN, SHOWN]}
    assert frame.height == 7 and set(frame["verdict"]) == {SHOWN}
    assert set(frame["finding"]) == {7} and set(frame["section"]) == {"beyond the paper"}
    assert set(frame["source"]) == {"corpus_pairs"}
    assert frame["paper_first"].null_count() == frame.height and frame["paper_setting"].null_count() == frame.height
    head_start = frame.filter(pl.col("claim") == CORPUS_HEAD_START)
    assert head_start.select("length", "measure", "family").rows() == [
        ("13-25", "teacher-forced exact match", f"7.4 {BALANCED} vs {NATURAL}, teacher-forced exact match, 13-25"),
        ("21-40", "teacher-forced exact match", f"7.4 {BALANCED} vs {NATURAL}, teacher-forced exact match, 21-40")]
    in_context = frame.filter(pl.col("claim") == CORPUS_IN_CONTEXT)
    assert in_context["family_size"].to_list() == [2, 2] and in_context["p_holm"].to_list() == pytest.approx(
        [0.002, 0.002])


def test_the_corpus_finding_contradicted():
    frame = corpus_finding(pl.DataFrame([
        pair(GAP, "induction gap", -0.2, 0.001, model=f"{NATURAL} vs {BALANCED}"),  # balanced wider
        pair(IN_CONTEXT, "tf_symbol_accuracy", 0.3, 0.001, task="UB"),
        pair(IN_CONTEXT, "tf_symbol_accuracy", -0.2, 0.001, task="NB"),
        pair(CONTROL, "best head score", -0.5, 0.001, model=REVERSED),
        pair(HEAD_START, "teacher_forced", -0.3, 0.001, bin_="13-25", task="UB")]))
    assert claims(frame) == {CORPUS_GAP: [CONTRADICTED], CORPUS_IN_CONTEXT: [CONTRADICTED],
                             CORPUS_CONTROL: [CONTRADICTED], CORPUS_HEAD_START: [CONTRADICTED]}
    assert frame.filter(pl.col("claim") == CORPUS_IN_CONTEXT)["verdict"].to_list() == [SHOWN, CONTRADICTED]


def test_the_corpus_finding_not_distinguishable_from_noise():
    frame = corpus_finding(pl.DataFrame([
        pair(GAP, "induction gap", 0.1, 0.3, model=f"{NATURAL} vs {BALANCED}"),
        # each below 0.05, but not after Holm over the claim's two comparisons (0.06)
        pair(IN_CONTEXT, "tf_symbol_accuracy", 0.3, 0.03, task="UB"),
        pair(IN_CONTEXT, "tf_symbol_accuracy", 0.2, 0.04, task="NB"),
        pair(CONTROL, "tf_symbol_accuracy", 0.0, 1.0, model=REVERSED),
        # in distribution both right: noise there; a bin of its own is a family of its own
        pair(HEAD_START, "teacher_forced", 0.0, 1.0, bin_="2-12", task="UB"),
        pair(HEAD_START, "teacher_forced", 0.2, 0.03, bin_="13-25", task="UB")]))
    assert claims(frame) == {CORPUS_GAP: [NOISE], CORPUS_IN_CONTEXT: [NOISE], CORPUS_CONTROL: [NOISE],
                             CORPUS_HEAD_START: [NOISE, SHOWN]}
    assert frame.filter(pl.col("claim") == CORPUS_IN_CONTEXT)["p_holm"].to_list() == pytest.approx([0.06, 0.06])


def test_the_corpus_finding_not_run():
    assert set(corpus_finding(None)["note"]) == {STAGE_OFF}
    for empty in (pl.DataFrame(), corpus_pairs(None, None, None)):
        frame = corpus_finding(empty)
        assert set(frame["verdict"]) == {NOT_RUN} and set(frame["note"]) == {NO_PAIRS}
        assert frame["claim"].to_list() == list(FINDINGS[7].claims)
    # Only the mechanism stage ran: the other claims are not run, and say why.
    frame = corpus_finding(pl.DataFrame(SHOWING[:1] + SHOWING[3:4]))
    assert claims(frame) == {CORPUS_GAP: [SHOWN], CORPUS_IN_CONTEXT: [NOT_RUN], CORPUS_CONTROL: [SHOWN],
                             CORPUS_HEAD_START: [NOT_RUN]}
    assert set(frame.filter(pl.col("verdict") == NOT_RUN)["note"]) == {
        "its stage ran no corpus model this claim compares"}


def test_the_finding_reads_the_pairs_table_the_stages_make(stages):
    """corpus_pairs' own rows, judged: the names the finding looks for are the ones the table writes."""
    frame = findings_table({"corpus_pairs": corpus_pairs(*stages)})
    mine = frame.filter(pl.col("finding") == 7)
    assert claims(mine) == {CORPUS_GAP: [SHOWN], CORPUS_IN_CONTEXT: [NOISE], CORPUS_CONTROL: [SHOWN, SHOWN],
                            CORPUS_HEAD_START: [NOISE, SHOWN, NOISE, SHOWN]}
    assert mine.filter(pl.col("claim") == CORPUS_HEAD_START)["length"].to_list() == ["2-12", "13-25", "3-20", "21-40"]
    glance = findings_markdown(frame).split("## The comparisons")[0]
    assert ("| 7. the induction preference follows the pretraining data (beyond the paper) | " + CORPUS_GAP
            + f" | {NATURAL} vs {BALANCED} | mean attention, induction minus anti-induction | all | **shown** |") in glance


# -- the pretraining figure -----------------------------------------------------------------------
def history(steps, induction, anti) -> dict:
    return {"steps": steps, "accuracies": [0.3] * len(steps), "losses": [2.0] * len(steps),
            "metrics": [{"best_induction": i, "best_anti_induction": a, "forward_copy_accuracy": 0.5,
                         "backward_copy_accuracy": 0.1} for i, a in zip(induction, anti)]}


def test_the_pretraining_figure_draws_both_heads_per_corpus():
    embedded = json.loads(EMBEDDED.read_text())["history"]  # a real one (older metrics beside the two)
    histories = {"natural": embedded, "balanced": history([250, 500], [0.1, 0.4], [0.05, 0.3]),
                 "reversed": history([250, 500, 750], [0.1, 0.5, 0.6], [0.0, 0.1, 0.1])}
    figure = figures.pretraining_history(histories)
    assert [ax.get_title() for ax in figure.axes] == ["natural", "balanced", "reversed"]
    for ax, drawn in zip(figure.axes, histories.values()):
        lines = ax.get_lines()
        assert [to_hex(line.get_color()) for line in lines] == [figures.RIGHT, figures.LEFT]
        assert all(list(line.get_xdata()) == drawn["steps"] for line in lines)
        assert list(lines[0].get_ydata()) == [m["best_induction"] for m in drawn["metrics"]]
        assert list(lines[1].get_ydata()) == [m["best_anti_induction"] for m in drawn["metrics"]]
