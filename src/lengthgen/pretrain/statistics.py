"""Does the pretraining text itself repeat forward more than backward?

The induction preference could be learnt from the data: if language repeats an n-gram in the
same order (induction direction) far more often than reversed (anti-induction direction), a
model gains more from copying forward. These statistics measure that, per corpus variant
(variants.py), so the `balanced` corpus can be checked to actually close the gap.

For each n-gram position i, with g = text[i:i+n], a *forward* repeat is g again at some j with
i+n <= j <= i+window-n (after it, not overlapping it, and ending within `window` characters of
i); a *backward* repeat is g[::-1] in the same range. Palindromic n-grams (g == g[::-1]) are
both at once, so they are left out of both counts and of `positions`.

A position counts once however many repeats follow it: the share is of positions, not of pairs.
That is why the `reversed` corpus has nearly, not exactly, natural's shares: reversal keeps
every pair (same direction, same distance) but turns its earlier end, the one counted, into the
later one, and it changes the n-grams across document boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from ..records.provenance import Provenance
from ..settings import CorpusStatisticsSettings

SCHEMA = {"n": pl.Int64, "window": pl.Int64, "positions": pl.Int64, "forward": pl.Float64, "backward": pl.Float64,
          "forward_to_backward": pl.Float64}


def _codes(text: str) -> tuple[np.ndarray, int]:
    """The text as dense integer codes 0..A-1 (A: how many distinct characters it has)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    if not len(points):
        return points.astype(np.int64), 0
    present = np.zeros(int(points.max()) + 1, dtype=bool)
    present[points] = True
    return (np.cumsum(present) - 1)[points], int(present.sum())


def _gram_keys(codes: np.ndarray, size: int, n: int) -> np.ndarray:
    """The integer key of every n-gram: its characters as base-`size` digits, first one highest."""
    if size ** n >= 2 ** 62:
        raise ValueError(f"{size} distinct characters: {n}-grams do not fit in an int64 key")
    m = len(codes) - n + 1
    keys = np.zeros(m, dtype=np.int64)
    for k in range(n):
        keys = keys * size + codes[k:k + m]
    return keys


def _reversed_keys(keys: np.ndarray, size: int, n: int) -> np.ndarray:
    """The key of each n-gram read backwards (its digits in reverse order)."""
    rest, backwards = keys.copy(), np.zeros_like(keys)
    for _ in range(n):
        backwards = backwards * size + rest % size
        rest //= size
    return backwards


def _hits(keys: np.ndarray, stride: int, query: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Whether the n-gram of each query (id * stride + first allowed position) occurs at a position
    from there to `stop`. `keys` is the sorted id * stride + position of every occurrence, so the
    first occurrence at or after the query is one binary search away (sorted queries: fast)."""
    found = np.searchsorted(keys, query)
    hit = keys[np.minimum(found, len(keys) - 1)]
    return (found < len(keys)) & (hit // stride == query // stride) & (hit % stride <= stop)


def _repeat_row(codes: np.ndarray, size: int, n: int, window: int) -> dict:
    m = len(codes) - n + 1
    row = dict.fromkeys(SCHEMA) | {"n": n, "window": window, "positions": 0}
    if m <= 0:
        return row
    position_keys = _gram_keys(codes, size, n)
    # Every occurrence in (n-gram, position) order, the n-grams as dense ids, so that
    # id * stride + position stays inside int64; stride > every position + n: no carry into the id.
    positions = np.argsort(position_keys, kind="stable")
    ordered = position_keys[positions]
    del position_keys
    first = np.empty(m, dtype=bool)
    first[0], first[1:] = True, ordered[1:] != ordered[:-1]
    ids = np.cumsum(first) - 1
    grams = ordered[first]
    del ordered, first
    stride = len(codes) + 1
    keys = ids * stride + positions  # sorted
    reversal = _reversed_keys(grams, size, n)
    slot = np.minimum(np.searchsorted(grams, reversal), len(grams) - 1)
    reversed_id = np.where(grams[slot] == reversal, slot, -1)  # -1: the reversal never occurs
    counted = (reversal != grams)[ids]  # palindromes are both forward and backward repeats: left out
    del grams, reversal, slot
    stop = positions + window - n
    forward = int((_hits(keys, stride, keys + n, stop) & counted).sum())  # the queries keep the keys' order
    target = reversed_id[ids]
    wanted = counted & (target >= 0)
    query = np.sort(target[wanted] * stride + positions[wanted] + n)
    backward = int(_hits(keys, stride, query, query % stride - 2 * n + window).sum())
    total = int(counted.sum())
    row["positions"] = total
    if total:
        row["forward"] = forward / total
        row["backward"] = backward / total
        row["forward_to_backward"] = row["forward"] / row["backward"] if row["backward"] else None
    return row


def repeat_statistics(text: str, ns: Iterable[int] = (2, 3, 4), window: int = 256) -> pl.DataFrame:
    """Per n, the share of (non-palindromic) n-gram positions followed within `window` characters
    by the same n-gram (`forward`) and by its reversal (`backward`), and forward / backward.

    Palindromic n-grams are excluded from both shares and from `positions`: they would count as
    both directions at once. A repeat must start after the n-gram ends (in "ababab" the 4-gram
    "abab" at 0 overlaps its copy at 2, so it is no repeat) and end within `window` characters of
    the n-gram's start; positions near the text's end see a window cut short by it. A share is null
    with no positions, the ratio null where backward is 0. Vectorised (one sort and binary
    searches), O(N log N) per n."""
    codes, size = _codes(text)
    return pl.DataFrame([_repeat_row(codes, size, n, window) for n in ns], schema=SCHEMA)


def corpus_statistics(texts: dict[str, str], ns: Iterable[int] = (2, 3, 4), window: int = 256) -> pl.DataFrame:
    """`repeat_statistics` of each named corpus, stacked, the corpus name first."""
    ns = tuple(ns)
    return pl.concat([repeat_statistics(text, ns, window).select(pl.lit(name).alias("corpus"), pl.all())
                      for name, text in texts.items()])


def corpus_text(name: str, settings: CorpusStatisticsSettings) -> str:
    """One corpus variant's text as the pretrain stage builds it from these settings."""
    from .corpus import build_corpus

    return build_corpus(settings.corpus_chars, corpus=name, seed=settings.seed, insertion=settings.insertion)


def write_corpus_statistics(settings: CorpusStatisticsSettings, provenance: Provenance, outputs) -> None:
    """The repeat statistics table of every corpus in `settings.corpora`; provenance: the rule's
    config slice, recorded only; outputs: a rule's outputs (parquet, markdown)."""
    from ..records.tables import write_table

    texts = {name: corpus_text(name, settings) for name in settings.corpora}
    table = corpus_statistics(texts, settings.ns, settings.window)
    write_table(table, outputs, provenance.record(seed=settings.seed),
                title=f"Corpus repeats: forward vs backward n-gram repeats within {settings.window} characters")
