"""The corpus experiment (finding 7): its pairs table from hand-made manipulation, heads, in-context
and fine-tuning files shaped as those stages write them, the arms compared over their pretraining
seeds with exact numbers; the finding's verdicts (shown, contradicted, noise, not run, and an arm
whose manipulation did not take) from hand-made pairs tables; the pretraining figure."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex

from lengthgen.corpora.curves import Curve, read_curves
from lengthgen.corpora.pairs import (
    CONTROL,
    COPY,
    EXTRA_COPYING,
    HEAD_START,
    HEADS,
    IN_CONTEXT,
    MANIPULATION,
    OTHER_TASKS,
    PREFERENCE,
    STEPS,
    UNCHANGED,
    Directions,
    corpus_pairs,
    head_directions,
    icl_directions,
    write_corpus_pairs,
)
from lengthgen.engine.run import write_history
from lengthgen.records.files import read_frame
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import read_provenance
from lengthgen.results import figures
from lengthgen.results.findings import (
    CORPUS_CONTROL,
    CORPUS_HEAD_START,
    CORPUS_MANIPULATION,
    CORPUS_PREFERENCE,
    CORPUS_UNCHANGED,
    FINDINGS,
    corpus_finding,
    findings_table,
)
from lengthgen.results.findings_markdown import findings_markdown
from lengthgen.results.verdicts import (
    AT_CEILING,
    CONTRADICTED,
    NO_PAIRS,
    NOISE,
    NOT_LEARNT,
    NOT_RUN,
    SHOWN,
    STAGE_OFF,
    base_verdict,
)
from lengthgen.stats import t_two_sided_p

ROLES = {"natural": ["nat0", "nat1"], "balanced": ["bal0", "bal1"], "reversed": ["rev0"],
         "forward-only": ["fo0"], "backward-only": ["bo0"]}
EMBEDDED = Path(__file__).resolve().parents[1] / "resources" / "embedded" / "gpt2.provenance.json"


# -- hand-made stage outputs ----------------------------------------------------------------------
# copy continuation per model: (forward, backward) accuracy on each of 4 examples
COPIES = {"nat0": (0.8, 0.1), "nat1": (0.8, 0.2), "bal0": (0.7, 0.5), "bal1": (0.7, 0.6), "rev0": (0.3, 0.3),
          "fo0": (0.9, 0.1), "bo0": (0.7, 0.1)}  # backward-only did not take: no better than natural


def write_manipulation(tmp_path) -> list[Path]:
    paths = []
    for model, (forward, backward) in COPIES.items():
        rows = [{"model": model, "example": i, "direction": d, "copy_chars": 10, "correct": 0, "accuracy": a}
                for d, a in (("forward", forward), ("backward", backward)) for i in range(4)]
        pl.DataFrame(rows).write_parquet(path := tmp_path / f"manipulation-{model}.parquet")
        paths.append(path)
    return paths


def head_rows(model: str, heads: dict, lengths=(5,), seed=0) -> list[dict]:
    """Rows of a mechanism heads file (analyse's columns, the script's `model`): heads maps
    (direction, layer, head) -> (induction per prompt, anti-induction per prompt)."""
    return [{"direction": direction, "length": length, "seed": seed, "layer": layer, "head": head,
             "previous_token": 0.0, "duplicate": 0.0, "induction": sum(induction) / len(induction),
             "anti_induction": sum(anti) / len(anti), "before_occurrence": 0.0,
             "induction_per_prompt": induction, "anti_induction_per_prompt": anti, "copy_accuracy": 0.5,
             "model": model}
            for length in lengths for (direction, layer, head), (induction, anti) in heads.items()]


ZERO = [0.0] * 4


def heads_of(induction: float, anti: float) -> dict:
    """A model whose best induction head scores `induction` on every forward prompt and best
    anti-induction head `anti` on every backward one (beside weaker heads, and an induction head on
    backward prompts that is not the anti-induction head)."""
    return {("forward", 0, 0): ([induction] * 4, ZERO), ("forward", 1, 1): ([induction / 2] * 4, ZERO),
            ("backward", 0, 1): (ZERO, [anti] * 4), ("backward", 1, 0): ([0.99] * 4, [anti / 2] * 4)}


HEADS_OF = {"nat0": (0.9, 0.2), "nat1": (0.8, 0.3), "bal0": (0.6, 0.5), "bal1": (0.6, 0.4), "rev0": (0.7, 0.2),
            "fo0": (0.9, 0.1), "bo0": (0.5, 0.5)}


def write_heads(tmp_path) -> list[Path]:
    paths = []
    for model, scores in HEADS_OF.items():
        path = tmp_path / f"heads-{model}.parquet"
        pl.DataFrame(head_rows(f"model-{model}", heads_of(*scores))).write_parquet(path)
        paths.append(path)
    return paths


def example_rows(model, task, tf, variant="bare") -> list[dict]:
    """Rows of an in-context prediction file (with columns the pairs do not read)."""
    return [{"model": model, "task": task, "bin": "10", "seed": 0, "variant": variant, "example": i,
             "correct": t > 0.5, "tf_symbol_accuracy": t, "target_logprob": -1.0} for i, t in enumerate(tf)]


ICL = {"nat0": (0.9, 0.1), "nat1": (0.9, 0.2), "bal0": (0.8, 0.4), "bal1": (0.8, 0.5), "rev0": (0.6, 0.2),
       "fo0": (0.9, 0.1), "bo0": (0.8, 0.3)}


def write_icl(tmp_path) -> list[Path]:
    paths = []
    for model, (forward, backward) in ICL.items():
        rows = example_rows(model, "UF", [forward] * 5) + example_rows(model, "UB", [backward] * 5)
        pl.DataFrame(rows).write_parquet(path := tmp_path / f"icl-{model}.parquet")
        paths.append(path)
    return paths


def eval_rows(system, task, length_bin, outcomes, seed=0) -> list[dict]:
    """Rows of a fine-tuning evaluation file (the script adds system, task and seed)."""
    return [{"bin": length_bin, "length": 10, "example": i, "teacher_forced": bool(o), "greedy": None,
             "system": system, "task": task, "seed": seed} for i, o in enumerate(outcomes)]


# right answers out of 20 on UB's 13-25 bin, and on every other task's second bin
UB_RIGHT = {"nat0": 4, "nat1": 6, "bal0": 15, "bal1": 17, "fo0": 8, "bo0": 16}


def write_finetune(tmp_path) -> list[Path]:
    paths = []
    for system, right in UB_RIGHT.items():
        rows = eval_rows(system, "UB", "2-12", [1] * 20) + eval_rows(system, "UB", "13-25", [1] * right + [0] * (20 - right))
        for task in ("UL", "UR", "UF"):
            rows += eval_rows(system, task, "3-20", [1] * 20) + eval_rows(system, task, "21-40", [1] * 10 + [0] * 10)
        path = tmp_path / f"eval-{system}.parquet"
        pl.DataFrame(rows, schema_overrides={"greedy": pl.Boolean}).write_parquet(path)
        paths.append(path)
    return paths


# UB's learning curves: (evaluated steps, validation accuracy, accuracy beyond training); bal0
# stopped at step 100 (validation 1.0), nat1 never reached 0.9 in its 200 steps
CURVES = {"nat0": ([50, 100, 150, 200], [0.5, 0.8, 0.9, 0.95], [0.0, 0.1, 0.1, 0.2]),
          "nat1": ([50, 100, 150, 200], [0.5, 0.6, 0.7, 0.8], [0.0, 0.0, 0.1, 0.1]),
          "bal0": ([50, 100], [0.95, 1.0], [0.3, 0.6]),
          "bal1": ([50, 100, 150, 200], [0.6, 0.9, 1.0, 1.0], [0.2, 0.5, 0.6, 0.7]),
          "fo0": ([50, 100, 150, 200], [0.5, 0.9, 0.9, 0.9], [0.1, 0.1, 0.2, 0.2]),
          "bo0": ([50, 100, 150, 200], [0.9, 0.9, 0.9, 0.9], [0.4, 0.4, 0.4, 0.4])}
CURVE_SECTION = {"train_lengths": "2-12", "curve_lengths": "13-25",
                 "training": {"eval_every": 50, "eval_examples": 100, "max_steps": 200}}


def write_histories(tmp_path) -> list[Path]:
    """The fine-tuning rule's training histories, written as it writes them (its provenance the
    job's settings and wildcards), and a UL run the curves' rows leave out."""
    paths = []
    for model, (steps, validation, beyond) in {**CURVES, "ul": ([50], [0.1], [0.0])}.items():
        summary = {"history": {"steps": steps, "losses": [1.0] * len(steps), "accuracies": validation,
                               "metrics": [{"beyond_accuracy": b} for b in beyond]},
                   "steps": steps[-1], "best_accuracy": max(validation), "resumed_from": None}
        task, name = ("UL", "nat0") if model == "ul" else ("UB", model)
        write_history(summary, path := tmp_path / f"history-{model}.parquet", Provenance(CURVE_SECTION), 0, "cpu",
                      {"model": name, "task": task, "seed": "0"})
        paths.append(path)
    return paths


@pytest.fixture
def stages(tmp_path):
    return write_heads(tmp_path), write_icl(tmp_path), write_finetune(tmp_path), write_manipulation(tmp_path)


@pytest.fixture
def histories(tmp_path):
    return write_histories(tmp_path)


def row(pairs: pl.DataFrame, comparison: str, measure: str, **keys) -> dict:
    found = pairs.filter((pl.col("comparison") == comparison) & (pl.col("measure") == measure),
                         *(pl.col(k) == v for k, v in keys.items()))
    assert found.height == 1, found
    return found.row(0, named=True)


def welch_p(first: list[float], second: list[float]) -> float:
    """Welch's t test of two arms of values with no error of their own, by hand."""
    v1, v2 = np.var(first, ddof=1) / len(first), np.var(second, ddof=1) / len(second)
    df = math.floor((v1 + v2) ** 2 / (v1 ** 2 / (len(first) - 1) + v2 ** 2 / (len(second) - 1)) + 1e-9)
    return t_two_sided_p((np.mean(first) - np.mean(second)) / math.sqrt(v1 + v2), df)


