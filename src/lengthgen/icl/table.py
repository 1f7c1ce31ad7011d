"""The in-context table: per (model, task, length bin, prompt variant) exact match (the authors'
scoring, and strict), the teacher-forced measures, mean and spread over seeds and over variants, the
mirror task beside each row, and the two signatures of an induction bias: the share of a left task's
wrong answers that equal the right-hand neighbour, and how often the model puts more probability on
the right-hand neighbour than on the left-hand one."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import to_markdown, write_table
from ..stats import LEVEL, binomial_two_sided, bootstrap_mean, interval_text, paired_comparison, verdict, wilson
from ..tasks import MIRROR_PAIRS, get_task
from ..tasks.theory import theory_table

KEYS = ["model", "task", "bin", "seed", "variant"]
MEASURES = {
    "accuracy": pl.col("correct").cast(pl.Float64).mean(),
    "accuracy_strict": pl.col("correct_strict").cast(pl.Float64).mean(),
    "tf_symbol_accuracy": pl.col("tf_symbol_accuracy").mean(),
    "tf_exact": pl.col("tf_exact").cast(pl.Float64).mean(),
    "target_logprob": pl.col("target_logprob").mean(),
    "right_neighbour_share": pl.col("right_neighbour_error").cast(pl.Float64).mean(),
    # Defined where the two neighbours differ: which one the model gives more probability.
    "right_preference": (pl.col("p_right") > pl.col("p_left")).cast(pl.Float64).mean(),
    "right_probability": (pl.col("p_right") / (pl.col("p_right") + pl.col("p_left"))).mean(),
}
MIRRORED = ("accuracy", "tf_symbol_accuracy", "right_preference")


EXAMPLE_COLUMNS = KEYS + ["example", "correct", "tf_symbol_accuracy", "p_right", "p_left"]


def per_run(paths) -> pl.DataFrame:
    """One row per (model, task, bin, seed, variant), read from the prediction files."""
    columns = KEYS + ["correct", "correct_strict", "right_neighbour_error", "tf_symbol_accuracy", "tf_exact",
                      "target_logprob", "p_right", "p_left"]
    frame = pl.concat([read_frame(p, columns=columns) for p in paths])
    return frame.group_by(KEYS).agg(**MEASURES)


def examples_of(paths) -> pl.DataFrame:
    """One row per example and prompt variant: what the intervals and the paired tests read."""
    return pl.concat([read_frame(p, columns=EXAMPLE_COLUMNS) for p in paths])


def _over_seeds(runs: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return runs.group_by(keys).agg(
        *(pl.col(m).mean() for m in MEASURES), pl.col("accuracy").std().alias("accuracy_std_over_seeds"),
        pl.col("tf_symbol_accuracy").std().alias("tf_symbol_accuracy_std_over_seeds"), pl.len().alias("runs"))


def intervals(examples: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per cell, the 95% intervals of accuracy and teacher-forced symbol accuracy over its examples
    (pooled over seeds): Wilson where every example counts once, else (several prompt variants of
    one example) a bootstrap that resamples examples with all their variants."""
    rows = []
    for key, cell in examples.group_by(keys, maintain_order=True):
        clusters = [f"{s}/{e}" for s, e in zip(cell["seed"], cell["example"])]
        correct = cell["correct"].cast(pl.Int64).to_list()
        once = len(set(clusters)) == len(clusters)
        low, high = wilson(sum(correct), len(correct)) if once else bootstrap_mean(correct, clusters)
        tf_low, tf_high = bootstrap_mean(cell["tf_symbol_accuracy"].to_list(), clusters)
        rows.append({**dict(zip(keys, key)), "examples": len(set(clusters)), "accuracy_low": low,
                     "accuracy_high": high, "tf_symbol_accuracy_low": tf_low, "tf_symbol_accuracy_high": tf_high})
    return pl.DataFrame(rows)


