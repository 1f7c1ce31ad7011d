"""From-scratch length generalisation (paper Appendix B): train on short inputs, test per length bin."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import torch

from .evaluation import score, teacher_forced_accuracy
from .generate import LengthSpec
from .models import build_model, save_hf_directory, uses_absolute_positions
from .sequences import SCRATCH_LAYOUT, Layout, TrainingStream, encode_example, encoded_examples
from .tasks import MIRROR_PAIRS, get_task, sequence_length
from .theory import theory_table
from .training import TrainingRun, TrainSettings, pick_device, train
from .vocab import SPECIALS, build_tokenizer, vocab_size


def train_scratch_model(task: str, pe: str, seed: int, section: dict, model_dir, checkpoint_dir,
                        progress: bool = True) -> dict:
    """Train one (task, PE, seed) model and save it as a Hugging Face directory.

    section: {"data": generator settings, "train_lengths", "max_length" (longest test context),
              "model": {...}, "training": {... with "schedule" resolved for this PE}}
    """
    settings, training = section["data"], dict(section["training"])
    alphabet = settings["alphabet_size"]
    train_lengths = LengthSpec.parse(section["train_lengths"])
    model_settings = dict(section["model"])
    needed = sequence_length(task, max(section["max_length"] or 0, train_lengths.high))
    positions = model_settings.pop("max_positions", None) or needed
    if positions < needed:
        raise ValueError(f"scratch.model.max_positions {positions} is shorter than the longest sequence ({needed} tokens)")
    model = build_model(pe, vocab_size(alphabet), positions, seed=seed, **model_settings)
    eval_batch = training.pop("eval_batch_size", 256)
    eval_count = training.pop("eval_examples", 500)
    settings_ = TrainSettings.from_config(training)
    stream = TrainingStream(task, settings, train_lengths, settings_.batch_size, seed,
                            positions if uses_absolute_positions(model) else None)
    validation, validation_targets = encoded_examples(task, settings, train_lengths, eval_count, seed, "validation")
    run = TrainingRun(
        model, settings_, stream,
        lambda m: teacher_forced_accuracy(m, validation, validation_targets, eval_batch, settings_.precision),
        checkpoint_dir, fingerprint={"task": task, "pe": pe, "seed": seed, "section": section},
        name=f"{task}/{pe}/seed{seed}")
    train([run], progress=progress)
    save_hf_directory(run.final_model(), build_tokenizer(alphabet), model_dir)
    return run.summary()


def evaluate_file(model_dir, data_path, batch_size: int = 256, greedy: bool = True,
                  precision: str = "fp32", layout: Layout = SCRATCH_LAYOUT, alphabet_size: int | None = None) -> pl.DataFrame:
    """Per-example exact match of a saved model on one evaluation file; predictions as symbols
    (-1 for a token that is no symbol)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(pick_device())
    rows = pq.read_table(data_path).to_pylist()
    examples = [encode_example(r["context"], r["query"], r["target"], layout) for r in rows]
    target_lengths = [len(r["target"]) for r in rows]
    scored = score(model, examples, target_lengths, batch_size, greedy=greedy, eos_id=layout.eos, pad_id=layout.pad,
                   precision=precision)
    alphabet = alphabet_size or model.config.vocab_size - len(SPECIALS)  # a from-scratch vocabulary
    symbol_of = {layout.to_id(s): s for s in range(alphabet)}

    def to_symbol(tokens):
        return [symbol_of.get(t, -1) for t in tokens]

    return pl.DataFrame({
        "example": [r["example"] for r in rows],
        "length": [r["length"] for r in rows],
        "target": [r["target"] for r in rows],
        "teacher_forced": [s.teacher_forced for s in scored],
        "teacher_forced_prediction": [to_symbol(s.teacher_forced_prediction) for s in scored],
        "greedy": [s.greedy for s in scored],
        "greedy_prediction": [to_symbol(s.greedy_prediction) if greedy else None for s in scored],
    }, schema_overrides={"greedy": pl.Boolean})


def scratch_table(results: pl.DataFrame, bins: dict[str, list[str]], unit: str = "pe") -> pl.DataFrame:
    """Mean and spread over seeds per (task, PE, bin), with the theory prediction and the mirror task.

    results: one row per (task, unit, seed, bin) with teacher_forced and greedy accuracy;
    bins: the bins of each task family, in order (the last is the family's longest bin);
    unit: what was trained, "pe" (from scratch) or "model" (fine-tuned).
    """
    per_cell = results.group_by(["task", unit, "bin"]).agg(
        pl.col("teacher_forced").mean().alias("accuracy"),
        pl.col("teacher_forced").std().alias("accuracy_std"),
        pl.col("greedy").mean().alias("greedy_accuracy"),
        pl.len().alias("seeds"),
    )
    theory = theory_table().select("task", "family", "mirror", pl.col("c_rasp_pos").alias("predicted_to_generalise"))
    table = per_cell.join(theory, on="task")
    mirror = table.select(pl.col("task").alias("mirror"), unit, "bin", pl.col("accuracy").alias("mirror_accuracy"))
    table = table.join(mirror, on=["mirror", unit, "bin"], how="left")
    task_order = {t: i for i, t in enumerate(t for pair in MIRROR_PAIRS for t in reversed(pair))}
    bin_order = pl.struct("family", "bin").map_elements(lambda r: bins[r["family"]].index(r["bin"]),
                                                        return_dtype=pl.Int32)
    return (table.with_columns(bin_order.alias("_bin"),
                               pl.col("task").replace_strict(task_order, return_dtype=pl.Int32).alias("_task"))
            .sort([unit, "_task", "_bin"]).drop("_bin", "_task")
            .select(unit, "task", "family", "bin", "accuracy", "accuracy_std", "greedy_accuracy", "seeds",
                    "predicted_to_generalise", "mirror", "mirror_accuracy"))