# -- each model's measure in both directions ----------------------------------------------------
def test_a_models_directions_are_its_best_heads_and_its_copies_per_prompt(stages):
    heads = pl.concat([read_frame(p) for p in stages[0]])
    nat = head_directions(heads, "nat0")
    assert nat.forward.tolist() == [0.9] * 4 and nat.backward.tolist() == [0.2] * 4
    assert nat.value("gap") == pytest.approx((0.7, 0.0))
    assert head_directions(heads, "smollm2") is None
    two_variants = pl.DataFrame(example_rows("m", "UF", [1.0, 0.5]) + example_rows("m", "UF", [0.0, 0.5], variant="b")
                                + example_rows("m", "UB", [0.2, 0.2]) + example_rows("m", "UB", [0.4, 0.0], variant="b"))
    icl = icl_directions(two_variants, "m")  # an example's variants averaged, then forward and backward paired
    assert icl.forward.tolist() == [0.5, 0.5] and icl.backward.tolist() == pytest.approx([0.3, 0.1])
    spread = Directions(np.array([0.5, 0.7]), np.array([0.1, 0.1]))
    assert spread.value("forward") == pytest.approx((0.6, 0.1))  # sd 0.141 over 2 units


# -- corpus_pairs ---------------------------------------------------------------------------------
def test_the_manipulation_check_compares_reversed_copies_over_the_pretraining_seeds(stages):
    pairs = corpus_pairs(*stages, ROLES)
    balanced = row(pairs, MANIPULATION, COPY, model="balanced vs natural")
    assert (balanced["first"], balanced["second"]) == ("reversed copies on balanced", "reversed copies on natural")
    assert balanced["test"] == "Welch t over 2 and 2 pretraining seeds" and balanced["seeds"] == 2
    assert balanced["difference"] == pytest.approx(0.4) and balanced["p"] == pytest.approx(welch_p([0.5, 0.6], [0.1, 0.2]))
    backward_only = row(pairs, MANIPULATION, COPY, model="backward-only vs natural")
    assert backward_only["test"] == "Welch t over 1 and 2 pretraining seeds"
    assert len(backward_only["first_per_seed"]) == 1 and balanced["second_per_seed"] == pytest.approx([0.1, 0.2])
    assert backward_only["difference"] == pytest.approx(-0.05) and backward_only["p"] > 0.05