def icl_table(paths) -> pl.DataFrame:
    runs = per_run(paths)
    per_variant = _over_seeds(runs, ["model", "task", "bin", "variant"])
    # "all": each seed's mean over variants first, so the spread is over seeds (not variants).
    seeds = runs.group_by(["model", "task", "bin", "seed"]).agg(pl.col(m).mean() for m in MEASURES)
    overall = _over_seeds(seeds, ["model", "task", "bin"]).with_columns(pl.lit("all").alias("variant"))
    table = pl.concat([per_variant, overall.select(per_variant.columns)])
    examples = examples_of(paths)
    spread = pl.concat([intervals(examples, ["model", "task", "bin", "variant"]),
                        intervals(examples.with_columns(pl.lit("all").alias("variant")),
                                  ["model", "task", "bin", "variant"])])
    table = table.join(spread, on=["model", "task", "bin", "variant"])
    theory = theory_table().select("task", "family", "mirror", "expressible")
    table = table.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), "model", "bin", "variant",
                          *(pl.col(m).alias(f"mirror_{m}") for m in MIRRORED))
    return (table.join(mirror, on=["mirror", "model", "bin", "variant"], how="left")
            .with_columns(pl.col("bin").str.extract(r"(\d+)$").cast(pl.Int64).alias("_high"))
            .sort(["model", "task", "_high", "variant"]).drop("_high"))


# -- paired comparisons ---------------------------------------------------------------------------
PAIR_KEYS = ["model", "bin", "seed", "variant", "example"]


def _paired(examples: pl.DataFrame, left: str, right: str) -> pl.DataFrame:
    """The examples both tasks of a mirror pair were asked, side by side (they share their inputs)."""
    side = lambda task, name: examples.filter(pl.col("task") == task).select(
        *PAIR_KEYS, pl.col("correct").alias(f"{name}_correct"), pl.col("tf_symbol_accuracy").alias(f"{name}_tf"))
    return side(right, "right").join(side(left, "left"), on=PAIR_KEYS)


def pair_tests(examples: pl.DataFrame) -> pl.DataFrame:
    """Per model and mirror pair, pooled over lengths, seeds and prompt variants, right/forward
    (first) against left/backward (second) on the same examples: greedy accuracy (McNemar's exact
    test) and teacher-forced symbol accuracy (paired sign-flip permutation test); and per left
    retrieval task, how often the right-hand neighbour of the used occurrence gets more probability
    than the left-hand one (exact binomial test against one half)."""
    rows = []
    for (model,), of_model in examples.group_by(["model"], maintain_order=True):
        tasks = set(of_model["task"])
        for left, right in MIRROR_PAIRS:
            if left not in tasks or right not in tasks:
                continue
            paired = _paired(of_model, left, right)
            clusters = [f"{b}/{s}/{e}" for b, s, e in zip(paired["bin"], paired["seed"], paired["example"])]
            for measure, column, binary in (("accuracy", "correct", True), ("tf_symbol_accuracy", "tf", False)):
                rows.append({"model": model, "first": right, "second": left, "measure": measure,
                             **paired_comparison(paired[f"right_{column}"].to_list(), paired[f"left_{column}"].to_list(),
                                                 binary, clusters, "right/forward above", "left/backward above").row()})
            if get_task(left).family == "retrieval":
                rows.append(_preference(model, left, of_model.filter(pl.col("task") == left)))
    return pl.DataFrame(rows, schema_overrides={"p": pl.Float64})


def _preference(model: str, left: str, rows: pl.DataFrame) -> dict:
    defined = rows.filter(pl.col("p_right").is_not_null() & pl.col("p_left").is_not_null())
    prefers = (defined["p_right"] > defined["p_left"]).to_list()
    share = sum(prefers) / len(prefers) if prefers else float("nan")
    low, high = wilson(sum(prefers), len(prefers))
    p = binomial_two_sided(sum(prefers), len(prefers))
    return {"model": model, "first": "right-hand neighbour", "second": f"left-hand neighbour ({left})",
            "measure": "right_preference", "test": "binomial against 1/2", "pairs": len(prefers),
            "first_value": share, "first_low": low, "first_high": high, "second_value": 1 - share,
            "second_low": 1 - high, "second_high": 1 - low, "difference": 2 * share - 1, "p": p,
            "significant": p < LEVEL,
            "verdict": verdict(2 * share - 1, p, "prefers the right-hand neighbour", "prefers the left-hand neighbour")}


