"""Length-bin evaluation of any trained model: per-example exact match on one data file.

Used for the models trained from scratch and the fine-tuned ones alike.
"""

from __future__ import annotations

import polars as pl

from ..engine.scoring import score
from ..engine.sequences import SCRATCH_LAYOUT, Layout, encode_example
from ..models.vocab import SPECIALS
from ..tasks import Task
from ..tasks.datafile import read_examples


def evaluate_rows(model, task: Task, rows: list[dict], batch_size: int = 256, greedy: bool = True,
                  precision: str = "fp32", layout: Layout = SCRATCH_LAYOUT,
                  alphabet_size: int | None = None) -> pl.DataFrame:
    """Per-example exact match of a model on the rows of one data file; predictions as symbols
    (-1 for a token that is no symbol)."""
    examples = [encode_example(task, r["context"], r["query"], r["target"], layout) for r in rows]
    target_lengths = [layout.scored_length(task, r["target"]) for r in rows]
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


def evaluate_bins(model, task: Task, data_paths: dict[str, str], **settings) -> pl.DataFrame:
    """Every length bin of one model in one pass (one process, one model load): the per-example
    frames of `evaluate_rows`, each with its `bin`."""
    frames = [evaluate_rows(model, task, read_examples(path).to_pylist(), **settings)
              .with_columns(pl.lit(b).alias("bin")) for b, path in data_paths.items()]
    return pl.concat(frames)