def history_frame(summary: dict) -> pl.DataFrame:
    history = summary["history"]
    return pl.DataFrame({"step": history["steps"], "train_loss": history["losses"],
                         "validation_accuracy": history["accuracies"]},
                        schema={"step": pl.Int64, "train_loss": pl.Float64, "validation_accuracy": pl.Float64})


def read_evals(eval_paths, unit: str = "pe") -> pl.DataFrame:
    """The per-example columns both tables need, read once from every evaluation file."""
    columns = ["task", unit, "seed", "bin", "length", "teacher_forced", "greedy"]
    return pl.concat([pl.read_parquet(p, columns=columns) for p in eval_paths])


def per_run_accuracy(evals: pl.DataFrame, unit: str = "pe") -> pl.DataFrame:
    """One row per (task, unit, seed, bin): the share of examples right."""
    return evals.group_by(["task", unit, "seed", "bin"]).agg(
        pl.col("teacher_forced").mean(), pl.col("greedy").cast(pl.Float64).mean())


def accuracy_by_length(evals: pl.DataFrame, unit: str = "pe") -> pl.DataFrame:
    """Accuracy per (task, unit, length): mean over seeds of each seed's share right at that length."""
    per_seed = evals.group_by(["task", unit, "seed", "length"]).agg(
        pl.col("teacher_forced").mean(), pl.col("greedy").cast(pl.Float64).mean(), pl.len().alias("examples"))
    return per_seed.group_by(["task", unit, "length"]).agg(
        pl.col("teacher_forced").mean().alias("accuracy"), pl.col("teacher_forced").std().alias("accuracy_std"),
        pl.col("greedy").mean().alias("greedy_accuracy"), pl.col("examples").sum(), pl.len().alias("seeds"),
    ).sort([unit, "task", "length"])


def theory_split(table: pl.DataFrame, bins: dict[str, list[str]], tolerance: float = 0.1,
                 unit: str = "pe") -> list[str]:
    """What contradicts the theory on each family's longest bin: an inexpressible task at or above an
    expressible one of its family, or an expressible mirror pair further apart than `tolerance`.
    Empty = the split holds."""
    problems = []
    for (pe, family), cell in table.group_by([unit, "family"], maintain_order=True):
        cell = cell.filter(pl.col("bin") == bins[family][-1])
        expressible = cell.filter(pl.col("predicted_to_generalise"))
        inexpressible = cell.filter(~pl.col("predicted_to_generalise"))
        if expressible.height and inexpressible.height:
            low = expressible.sort("accuracy").row(0, named=True)
            high = inexpressible.sort("accuracy").row(-1, named=True)
            if low["accuracy"] <= high["accuracy"]:
                problems.append(f"{pe}: {low['task']} ({low['accuracy']:.2f}) is not above "
                                f"{high['task']} ({high['accuracy']:.2f})")
        for row in expressible.iter_rows(named=True):
            if row["mirror_accuracy"] is None or not get_task(row["task"]).induction:
                continue
            gap = abs(row["accuracy"] - row["mirror_accuracy"])
            if gap > tolerance:
                problems.append(f"{pe}: {row['task']} and {row['mirror']} differ by {gap:.2f}")
    return problems


def _mean_spread(row: dict) -> str:
    """"0.93 ± 0.02" over seeds; just the mean when there is one seed (no spread to show)."""
    std = row["accuracy_std"]
    return f"{row['accuracy']:.2f}" if std is None else f"{row['accuracy']:.2f} ± {std:.2f}"


def scratch_markdown(table: pl.DataFrame, bins: dict[str, list[str]], provenance: dict, unit: str = "pe",
                     title: str = "From scratch") -> str:
    """Per family: accuracy per bin (mean ± std over seeds), mirror pairs on adjacent rows; then the verdict."""
    lines = [f"# {title}: teacher-forced exact match per length bin (mean ± std over seeds)", "",
             "The first bin of each family is in distribution. Greedy-decoding accuracy is in the parquet table."]
    for family in ("retrieval", "copying"):
        rows_of_family = table.filter(pl.col("family") == family)
        if rows_of_family.is_empty():
            continue
        family_bins = bins[family]
        lines += ["", f"## {family}", "", f"| {'PE' if unit == 'pe' else unit} | task | C-RASP[pos] | "
                  + " | ".join(family_bins) + " |",
                  "|---|---|---|" + "---|" * len(family_bins)]
        for (pe, task), rows in rows_of_family.group_by([unit, "task"], maintain_order=True):
            by_bin = {r["bin"]: r for r in rows.iter_rows(named=True)}
            cells = [_mean_spread(by_bin[b]) if b in by_bin else "" for b in family_bins]
            expressible = "yes" if rows["predicted_to_generalise"][0] else "no"
            lines.append(f"| {pe} | {task} | {expressible} | " + " | ".join(cells) + " |")
    problems = theory_split(table, bins, unit=unit)
    longest = ", ".join(f"{f} {b[-1]}" for f, b in bins.items())
    lines += ["", f"Theory split on the longest bins ({longest}): "
              + ("holds (every expressible task above every inexpressible one of its family; "
                 "expressible mirror pairs within 0.1)." if not problems else "does NOT hold: " + "; ".join(problems)),
              "", f"config hash {provenance['config_hash']}, code {provenance['code_version']}", ""]
    return "\n".join(lines)