def test_the_interaction_compares_each_models_forward_minus_backward(stages):
    pairs = corpus_pairs(*stages, ROLES)
    for measure, natural, balanced in ((COPY, [0.7, 0.6], [0.2, 0.1]), (IN_CONTEXT, [0.8, 0.7], [0.4, 0.3]),
                                       (HEADS, [0.7, 0.5], [0.1, 0.2])):
        found = row(pairs, PREFERENCE, measure, model="natural vs balanced")
        assert (found["first"], found["second"]) == ("natural: forward minus backward", "balanced: forward minus backward")
        assert found["difference"] == pytest.approx(np.mean(natural) - np.mean(balanced))
        assert found["p"] == pytest.approx(welch_p(natural, balanced))
        assert found["first_per_seed"] == pytest.approx(natural) and found["second_per_seed"] == pytest.approx(balanced)
    assert row(pairs, PREFERENCE, HEADS, model="natural vs backward-only")["first_value"] == pytest.approx(0.6)
    extra = row(pairs, EXTRA_COPYING, HEADS)  # forward-only widens the gap: no claim
    assert extra["model"] == "forward-only vs natural" and extra["difference"] == pytest.approx(0.8 - 0.6)


def test_the_reversed_control_is_its_own_forward_minus_backward_against_zero(stages):
    pairs = corpus_pairs(*stages, ROLES)
    assert set(pairs.filter(pl.col("comparison") == CONTROL)["measure"]) == {IN_CONTEXT, HEADS}  # not the natural check
    heads = row(pairs, CONTROL, HEADS)
    assert (heads["model"], heads["first"], heads["second"]) == ("reversed", "forward on reversed", "backward on reversed")
    assert heads["test"] == "z, one pretraining seed" and heads["difference"] == pytest.approx(0.5)
    assert heads["seeds"] == 1 and heads["p"] == 0.0  # no spread over its prompts: one seed says nothing of others
    assert heads["first_per_seed"] == pytest.approx([0.5]) and heads["second_per_seed"] is None


