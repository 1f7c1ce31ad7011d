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

import numpy as np
import polars as pl

SCHEMA = {"n": pl.Int64, "window": pl.Int64, "positions": pl.Int64, "forward_count": pl.Int64,
          "backward_count": pl.Int64, "forward": pl.Float64, "backward": pl.Float64,
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


def _nearest(keys: np.ndarray, stride: int, query: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each query's n-gram (query: id * stride + first
    allowed position) at or after that position; -1 where there is none. `keys` is the sorted
    id * stride + position of every occurrence, so it is one binary search away (sorted queries: fast)."""
    found = np.searchsorted(keys, query)
    hit = keys[np.minimum(found, len(keys) - 1)]
    return np.where((found < len(keys)) & (hit // stride == query // stride), hit % stride, -1)


def _repeat_rows(codes: np.ndarray, size: int, n: int, windows: tuple[int, ...]) -> list[dict]:
    """One row per window: the n-gram positions followed by a repeat ending within it. The nearest
    repeat of each position is found once; a wider window only counts more of them."""
    m = len(codes) - n + 1
    empty = [dict.fromkeys(SCHEMA) | {"n": n, "window": w, "positions": 0, "forward_count": 0, "backward_count": 0}
             for w in windows]
    if m <= 0:
        return empty
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
    # how far past its own start each counted position's nearest repeat ends (-1: none)
    forward_at = _nearest(keys, stride, keys + n)[counted]  # the queries keep the keys' order
    forward_reach = np.where(forward_at >= 0, forward_at + n - positions[counted], -1)
    target = reversed_id[ids]
    wanted = counted & (target >= 0)
    query = target[wanted] * stride + positions[wanted] + n
    order = np.argsort(query, kind="stable")
    backward_at = np.empty(len(query), dtype=np.int64)
    backward_at[order] = _nearest(keys, stride, query[order])
    backward_reach = np.where(backward_at >= 0, backward_at + n - positions[wanted], -1)
    total = int(counted.sum())
    rows = []
    for row, window in zip(empty, windows):
        forward = int(((forward_reach >= 0) & (forward_reach <= window)).sum())
        backward = int(((backward_reach >= 0) & (backward_reach <= window)).sum())
        row.update(positions=total, forward_count=forward, backward_count=backward)
        if total:
            row["forward"], row["backward"] = forward / total, backward / total
            row["forward_to_backward"] = forward / backward if backward else None
        rows.append(row)
    return rows


def repeat_statistics(text: str, ns: Iterable[int] = (2, 3, 4), window: int = 256,
                      distances: Iterable[int] = ()) -> pl.DataFrame:
    """Per n and per window (each of `distances` below `window`, then `window`: the repeats by
    distance, cumulative), the (non-palindromic) n-gram positions followed within that many
    characters by the same n-gram (`forward_count`) and by its reversal (`backward_count`), their
    shares of the positions (`forward`, `backward`) and forward / backward.

    Palindromic n-grams are excluded from both shares and from `positions`: they would count as
    both directions at once. A repeat must start after the n-gram ends (in "ababab" the 4-gram
    "abab" at 0 overlaps its copy at 2, so it is no repeat) and end within `window` characters of
    the n-gram's start; positions near the text's end see a window cut short by it. A share is null
    with no positions, the ratio null where backward is 0. Vectorised (one sort and binary
    searches), O(N log N) per n."""
    codes, size = _codes(text)
    windows = tuple(sorted({d for d in distances if d < window})) + (window,)
    return pl.DataFrame([row for n in ns for row in _repeat_rows(codes, size, n, windows)], schema=SCHEMA)


def corpus_statistics(texts: dict[str, str], ns: Iterable[int] = (2, 3, 4), window: int = 256,
                      distances: Iterable[int] = (), reversed_shares: dict[str, float | None] | None = None
                      ) -> pl.DataFrame:
    """`repeat_statistics` of each named corpus, stacked, the corpus name first, then its size in
    characters and the share of its inserted copies that are reversed (null without copies), so
    that the table shows the corpora the same size and what each inserted."""
    ns, distances, shares = tuple(ns), tuple(distances), reversed_shares or {}
    return pl.concat([repeat_statistics(text, ns, window, distances)
                      .select(pl.lit(name).alias("corpus"), pl.lit(len(text)).alias("chars"),
                              pl.lit(shares.get(name), dtype=pl.Float64).alias("reversed_share"), pl.all())
                      for name, text in texts.items()])
