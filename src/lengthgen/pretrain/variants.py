"""Corpus variants: interventions on the pretraining text that each change one thing.

The paper explains the induction preference by pretraining on language. To test that, the
pretrain stage can train the same model on a changed corpus, one document at a time:

- `natural`: the documents as they are.
- `reversed`: every document's characters in reverse order. Every repeat in the text stays a
  repeat in the same direction (the reversal of "ab..ab" is "ba..ba"), so the direction
  statistic is unchanged; what flips is the direction of the language itself. The control: a
  preference that follows the repeats survives it, one that follows the language would not.
- `balanced`: a share of passages is copied a few passages later, some reversed and the others
  as they were. With `insertion.reversed: alternate` every other copy is reversed (the shipped
  corpus_balanced model's corpus): the text gains as many backward copies as forward ones, but
  natural text already repeats forwards, so its backward repeats stay rarer. With `balance` the
  share of reversed copies is solved for (corpus.py) so that the final text holds as many backward
  as forward repeats of `balance_n`-grams: only then does a backward copy follow a passage as often
  as a forward one.
- `forward-only` and `backward-only`: the same copies (the same passages, places and lengths as
  any `balance` corpus of these settings), none or all of them reversed: the controls that tell
  more copying from more backward copying. `reversed-25`, `-50` and `-75` reverse that share of
  the same copies: with them, a dose of backward copying from 0 to 1 at a fixed amount of copying.
- `reversed-passages`: reversed passages where those corpora put their copies (the same draws), but
  each the reversal of a passage half the document away: about as much reversed text as
  `backward-only` adds, and no reversed copy of anything nearby. It tells "reversed text" from
  "reversed copies".

Each transform is a pure function of (document, its index, seed), so a corpus is the same byte
for byte on every run with the same interpreter.
"""

from __future__ import annotations

import random

from ..settings import INSERTED, REVERSED_PASSAGES, InsertionSettings

CORPORA = ("natural", "reversed", *INSERTED, REVERSED_PASSAGES)


def split_passages(text: str, rng: random.Random, lengths: tuple[int, int]) -> list[str]:
    """Consecutive passages covering `text`, each of a length drawn from `lengths` (the last may
    be shorter)."""
    passages, start = [], 0
    while start < len(text):
        size = rng.randint(*lengths)
        passages.append(text[start:start + size])
        start += size
    return passages


def copy_draws(passages: list[str], rng: random.Random, insertion: InsertionSettings,
               reversed_share: float | None):
    """(source passage, the passage it goes after, reversed?) of each copy, drawn in order: whether a
    passage is copied, then its direction (with `reversed_share` None the 1st, 3rd, 5th... copy
    reversed, undrawn; else reversed with that probability, drawn for every copy whatever the share,
    so that every share gives the same passages, places and lengths), then its gap."""
    copies = 0
    for index, passage in enumerate(passages):
        if len(passage) < insertion.passage_chars[0] or rng.random() >= insertion.share:
            continue
        backward = copies % 2 == 0 if reversed_share is None else rng.random() < reversed_share
        copies += 1
        yield index, min(index + rng.randint(*insertion.gap_passages), len(passages) - 1), backward


def _with_insertions(passages: list[str], after: dict[int, list[str]]) -> str:
    return "".join(p + "".join(after.get(i, ())) for i, p in enumerate(passages))


def insert_copies(text: str, rng: random.Random, insertion: InsertionSettings,
                  reversed_share: float | None = None) -> tuple[str, int, int]:
    """`text` with a share of its passages copied a few passages later, the copies reversed as
    `copy_draws` says. Returns (text, backward chars, forward chars)."""
    passages = split_passages(text, rng, insertion.passage_chars)
    after: dict[int, list[str]] = {}
    added = [0, 0]  # backward, forward
    for index, target, backward in copy_draws(passages, rng, insertion, reversed_share):
        after.setdefault(target, []).append(passages[index][::-1] if backward else passages[index])
        added[0 if backward else 1] += len(passages[index])
    return _with_insertions(passages, after), added[0], added[1]


def insert_distant_reversals(text: str, rng: random.Random, insertion: InsertionSettings) -> str:
    """`text` with a reversed passage where `insert_copies` with a reversed share would put each copy
    (the same draws), but reversed from the passage half the document away, so that it repeats
    nothing within `insertion.balance_window` characters; a document too short for that distance
    gets none."""
    passages = split_passages(text, rng, insertion.passage_chars)
    far_enough = len(text) >= 4 * insertion.balance_window
    after: dict[int, list[str]] = {}
    for index, target, _ in copy_draws(passages, rng, insertion, reversed_share=1.0):
        if far_enough:
            after.setdefault(target, []).append(passages[(index + len(passages) // 2) % len(passages)][::-1])
    return _with_insertions(passages, after)


def transform_document(text: str, corpus: str, index: int, seed: int, insertion: InsertionSettings | None,
                       reversed_share: float | None = None) -> str:
    """One document of the named corpus variant; `reversed_share`: the balanced corpus's share of
    reversed copies where it is solved for (`insertion.reversed: balance`), else None."""
    if corpus == "natural":
        return text
    if corpus == "reversed":
        return text[::-1]
    if corpus in INSERTED:
        if insertion is None:
            raise ValueError(f"the {corpus} corpus needs insertion settings")
        share = INSERTED[corpus]
        if share is None and insertion.reversed == "balance":
            if reversed_share is None:
                raise ValueError("a balanced corpus with insertion.reversed 'balance' needs its solved reversed share")
            share = reversed_share
        return insert_copies(text, random.Random(f"{seed}:{index}"), insertion, share)[0]
    if corpus == REVERSED_PASSAGES:
        if insertion is None:
            raise ValueError(f"the {corpus} corpus needs insertion settings")
        return insert_distant_reversals(text, random.Random(f"{seed}:{index}"), insertion)
    raise ValueError(f"unknown corpus variant {corpus!r}; known: {', '.join(CORPORA)}")