def test_fine_tuned_arms_are_compared_per_test_bin_with_the_controls_for_contamination(stages):
    pairs = corpus_pairs(*stages, ROLES)
    ub = row(pairs, HEAD_START, "teacher_forced", model="balanced vs natural", bin="13-25")
    assert (ub["first"], ub["second"], ub["beyond_training"]) == ("UB on balanced", "UB on natural", True)
    assert ub["difference"] == pytest.approx((15 + 17) / 40 - (4 + 6) / 40)
    beyond_copying = row(pairs, HEAD_START, "teacher_forced", model="balanced vs forward-only", bin="13-25")
    assert beyond_copying["difference"] == pytest.approx(0.8 - 0.4)
    inside = row(pairs, HEAD_START, "teacher_forced", model="balanced vs natural", bin="2-12")
    assert inside["beyond_training"] is False and inside["difference"] == 0.0
    assert set(pairs.filter(pl.col("comparison") == EXTRA_COPYING, pl.col("task") == "UB")["model"]) == {
        "forward-only vs natural", "backward-only vs natural"}
    others = pairs.filter(pl.col("comparison") == OTHER_TASKS)
    assert set(others["task"]) == {"UL"} and (others["difference"] == 0.0).all()
    unchanged = pairs.filter(pl.col("comparison") == UNCHANGED)  # the forward tasks: a claim of no change
    assert set(unchanged["task"]) == {"UR", "UF"} and set(unchanged["model"]) == {"balanced vs natural"}
    assert unchanged.height == 4 and (unchanged["difference"] == 0.0).all()


def test_a_learning_curve_gives_steps_to_reach_and_the_accuracy_beyond_training_at_a_step(histories):
    curves = {c.model: c for c in read_curves(histories) if c.task == "UB"}
    assert (curves["nat0"].eval_every, curves["nat0"].eval_examples, curves["nat0"].max_steps) == (50, 100, 200)
    assert (curves["nat0"].train_lengths, curves["nat0"].curve_lengths) == ("2-12", "13-25")
    assert curves["nat0"].steps_to(0.9) == 150 and curves["bal0"].steps_to(0.9) == 50
    assert curves["nat1"].steps_to(0.9) == 250  # never: one evaluation past the last step it could take
    assert curves["nat0"].beyond_at(120) == 0.1 and curves["nat0"].beyond_at(49) is None
    assert curves["bal0"].beyond_at(200) == 0.6  # stopped at step 100: its kept weights carry on
    no_beyond = Curve("m", "UB", 0, np.array([50]), np.array([0.5]), None, 50, 100, 200, "2-12", None)
    assert no_beyond.beyond_at(100) is None


