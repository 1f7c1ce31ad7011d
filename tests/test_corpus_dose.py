"""Finding 7's dose-response (lengthgen.corpora.dose): each model's fine-tuned UB - UF gap over its
fine-tuning seeds, the slope of a measure on the reversed share over the models with its interval
and permutation p, and the arms off the dose axis."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lengthgen.corpora.dose import GAP, corpus_dose, finetune_gaps, slope_row

ROLES = {"natural": ["nat0", "nat1"], "forward-only": ["f0", "f1"], "reversed-25": ["r25_0", "r25_1"],
         "reversed-50": ["r50_0", "r50_1"], "reversed-75": ["r75_0", "r75_1"], "backward-only": ["b0", "b1"],
         "reversed-passages": ["p0", "p1"]}
DOSE = {"natural": 0.0, "forward-only": 0.0, "reversed-25": 0.25, "reversed-50": 0.5, "reversed-75": 0.75,
        "backward-only": 1.0, "reversed-passages": 0.0}
EXAMPLES = 40


def evals_frame(accuracy) -> pl.DataFrame:
    """Every model fine-tuned on UF and UB with seeds 0-2, a training bin 1-12 and a test bin 13-25;
    `accuracy(model, corpus, task, seed)` -> the share of the test bin's examples right (the first
    ones), 1.0 in distribution."""
    rows = []
    for corpus, models in ROLES.items():
        for model in models:
            for task in ("UF", "UB"):
                for seed in range(3):
                    for length_bin, share in (("1-12", 1.0), ("13-25", accuracy(model, corpus, task, seed))):
                        right = round(share * EXAMPLES)
                        rows += [{"system": model, "task": task, "seed": seed, "bin": length_bin, "length": 5,
                                  "example": i, "teacher_forced": i < right} for i in range(EXAMPLES)]
    return pl.DataFrame(rows)


def test_a_models_gap_is_ub_minus_uf_beyond_training_one_value_per_finetuning_seed():
    evals = evals_frame(lambda model, corpus, task, seed: {"UF": 0.5, "UB": 0.2 + 0.1 * seed}[task])
    assert finetune_gaps(evals, "f0") == {"13-25": pytest.approx([-0.3, -0.2, -0.1])}


def test_the_slope_finds_a_dose_effect_and_its_interval_covers_it():
    doses = np.repeat([0.0, 0.25, 0.5, 0.75, 1.0], 2)
    noise = np.array([0.02, -0.03, 0.01, -0.02, 0.03, 0.0, -0.01, 0.02, -0.02, 0.01])
    row = slope_row("gap", doses, 0.4 * doses + noise)
    assert row["models"] == 10 and row["low"] < 0.4 < row["high"] and row["estimate"] == pytest.approx(0.4, abs=0.05)
    assert row["p"] < 0.01
    flat = slope_row("gap", doses, noise)
    assert flat["low"] < 0 < flat["high"] and flat["p"] > 0.2


def test_the_table_says_the_gap_rises_with_the_dose_and_the_non_copy_arm_sits_with_forward_only(tmp_path):
    def accuracy(model, corpus, task, seed):
        if task == "UF":
            return 0.8
        jitter = (sum(map(ord, model)) % 5 - 2) * 0.01 + (seed - 1) * 0.02
        return 0.2 + 0.5 * DOSE[corpus] + jitter

    path = tmp_path / "evals.parquet"
    evals_frame(accuracy).write_parquet(path)
    models, tests = corpus_dose(None, [path], None, ROLES)
    gap = GAP.format(bin="13-25")
    assert set(models["measure"]) == {gap} and models.height == 14 and set(models["runs"]) == {3}
    slope = tests.filter(pl.col("comparison") == "slope on the reversed share").row(0, named=True)
    assert slope["models"] == 10 and slope["verdict"] == "rises with the dose"
    assert slope["low"] < 0.5 < slope["high"]
    control = tests.filter(pl.col("comparison") == "reversed-passages vs backward-only").row(0, named=True)
    assert control["estimate"] == pytest.approx(-0.5, abs=0.05) and control["verdict"] == "backward-only above"
    natural = tests.filter(pl.col("comparison") == "natural vs forward-only").row(0, named=True)
    assert natural["verdict"] == "not distinguishable from noise"
    assert all(adjusted >= p for adjusted, p in zip(tests["p_holm"], tests["p"]))


def test_an_off_axis_arm_of_one_model_is_judged_as_those_two_models_not_as_pretraining(tmp_path):
    """One pretrained model an arm: the fine-tuning seeds are not pretraining runs, so a clear gap
    between the two models is labelled as resting on one pretraining run an arm."""
    one_each = {arm: models[:1] for arm, models in ROLES.items()}

    def accuracy(model, corpus, task, seed):
        return 0.8 if task == "UF" else 0.2 + 0.5 * DOSE[corpus] + (seed - 1) * 0.02

    path = tmp_path / "evals.parquet"
    evals_frame(accuracy).write_parquet(path)
    tests = corpus_dose(None, [path], None, {arm: one_each[arm] for arm in one_each})[1]
    control = tests.filter(pl.col("comparison") == "reversed-passages vs backward-only").row(0, named=True)
    assert control["verdict"] == "backward-only above (one pretraining run an arm)"
    assert control["test"].startswith("z, one pretraining seed")
    slope = tests.filter(pl.col("comparison") == "slope on the reversed share").row(0, named=True)
    assert slope["test"] == "least squares over 5 models, doses permuted" and "(" not in slope["verdict"]
