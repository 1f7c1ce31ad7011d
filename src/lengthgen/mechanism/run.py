"""One mechanism job: load the model it names and analyse it on prompts in the right spelling."""

from __future__ import annotations

import polars as pl

from .analyse import analyse
from .prompts import few_shot_prompts, trained_prompts


def analyse_subject(section: dict, model_path: str | None, progress: bool = True) -> tuple[pl.DataFrame, pl.DataFrame]:
    """section: the mechanism rule's params (subject, spelling, lengths, instances, shots,
    ablate_top, batch_size, seeds); model_path: the local model directory (None for a hub model)."""
    from ..config import model_entry
    from ..engine.sequences import SCRATCH_LAYOUT, tokenizer_layout
    from ..inference.text import symbol_separator
    from ..models.loading import load, load_trained, load_trained_tokenizer

    spelling, count, shots = section["spelling"], section["instances"], section["shots"]
    if spelling["kind"] == "registry":
        spec = spelling["model"] if model_path is None else {**spelling["model"], "path": model_path}
        entry = model_entry(section["subject"], spec)
        model, tokenizer = load(entry)
        separator = symbol_separator(tokenizer, entry.separator)

        def make(length, direction, seed):
            return few_shot_prompts(tokenizer, length, direction, count, shots, seed, separator)
    else:
        model = load_trained(model_path)
        layout = (SCRATCH_LAYOUT if spelling["kind"] == "scratch" else
                  tokenizer_layout(load_trained_tokenizer(model_path), spelling["alphabet"],
                                   style=spelling["format"]))

        def make(length, direction, seed):
            return trained_prompts(layout, length, direction, count, seed, spelling["alphabet"])
    return analyse(model, make, section["lengths"], section["seeds"], section["ablate_top"], section["batch_size"],
                   progress)