def test_the_head_start_is_compared_along_the_learning_curve(stages, histories):
    pairs = corpus_pairs(*stages, ROLES, histories, 0.9, (100, 200))
    steps = row(pairs, HEAD_START, STEPS, model="balanced vs natural")
    assert (steps["first"], steps["second"]) == ("steps to 0.9 on natural", "steps to 0.9 on balanced")
    assert (steps["task"], steps["bin"], steps["beyond_training"]) == ("UB", "2-12", False)
    assert steps["first_value"] == 200 and steps["second_value"] == 75  # natural (150, 250), balanced (50, 100)
    # nat1 never reached 0.9 (250 = the cap): no t test on it; ranks, "never" last: 2 of the 6 splits are as extreme
    assert steps["test"].startswith("exact rank permutation") and steps["p"] == pytest.approx(2 / 6)
    assert math.isnan(steps["difference_low"]) and math.isnan(steps["first_low"])  # a censored mean has no interval
    single = row(pairs, HEAD_START, STEPS, model="balanced vs forward-only")  # one forward-only model: its
    assert single["second_value"] == 75 and single["first_value"] == 100  # error the evaluations' spacing
    at = row(pairs, HEAD_START, "beyond training at step 200", model="balanced vs natural")
    assert (at["first"], at["bin"], at["beyond_training"]) == ("UB on balanced at step 200", "13-25", True)
    assert at["first_value"] == pytest.approx(0.65) and at["second_value"] == pytest.approx(0.15)
    assert row(pairs, HEAD_START, "beyond training at step 100", model="balanced vs natural")["difference"] == \
        pytest.approx(0.55 - 0.05)
    assert set(pairs.filter(pl.col("comparison") == EXTRA_COPYING, pl.col("measure") == STEPS)["model"]) == {
        "forward-only vs natural", "backward-only vs natural"}
    assert corpus_pairs(*stages, ROLES).filter(pl.col("measure") == STEPS).is_empty()  # no histories: no curves


def test_a_stage_off_or_an_arm_missing_gives_the_rows_of_the_others(stages, tmp_path):
    heads, icl, finetune, manipulation = stages
    assert corpus_pairs(None, [], None, None, ROLES).is_empty()
    assert set(corpus_pairs(None, None, None, manipulation, ROLES)["comparison"]) == {
        MANIPULATION, PREFERENCE, EXTRA_COPYING}
    assert set(corpus_pairs(heads, None, None, None, ROLES)["comparison"]) == {PREFERENCE, CONTROL, EXTRA_COPYING}
    assert set(corpus_pairs(None, None, finetune, None, ROLES)["comparison"]) == {
        HEAD_START, EXTRA_COPYING, UNCHANGED, OTHER_TASKS}
    # only natural and reversed: the control alone
    alone = corpus_pairs(heads, icl, finetune, manipulation, {"natural": ["nat0"], "reversed": ["rev0"]})
    assert set(alone["comparison"]) == {CONTROL}
    outputs = SimpleNamespace(parquet=tmp_path / "corpus_pairs.parquet", markdown=tmp_path / "corpus_pairs.md",
                              csv=tmp_path / "corpus_pairs.csv")
    section = {"roles": ROLES, "finetune": {"reach": 0.9, "curve_steps": [100]}}
    write_corpus_pairs(heads, icl, finetune, manipulation, None, section, Provenance({"corpora": ROLES}), outputs)
    assert read_frame(outputs.parquet).height == corpus_pairs(*stages, ROLES).height
    written = pl.read_csv(outputs.csv)  # the report's twin holds the per-seed lists as text
    assert written.height == read_frame(outputs.parquet).height and "0.5, 0.6" in written["first_per_seed"].to_list()
    assert read_provenance(outputs.parquet)["config"] == {"corpora": ROLES}
    assert outputs.markdown.read_text().startswith("# Corpora: the arms compared over their pretraining seeds")


