"""The corpora experiment's manipulation check: did a model learn the copies its corpus inserted?

Each example is held-out natural text (the tail of the natural corpus that no corpus model trains
on: the natural model holds it out for validation, and the corpora with copies end earlier in the
documents, being cut to the natural text's size) in which a passage is copied a few passages later,
as the corpora insert them (`pretrain.insertion`: a passage of `passage_chars`, a gap of
`gap_passages` passages), once as it stands (forward) and once reversed (backward), the text
before it filling the context. A model reads both versions of every example; the teacher-forced
accuracy on the copy's characters after its first (the first cannot be known to start a copy) says
how well it continues a copy in each direction. A balanced or backward-only model no better than
the natural one at reversed copies did not take the manipulation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import polars as pl

from ..settings import ManipulationSettings

DIRECTIONS = ("forward", "backward")
SCHEMA = {"model": pl.String, "example": pl.Int64, "direction": pl.String, "copy_chars": pl.Int64,
          "correct": pl.Int64, "accuracy": pl.Float64}


@dataclass(frozen=True)
class CopyExample:
    """The text up to the copy (context before, the passage, the gap) and the passage copied."""

    before: str
    passage: str

    def text(self, direction: str) -> str:
        return self.before + (self.passage if direction == "forward" else self.passage[::-1])


def held_out_text(settings: ManipulationSettings) -> str:
    """The natural corpus's held-out tail (`pretrain.validation_fraction` of it)."""
    from ..pretrain.corpus import build_corpus

    text = build_corpus(settings.corpus_chars, corpus="natural")
    return text[len(text) - int(len(text) * settings.validation_fraction):]


def copy_examples(text: str, settings: ManipulationSettings) -> list[CopyExample]:
    """`settings.examples` examples drawn from `text` with (seed, example): each `context`
    characters long with its copy, the passage and gap drawn as the corpora draw theirs (a gap longer
    than the context holds shortened by whole passages)."""
    low, high = settings.passage_chars
    if 2 * high >= settings.context:
        raise ValueError(f"corpora.manipulation.context {settings.context} cannot hold a passage of {high} "
                         f"characters and its copy")
    examples = []
    for index in range(settings.examples):
        rng = random.Random(f"manipulation:{settings.seed}:{index}")
        passage = rng.randint(low, high)
        gaps = [rng.randint(low, high) for _ in range(rng.randint(*settings.gap_passages))]
        while gaps and 2 * passage + sum(gaps) >= settings.context:
            gaps.pop()  # a gap the context cannot hold is shortened by whole passages
        gap = sum(gaps)
        before = settings.context - 2 * passage - gap  # the text before the passage fills the context
        span = before + passage + gap
        if len(text) <= span:
            raise ValueError(f"the held-out text ({len(text)} characters) is shorter than one example ({span})")
        start = rng.randrange(len(text) - span)
        examples.append(CopyExample(text[start:start + span], text[start + before:start + before + passage]))
    return examples


def copy_accuracy(model, tokenizer, examples: list[CopyExample], batch_size: int) -> pl.DataFrame:
    """Per example and direction: how many of the copy's characters after its first the model ranks
    first, teacher-forced (every example is one sequence of the same length: no padding)."""
    import torch  # here, not at the top: the pairs tables (imported when the workflow is parsed) read DIRECTIONS

    from ..devices import input_device
    from ..inference.measures import next_tokens, top_tokens

    rows = []
    for direction in DIRECTIONS:
        for start in range(0, len(examples), batch_size):
            batch = examples[start:start + batch_size]
            ids = torch.tensor([tokenizer(e.text(direction), add_special_tokens=False).input_ids for e in batch])
            with torch.no_grad():
                logits = model(input_ids=ids.to(input_device(model))).logits
            for row, example in enumerate(batch, start):
                copy = len(example.passage)
                end = ids.shape[1] - 1  # the logits at t predict t + 1: the copy's 2nd..last characters
                hits = top_tokens(*next_tokens(logits[row - start:row - start + 1], ids[row - start:row - start + 1],
                                               slice(end - copy + 1, end)))[1]
                correct = int(hits.sum())
                rows.append({"example": row, "direction": direction, "copy_chars": copy - 1, "correct": correct,
                             "accuracy": correct / (copy - 1)})
    return pl.DataFrame(rows, schema={k: v for k, v in SCHEMA.items() if k != "model"})


def manipulation_check(settings: ManipulationSettings, model_path: str | None) -> pl.DataFrame:
    """The check's rows for one registry model (`settings.subject`; `model_path` its local directory,
    None for a hub model)."""
    from ..config import model_entry
    from ..models.loading import load

    spec = settings.model if model_path is None else {**settings.model, "path": model_path}
    model, tokenizer = load(model_entry(settings.subject, spec))
    examples = copy_examples(held_out_text(settings), settings)
    return copy_accuracy(model, tokenizer, examples, settings.batch_size).select(
        pl.lit(settings.subject).alias("model"), pl.all())
