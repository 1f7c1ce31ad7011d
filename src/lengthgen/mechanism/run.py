"""One mechanism job: load the model it names and analyse it on prompts in the right spelling."""

from __future__ import annotations

import polars as pl

from ..settings import MechanismSettings
from .analyse import analyse
from .prompts import few_shot_prompts, trained_prompts


def analyse_subject(settings: MechanismSettings, model_path: str | None,
                    progress: bool = True) -> tuple[pl.DataFrame, pl.DataFrame]:
    """model_path: the local model directory (None for a hub model)."""
    from ..config import model_entry
    from ..engine.sequences import SCRATCH_LAYOUT, tokenizer_layout
    from ..inference.text import symbol_separator
    from ..models.loading import load, load_trained, load_trained_tokenizer

    spelling, count, shots = settings.spelling, settings.instances, settings.shots
    if spelling.kind == "registry":
        spec = spelling.model if model_path is None else {**spelling.model, "path": model_path}
        entry = model_entry(settings.subject, spec)
        model, tokenizer = load(entry)
        separator = symbol_separator(tokenizer, entry.separator)

        def make(length, direction, seed):
            return few_shot_prompts(tokenizer, length, direction, count, shots, seed, separator)
    else:
        model = load_trained(model_path)
        layout = (SCRATCH_LAYOUT if spelling.kind == "scratch" else
                  tokenizer_layout(load_trained_tokenizer(model_path), spelling.alphabet, style=spelling.format))

        def make(length, direction, seed):
            return trained_prompts(layout, length, direction, count, seed, spelling.alphabet)
    return analyse(model, make, settings.lengths, settings.seeds, settings.ablate_top, settings.batch_size, progress)