# -- finding 7 ----------------------------------------------------------------------------------
def pair(comparison, measure, difference, p, model="balanced vs natural", bin_="all", task=None) -> dict:
    """One row of a corpus_pairs table."""
    return {"comparison": comparison, "model": model, "first": f"{task} on a", "second": f"{task} on b",
            "measure": measure, "task": task, "bin": bin_, "test": "Welch t over 2 and 2 pretraining seeds",
            "first_value": 0.5 + difference, "first_low": 0.45 + difference, "first_high": 0.55 + difference,
            "second_value": 0.5, "second_low": 0.45, "second_high": 0.55, "difference": difference, "p": p,
            "difference_low": difference - 0.05, "difference_high": difference + 0.05,
            "significant": p < 0.05, "verdict": "(the table's own line)", "seeds": 2, "seeds_first_above": 2,
            "seeds_second_above": 0}


def claims(frame: pl.DataFrame) -> dict[str, list[str]]:
    """Each claim's verdicts, one per family, in order."""
    return {claim: [base_verdict(v) for v in rows["claim_verdict"]] for (claim,), rows in
            frame.unique(["claim", "system", "measure", "length"], maintain_order=True)
            .group_by("claim", maintain_order=True)}


SHOWING = [
    pair(MANIPULATION, COPY, 0.3, 0.001),
    pair(PREFERENCE, COPY, 0.4, 0.001, model="natural vs balanced"),
    pair(PREFERENCE, HEADS, 0.2, 0.01, model="natural vs balanced"),
    pair(CONTROL, HEADS, 0.5, 0.001, model="reversed"),
    pair(HEAD_START, "teacher_forced", 0.3, 0.001, bin_="13-25", task="UB"),
    pair(HEAD_START, "teacher_forced", 0.2, 0.01, model="balanced vs forward-only", bin_="13-25", task="UB"),
    pair(HEAD_START, "beyond training at step 100", 0.3, 0.001, bin_="13-25", task="UB"),
    pair(UNCHANGED, "teacher_forced", 0.01, 0.8, bin_="21-40", task="UR"),  # inside ±0.1: no change shown
    # Not judged: the rows of no claim, here all significantly the other way.
    pair(EXTRA_COPYING, "teacher_forced", -0.3, 0.001, model="forward-only vs natural", bin_="13-25", task="UB"),
    pair(OTHER_TASKS, "teacher_forced", -0.3, 0.001, bin_="21-40", task="UL"),
]


def test_the_corpus_finding_shown():
    frame = corpus_finding(pl.DataFrame(SHOWING))
    assert claims(frame) == {CORPUS_MANIPULATION: [SHOWN], CORPUS_PREFERENCE: [SHOWN, SHOWN], CORPUS_CONTROL: [SHOWN],
                             CORPUS_HEAD_START: [SHOWN, SHOWN, SHOWN], CORPUS_UNCHANGED: [SHOWN]}
    assert frame.height == 8 and set(frame["verdict"]) == {"shown (2 runs)"}  # two pretraining seeds an arm
    assert set(frame["claim_verdict"]) == {"shown (2 runs)"}
    assert set(frame["finding"]) == {7} and set(frame["source"]) == {"corpus_pairs"}
    assert frame["paper_first"].null_count() == frame.height
    head_start = frame.filter(pl.col("claim") == CORPUS_HEAD_START)
    assert head_start.select("system", "length").rows() == [("balanced vs natural", "13-25"),
                                                            ("balanced vs forward-only", "13-25"),
                                                            ("balanced vs natural", "13-25")]
    assert head_start["measure"][2] == "teacher-forced accuracy beyond training at step 100 of fine-tuning"
    unchanged = frame.filter(pl.col("claim") == CORPUS_UNCHANGED).row(0, named=True)
    assert unchanged["kind"] == "agree" and unchanged["shown_from_margin"] == pytest.approx(0.06)


def test_an_arm_whose_manipulation_did_not_take_is_not_judged():
    frame = corpus_finding(pl.DataFrame([
        pair(MANIPULATION, COPY, 0.02, 0.4),  # balanced no better at reversed copies
        pair(MANIPULATION, COPY, 0.3, 0.001, model="backward-only vs natural"),
        pair(PREFERENCE, COPY, 0.4, 0.001, model="natural vs balanced"),
        pair(PREFERENCE, COPY, 0.4, 0.001, model="natural vs backward-only"),
        pair(HEAD_START, "teacher_forced", 0.3, 0.001, bin_="13-25", task="UB")]))
    verdicts = dict(zip(zip(frame["claim"], frame["system"]), zip(frame["verdict"], frame["note"])))
    note = "the manipulation check did not show that balanced learnt its reversed copies (Holm p = 0.4 over the check's 2)"
    assert base_verdict(verdicts[(CORPUS_MANIPULATION, "balanced vs natural")][0]) == NOISE
    assert verdicts[(CORPUS_PREFERENCE, "natural vs balanced")] == (NOT_LEARNT, note)
    assert verdicts[(CORPUS_HEAD_START, "balanced vs natural")] == (NOT_LEARNT, note)
    assert verdicts[(CORPUS_PREFERENCE, "natural vs backward-only")] == ("shown (2 runs)", "")


