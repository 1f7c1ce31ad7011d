"""The corpus experiment's pairs table: every comparison finding 7 judges, each on the same prompts
or examples for the two sides, one row per comparison, named by the claim it serves (`comparison`).

- GAP: the induction/anti-induction gap per prompt (`heads.gap`), natural against balanced;
- IN_CONTEXT: teacher-forced (and greedy) backward copy in context, balanced against natural;
- CONTROL: the reversed corpus's own preference, its best induction head against its best
  anti-induction head and its forward copy against its backward copy;
- HEAD_START: after the same fine-tuning, the backward / left tasks, balanced against natural, on
  every test bin; FORWARD_TASKS: the same for their forward / right mirrors (no claim: what a head
  start on the backward tasks costs or gives the forward ones).

A stage that did not run (no paths) or did not run a model a comparison needs gives no rows there.
"""

from __future__ import annotations

import polars as pl

from ..lengthbins.table import COMPARISON_SCHEMA
from ..mechanism.tables import best_head, compare_prompts
from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import write_table
from . import finetuned, heads, incontext

GAP = "balanced narrows the induction gap"
IN_CONTEXT = "balanced raises backward copy in context"
CONTROL = "reversed keeps the induction preference"
HEAD_START = "balanced gives backward tasks a head start"
FORWARD_TASKS = "balanced on forward tasks (no claim)"

BACKWARD_COPIES = ("UB", "NB")  # the in-context backward copies compared across corpora
BACKWARD_TASKS, FORWARD_MIRRORS = ("UB", "UL"), ("UF", "UR")  # fine-tuned, compared across corpora

SCHEMA = {
    "comparison": pl.String, "model": pl.String, "first": pl.String, "second": pl.String, "measure": pl.String,
    "task": pl.String, "bin": pl.String, "beyond_training": pl.Boolean, **COMPARISON_SCHEMA,
}


def _read(paths, columns=None) -> pl.DataFrame | None:
    paths = list(paths or [])
    return pl.concat([read_frame(p, columns=columns) for p in paths]) if paths else None


def heads_rows(frame: pl.DataFrame, natural: str, balanced: str, reversed_: str) -> list[dict]:
    """GAP (natural and balanced both analysed) and the reversed model's heads (CONTROL)."""
    rows = []
    of = {name: heads.of_model(frame, name) for name in (natural, balanced, reversed_)}
    if of[natural].height and of[balanced].height:
        (natural_label, natural_gap), (balanced_label, balanced_gap) = heads.gap(of[natural]), heads.gap(of[balanced])
        rows.append({"comparison": GAP, **compare_prompts(
            f"{natural} vs {balanced}", f"{natural}: {natural_label}", f"{balanced}: {balanced_label}",
            "induction gap", natural_gap, balanced_gap, f"{natural}'s gap wider", f"{balanced}'s gap wider")})
    if of[reversed_].height:
        (induction, forward), (anti, backward) = (best_head(of[reversed_], d) for d in ("forward", "backward"))
        rows.append({"comparison": CONTROL, **compare_prompts(
            reversed_, induction, anti, "best head score", forward, backward, "induction above anti-induction",
            "anti-induction above induction")})
    return rows


def icl_rows(examples: pl.DataFrame, natural: str, balanced: str, reversed_: str) -> list[dict]:
    """IN_CONTEXT per backward copy task, and the reversed model's forward against backward copy (CONTROL)."""
    rows = [{"comparison": IN_CONTEXT, **r} for task in BACKWARD_COPIES
            for r in incontext.between_models(examples, balanced, natural, task)]
    return rows + [{"comparison": CONTROL, **r} for r in incontext.forward_over_backward(examples, reversed_)]


def finetune_rows(evals: pl.DataFrame, natural: str, balanced: str) -> list[dict]:
    """HEAD_START on the backward / left tasks, FORWARD_TASKS on their mirrors, per test bin."""
    return [{"comparison": comparison, **r}
            for comparison, tasks in ((HEAD_START, BACKWARD_TASKS), (FORWARD_TASKS, FORWARD_MIRRORS))
            for task in tasks for r in finetuned.between_models(evals, balanced, natural, task)]


def corpus_pairs(heads_paths, icl_paths, finetune_paths, natural: str = "corpus_natural",
                 balanced: str = "corpus_balanced", reversed_: str = "corpus_reversed") -> pl.DataFrame:
    """Every comparison of the corpus experiment (the module's list), from the mechanism stage's
    heads files, the in-context stage's prediction files and the fine-tuning stage's evaluation
    files; any of them None or empty (its stage off): the rows the others give. Pooled rows have
    bin "all"."""
    rows = []
    if (frame := _read(heads_paths)) is not None:
        rows += heads_rows(frame, natural, balanced, reversed_)
    if (examples := _read(icl_paths, incontext.COLUMNS)) is not None:
        rows += icl_rows(examples, natural, balanced, reversed_)
    if (evals := _read(finetune_paths, finetuned.COLUMNS)) is not None:
        rows += finetune_rows(evals, natural, balanced)
    return pl.DataFrame([{name: r.get(name, "all" if name == "bin" else None) for name in SCHEMA} for r in rows],
                        schema=SCHEMA)


def write_corpus_pairs(heads_paths, icl_paths, finetune_paths, roles: dict[str, str], provenance: Provenance,
                       outputs) -> None:
    """roles: corpus -> registry name of its model (`corpora` in the config)."""
    names = {"natural": roles.get("natural"), "balanced": roles.get("balanced"), "reversed_": roles.get("reversed")}
    write_table(corpus_pairs(heads_paths, icl_paths, finetune_paths, **names), outputs, provenance.record(),
                title="Corpora: natural, balanced and reversed pretraining on the same prompts and examples "
                      "(95% intervals, paired tests)")
