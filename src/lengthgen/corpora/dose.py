"""Finding 7's dose-response: does the backward task's head start grow with the share of reversed
copies in pretraining?

The arms of configs/dose.yaml insert the same short copies (4-12 characters, below every UB test
bin, so a head start cannot be the test strings themselves) and reverse a growing, nested share of
them: forward-only 0, reversed-25/50/75, backward-only 1. The test is the slope, over the models
(the pretraining seed the unit), of each model's measure on that dose:

- the fine-tuned (UB - UF) gap on each bin beyond training, each model's value the mean over its
  fine-tuning seeds (so fine-tuning noise is averaged before the pretraining effect is tested);
- its best anti-induction head's score (the mechanism stage's backward prompts);
- its continuation of reversed copies (the manipulation check: did the dose teach anything).

Each slope has Student's interval from the regression (n - 2 df) and a permutation p that shuffles
the doses over the models (scipy's `permutation_test`, exact where it can enumerate), Holm over the
table's slopes. Two arms sit off the dose axis and are compared, model by model, with Welch's t:
natural (no insertion: does inserting forward copies alone move anything) against forward-only, and
reversed-passages (the same amount of reversed text, copying nothing nearby) against backward-only:
a head start that is about reversed copies, not reversed text, leaves reversed-passages where
forward-only is. With one pretrained model an arm, that test can only compare the two models (their
errors are over fine-tuning seeds or examples, not pretraining runs): its verdict says so.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..records.tables import write_table
from ..settings import INSERTED, REVERSED_PASSAGES
from ..stats import distributions, holm, runs_comparison, t_quantile
from . import finetuned
from .pairs import BACKWARD_TASK, FORWARD_MIRROR, NATURAL, _read, copy_directions, head_directions

DOSE_ARMS = {arm: INSERTED[arm] for arm in ("forward-only", "reversed-25", "reversed-50", "reversed-75", "backward-only")}
GAP = "fine-tuned UB - UF, bin {bin}"
ANTI_INDUCTION = "best anti-induction head score"
REVERSED_COPIES = "reversed copies continued (manipulation check)"
OFF_AXIS = ((NATURAL, "forward-only"), (REVERSED_PASSAGES, "backward-only"))
PERMUTATIONS = 9_999

MODEL_SCHEMA = {"corpus": pl.String, "model": pl.String, "dose": pl.Float64, "measure": pl.String,
                "value": pl.Float64, "error": pl.Float64, "runs": pl.Int64, "per_run": pl.String}
SLOPE_SCHEMA = {"measure": pl.String, "comparison": pl.String, "test": pl.String, "models": pl.Int64,
                "estimate": pl.Float64, "low": pl.Float64, "high": pl.Float64, "p": pl.Float64,
                "p_holm": pl.Float64, "verdict": pl.String, "values": pl.String}


def finetune_gaps(evals: pl.DataFrame, model: str) -> dict[str, list[float]]:
    """bin beyond training -> the model's UB minus UF teacher-forced exact match, one per fine-tuning
    seed (the two tasks' test examples are drawn alike, bin by bin)."""
    rows = evals.filter(pl.col("system") == model)
    gaps = {}
    for length_bin in finetuned.bins_of(rows, BACKWARD_TASK)[1:]:
        by_seed = (rows.filter(pl.col("bin") == length_bin).group_by("seed", "task")
                   .agg(pl.col("teacher_forced").cast(pl.Float64).mean().alias("accuracy"))
                   .pivot(on="task", index="seed", values="accuracy").sort("seed"))
        if {BACKWARD_TASK, FORWARD_MIRROR} <= set(by_seed.columns):
            both = by_seed.drop_nulls([BACKWARD_TASK, FORWARD_MIRROR])
            gaps[length_bin] = (both[BACKWARD_TASK] - both[FORWARD_MIRROR]).to_list()
    return gaps


def model_rows(heads: pl.DataFrame | None, evals: pl.DataFrame | None, manipulation: pl.DataFrame | None,
               roles: dict[str, list[str]]) -> list[dict]:
    """Each model's measures: (value, its error, runs, the per-run values) per measure."""
    rows = []
    for corpus, models in roles.items():
        dose = DOSE_ARMS.get(corpus)
        for model in models:
            def row(measure, value, error, runs=1, per_run="", corpus=corpus, model=model, dose=dose):
                rows.append({"corpus": corpus, "model": model, "dose": dose, "measure": measure, "value": value,
                             "error": error, "runs": runs, "per_run": per_run})

            if evals is not None:
                for length_bin, gaps in finetune_gaps(evals, model).items():
                    spread = float(np.std(gaps, ddof=1) / math.sqrt(len(gaps))) if len(gaps) > 1 else math.nan
                    row(GAP.format(bin=length_bin), float(np.mean(gaps)), spread, len(gaps),
                        ", ".join(f"{g:+.2f}" for g in gaps))
            if heads is not None and (directions := head_directions(heads, model)) is not None:
                row(ANTI_INDUCTION, *directions.value("backward"))
            if manipulation is not None and (directions := copy_directions(manipulation, model)) is not None:
                row(REVERSED_COPIES, *directions.value("backward"))
    return rows


def _slope(doses: np.ndarray, values: np.ndarray) -> float:
    return float(np.polyfit(doses, values, 1)[0])


def slope_row(measure: str, doses: np.ndarray, values: np.ndarray) -> dict:
    """The least-squares slope of `values` on `doses` (per unit of reversed share), Student's 95%
    interval (n - 2 df) and the permutation p of the doses shuffled over the models."""
    fit = distributions().linregress(doses, values)
    half = t_quantile(0.975, len(doses) - 2) * fit.stderr if len(doses) > 2 else math.inf
    test = distributions().permutation_test((doses, values), _slope, permutation_type="pairings", vectorized=False,
                                        n_resamples=PERMUTATIONS, alternative="two-sided", random_state=0)
    return {"measure": measure, "comparison": "slope on the reversed share",
            "test": f"least squares over {len(doses)} models, doses permuted", "models": len(doses),
            "estimate": float(fit.slope), "low": float(fit.slope - half), "high": float(fit.slope + half),
            "p": float(test.pvalue), "values": ", ".join(f"{d:g}: {v:+.2f}" for d, v in zip(doses, values))}


def slope_rows(models: pl.DataFrame) -> list[dict]:
    """One slope per measure over the dose arms' models that have it (three or more)."""
    rows = []
    on_axis = models.filter(pl.col("dose").is_not_null())
    for measure in on_axis["measure"].unique(maintain_order=True).to_list():
        points = on_axis.filter(pl.col("measure") == measure).sort("dose", "model")
        if points.height >= 3 and points["dose"].n_unique() >= 2:
            rows.append(slope_row(measure, points["dose"].to_numpy(), points["value"].to_numpy()))
    return rows


def off_axis_rows(models: pl.DataFrame) -> list[dict]:
    """Natural against forward-only and reversed-passages against backward-only, per measure (Welch
    over the models, each model's value with its own error; a gap's error is over its fine-tuning
    seeds)."""
    rows = []
    for first, second in OFF_AXIS:
        for measure in models["measure"].unique(maintain_order=True).to_list():
            sides = [models.filter((pl.col("corpus") == arm) & (pl.col("measure") == measure)) for arm in (first, second)]
            if not all(side.height for side in sides):
                continue
            runs = [[(v, 0.0 if math.isnan(e) else e) for v, e in side.select("value", "error").iter_rows()]
                    for side in sides]
            result = runs_comparison(*runs, f"{first} above", f"{second} above", (-1.0, 1.0))
            rows.append({"measure": measure, "comparison": f"{first} vs {second}", "test": result.test,
                         "models": sides[0].height + sides[1].height, "fewest": min(side.height for side in sides),
                         "estimate": result.difference, "low": result.difference_low,
                         "high": result.difference_high, "p": result.p,
                         "values": "; ".join(f"{arm}: " + ", ".join(f"{v:+.2f}" for v in side["value"])
                                             for arm, side in zip((first, second), sides))})
    return rows


def verdict_of(row: dict) -> str:
    """The row's reading after Holm: a slope rises or falls, an off-axis arm is above the other; an
    off-axis comparison of one model an arm is about those two models, and says so."""
    if row["p_holm"] >= 0.05:
        reading = "not distinguishable from noise"
    elif row["comparison"].startswith("slope"):
        reading = "rises with the dose" if row["estimate"] > 0 else "falls with the dose"
    else:
        first, second = row["comparison"].split(" vs ")
        reading = f"{first if row['estimate'] > 0 else second} above"
    return f"{reading} (one pretraining run an arm)" if row.get("fewest") == 1 else reading


def corpus_dose(heads_paths, finetune_paths, manipulation_paths, roles: dict[str, list[str]]
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(each model's measures, the slopes and off-axis comparisons with Holm over them)."""
    heads, evals = _read(heads_paths), _read(finetune_paths, finetuned.COLUMNS)
    models = pl.DataFrame(model_rows(heads, evals, _read(manipulation_paths), roles), schema=MODEL_SCHEMA)
    tests = slope_rows(models) + off_axis_rows(models)
    for row, adjusted in zip(tests, holm([r["p"] for r in tests]) if tests else []):
        row["p_holm"] = float(adjusted)
        row["verdict"] = verdict_of(row)
    return models, pl.DataFrame(tests, schema=SLOPE_SCHEMA)


def write_corpus_dose(heads_paths, finetune_paths, manipulation_paths, section: dict, provenance, outputs) -> None:
    """The slopes and off-axis comparisons; section: `plan.corpora.pairs_params` (its roles)."""
    tests = corpus_dose(heads_paths, finetune_paths, manipulation_paths, section["roles"])[1]
    write_table(tests, outputs, provenance.record(),
                title="Corpora, dose-response: each measure's slope on the share of reversed copies over the models "
                      "(Student's 95% interval, permutation p with the doses shuffled, Holm over the table), and the "
                      "arms off the dose axis (Welch over the models)")


def write_corpus_dose_models(heads_paths, finetune_paths, manipulation_paths, section: dict, provenance,
                             outputs) -> None:
    """Each model's measures, what every slope is fitted to."""
    models = corpus_dose(heads_paths, finetune_paths, manipulation_paths, section["roles"])[0]
    write_table(models, outputs, provenance.record(),
                title="Corpora, dose-response: each model's measures (a fine-tuned gap: the mean over its "
                      "fine-tuning seeds, each listed, with their standard error)")