def test_the_manipulation_gate_is_its_claims_holm_verdict_and_the_claim_is_one_family():
    """The reviewer's case: each arm's check at p 0.031 and 0.032 reads shown alone, but over the
    claim (two arms) Holm makes them 0.062 and 0.064: noise, so neither arm's other comparisons are
    judged. And a claim over two arm pairs whose p 0.03 and 0.04 each read shown in a family of its
    own reads noise as the one family it is."""
    frame = corpus_finding(pl.DataFrame([
        pair(MANIPULATION, COPY, 0.3, 0.031), pair(MANIPULATION, COPY, 0.3, 0.032, model="backward-only vs natural"),
        pair(PREFERENCE, COPY, 0.4, 0.001, model="natural vs balanced")]))
    manipulation = frame.filter(pl.col("claim") == CORPUS_MANIPULATION)
    assert manipulation["p_holm"].to_list() == pytest.approx([0.062, 0.062])
    assert {base_verdict(v) for v in manipulation["verdict"]} == {NOISE}
    assert frame.filter(pl.col("claim") == CORPUS_PREFERENCE)["verdict"].to_list() == [NOT_LEARNT]
    shown_alone = [pair(MANIPULATION, COPY, 0.3, 0.001),
                   pair(HEAD_START, "teacher_forced", 0.3, 0.03, bin_="13-25", task="UB"),
                   pair(HEAD_START, "teacher_forced", 0.2, 0.04, model="balanced vs forward-only", bin_="13-25", task="UB")]
    for row in shown_alone[1:]:  # each a family of its own: shown
        assert base_verdict(corpus_finding(pl.DataFrame([shown_alone[0], row])).filter(
            pl.col("claim") == CORPUS_HEAD_START)["verdict"][0]) == SHOWN
    head_start = corpus_finding(pl.DataFrame(shown_alone)).filter(pl.col("claim") == CORPUS_HEAD_START)
    assert head_start["p_holm"].to_list() == pytest.approx([0.06, 0.06])
    assert {base_verdict(v) for v in head_start["claim_verdict"]} == {NOISE}


def test_the_corpus_finding_contradicted_and_noise():
    frame = corpus_finding(pl.DataFrame([
        pair(MANIPULATION, COPY, 0.3, 0.001),
        pair(PREFERENCE, COPY, -0.2, 0.001, model="natural vs balanced"),  # balanced's preference wider
        pair(CONTROL, HEADS, -0.5, 0.001, model="reversed"),
        pair(HEAD_START, "teacher_forced", 0.0, 1.0, bin_="2-12", task="UB"),
        pair(HEAD_START, "teacher_forced", 0.2, 0.2, bin_="13-25", task="UB"),
        pair(UNCHANGED, "teacher_forced", 0.3, 0.001, bin_="21-40", task="UF"),  # wholly beyond +0.1
        pair(UNCHANGED, "teacher_forced", 0.08, 0.2, bin_="21-40", task="UR")]))  # 0.03 to 0.13: undecided
    assert claims(frame) == {CORPUS_MANIPULATION: [SHOWN], CORPUS_PREFERENCE: [CONTRADICTED],
                             CORPUS_CONTROL: [CONTRADICTED], CORPUS_HEAD_START: [NOISE, NOISE],
                             CORPUS_UNCHANGED: [CONTRADICTED]}  # UR and UF at one bin: one family
    unchanged = frame.filter(pl.col("claim") == CORPUS_UNCHANGED)
    assert dict(zip(unchanged["first"], map(base_verdict, unchanged["verdict"]))) == {"UF on a": CONTRADICTED,
                                                                                      "UR on a": NOISE}