def asymmetry(pairs: pl.DataFrame) -> list[str]:
    """One line per model and measure: each mirror pair's means, intervals and test verdict ("nothing
    to compare" when the config's tasks hold no mirror pair: the pairs table is then empty)."""
    if pairs.is_empty() or "model" not in pairs.columns:
        return ["- nothing to compare: the config's tasks hold no mirror pair."]
    lines = []
    for (model, measure), rows in pairs.group_by(["model", "measure"], maintain_order=True):
        if measure == "right_preference":
            parts = [f"{r['second'].split('(')[1].rstrip(')')}: {r['first_value']:.2f} "
                     f"{interval_text(r['first_low'], r['first_high'])}, {r['verdict']}" for r in rows.iter_rows(named=True)]
            lines.append(f"- {model}, left retrieval tasks, share of examples preferring the right-hand neighbour: "
                         + "; ".join(parts) + ".")
            continue
        parts = [f"{r['first']} {r['first_value']:.2f} {interval_text(r['first_low'], r['first_high'])} vs "
                 f"{r['second']} {r['second_value']:.2f} {interval_text(r['second_low'], r['second_high'])}: "
                 f"{r['verdict']}" for r in rows.iter_rows(named=True)]
        lines.append(f"- {model}, {measure} (n = {rows['pairs'].max()} paired examples per pair): "
                     + "; ".join(parts) + ".")
    return lines


def icl_markdown(table: pl.DataFrame, pairs: pl.DataFrame, provenance: dict) -> str:
    shown = table.filter(pl.col("variant") == "all").select(
        "model", "task", "bin", "examples", "accuracy",
        pl.struct("accuracy_low", "accuracy_high").map_elements(
            lambda r: interval_text(r["accuracy_low"], r["accuracy_high"]), pl.String).alias("accuracy 95%"),
        "accuracy_strict", "mirror", "mirror_accuracy", "tf_symbol_accuracy",
        pl.struct("tf_symbol_accuracy_low", "tf_symbol_accuracy_high").map_elements(
            lambda r: interval_text(r["tf_symbol_accuracy_low"], r["tf_symbol_accuracy_high"]), pl.String).alias(
            "tf 95%"),
        "mirror_tf_symbol_accuracy", "target_logprob", "right_preference", "right_neighbour_share",
        "expressible")
    return ("# In context: per task, model and length (mean over seeds and prompt variants)\n\n"
            "accuracy: exact match as the authors score it (spaces and <eos> removed); accuracy_strict: the answer "
            "exactly as the prompt writes it. tf_symbol_accuracy: teacher-forced, the share of target symbols "
            "the model ranks first; target_logprob: log-probability of the target. right_preference: how often "
            "the model gives the right-hand neighbour of the used occurrence more probability than the left-hand "
            "one (retrieval); right_neighbour_share: of a left/backward task's wrong answers, the share that "
            "equal the right-hand neighbour.\n\n"
            + to_markdown(shown) + "\nIntervals: 95%, over examples (Wilson; a bootstrap over examples where "
            "one example has several prompt variants).\n\nInduction asymmetry (the paper: right/forward easier than "
            "left/backward), paired on the examples both tasks of a pair share (`icl_pairs.md`):\n\n"
            + "\n".join(asymmetry(pairs)) + "\n\n"
            f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")


def write_icl_table(paths, pairs_path, provenance: Provenance, outputs) -> None:
    provenance = provenance.record()
    table = icl_table(paths)
    write_table(table, outputs, provenance, markdown=icl_markdown(table, read_frame(pairs_path), provenance))


def write_icl_pairs(paths, provenance: Provenance, outputs) -> None:
    pairs = pair_tests(examples_of(paths))
    write_table(pairs, outputs, provenance.record(),
                title="In context: right/forward against left/backward on the same examples (95% intervals, "
                      "paired tests)")