def test_no_change_at_the_ceiling_is_not_shown():
    """UF 0.99 against 0.99: an equivalence where neither side could have risen says so."""
    at_top = {**pair(UNCHANGED, "teacher_forced", 0.0, 1.0, bin_="13-25", task="UF"), "first_value": 0.99,
              "second_value": 0.99, "difference_low": -0.01, "difference_high": 0.01}
    frame = corpus_finding(pl.DataFrame([pair(MANIPULATION, COPY, 0.3, 0.001), at_top]))
    row = frame.filter(pl.col("claim") == CORPUS_UNCHANGED).row(0, named=True)
    assert (row["verdict"], row["claim_verdict"]) == (AT_CEILING, AT_CEILING) and "ceiling" in row["note"]
    below = corpus_finding(pl.DataFrame([pair(MANIPULATION, COPY, 0.3, 0.001), {**at_top, "second_value": 0.97}]))
    assert base_verdict(below.filter(pl.col("claim") == CORPUS_UNCHANGED)["verdict"][0]) == SHOWN


def test_the_corpus_finding_not_run():
    assert set(corpus_finding(None)["note"]) == {STAGE_OFF}
    for empty in (pl.DataFrame(), corpus_pairs(None, None, None, None, ROLES)):
        frame = corpus_finding(empty)
        assert set(frame["verdict"]) == {NOT_RUN} and set(frame["note"]) == {NO_PAIRS}
        assert frame["claim"].to_list() == list(FINDINGS[7].claims)
    frame = corpus_finding(pl.DataFrame(SHOWING[3:4]))  # only the control
    assert claims(frame) == {CORPUS_CONTROL: [SHOWN], CORPUS_MANIPULATION: [NOT_RUN], CORPUS_PREFERENCE: [NOT_RUN],
                             CORPUS_HEAD_START: [NOT_RUN], CORPUS_UNCHANGED: [NOT_RUN]}


def test_the_finding_reads_the_pairs_table_the_stages_make(stages):
    """corpus_pairs' own rows, judged: the names the finding looks for are the ones the table writes."""
    frame = findings_table({"corpus_pairs": corpus_pairs(*stages, ROLES)}).filter(pl.col("finding") == 7)
    assert NOT_RUN not in set(frame["verdict"])
    gated = frame.filter(pl.col("system").str.contains("backward-only"), pl.col("claim") != CORPUS_MANIPULATION)
    assert gated.height == 3 and set(gated["verdict"]) == {NOT_LEARNT}  # its check failed: the 3 measures' interaction
    glance = findings_markdown(findings_table({"corpus_pairs": corpus_pairs(*stages, ROLES)})).split("## The comparisons")[0]
    assert f"| {CORPUS_MANIPULATION} | balanced vs natural" in glance


# -- the pretraining figure -----------------------------------------------------------------------
def history(steps, induction, anti) -> dict:
    return {"steps": steps, "accuracies": [0.3] * len(steps), "losses": [2.0] * len(steps),
            "metrics": [{"best_induction": i, "best_anti_induction": a, "forward_copy_accuracy": 0.5,
                         "backward_copy_accuracy": 0.1} for i, a in zip(induction, anti)]}


def test_the_pretraining_figure_draws_both_heads_per_corpus_and_seed():
    embedded = json.loads(EMBEDDED.read_text())["history"]  # a real one (older metrics beside the two)
    histories = {"natural": [embedded, history([250, 500], [0.2, 0.5], [0.0, 0.1])],
                 "balanced": [history([250, 500], [0.1, 0.4], [0.05, 0.3])]}
    figure = figures.pretraining_history(histories)
    assert [ax.get_title() for ax in figure.axes] == ["natural (2 seeds)", "balanced (1 seed)"]
    for ax, runs in zip(figure.axes, histories.values()):
        lines = ax.get_lines()
        assert [to_hex(line.get_color()) for line in lines] == [figures.RIGHT, figures.LEFT] * len(runs)
        for (induction, anti), drawn in zip(zip(lines[::2], lines[1::2]), runs):
            assert list(induction.get_xdata()) == drawn["steps"]
            assert list(induction.get_ydata()) == [m["best_induction"] for m in drawn["metrics"]]
            assert list(anti.get_ydata()) == [m["best_anti_induction"] for m in drawn["metrics"]]
