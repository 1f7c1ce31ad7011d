"""A pretraining corpus from text that ships with every Python interpreter.

Sources, in a fixed order: the `pydoc_data` help topics, then the standard library's source files
(docstrings included), sorted by path. Only natural text and code: no synthetic repeats, so any
induction bias a model learns comes from the text itself. Characters outside the tokenizer's set
are dropped. The same interpreter gives the same corpus, byte for byte; its hash goes into
provenance (a different Python version gives a different, equally valid corpus).
"""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

from ..models.characters import DEFAULT_CHARACTERS
from ..settings import INSERTED, InsertionSettings
from .variants import transform_document

SEPARATOR = "\n\n"  # between documents

# Folders of the standard library that are tests, vendored data or generated tables, not prose or code.
SKIPPED_PARTS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "encodings",
                 "lib2to3", "ensurepip", "turtledemo", "unicodedata"}


def _clean(text: str, allowed: frozenset[str]) -> str:
    return "".join(c for c in text if c in allowed)


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py")
                  if not SKIPPED_PARTS.intersection(p.relative_to(root).parts))


def build_corpus(max_chars: int | None = None, characters: str = DEFAULT_CHARACTERS, corpus: str = "natural",
                 seed: int = 0, insertion: InsertionSettings | None = None) -> str:
    """The text of a corpus variant (variants.py), at most `max_chars` characters (whole
    documents until the limit)."""
    return built_corpus(max_chars, characters, corpus, seed, insertion)[0]


def built_corpus(max_chars: int | None = None, characters: str = DEFAULT_CHARACTERS, corpus: str = "natural",
                 seed: int = 0, insertion: InsertionSettings | None = None) -> tuple[str, float | None]:
    """`build_corpus`'s text and the share of its copies that are reversed (None without copies;
    0.5 for alternating ones; solved for by `balancing_share` under `insertion.reversed: balance`).
    `max_chars` None: the natural corpus's size, so that a variant with copies inserted is as long
    as the natural text (it ends earlier in the documents) and no variant is simply more text."""
    documents = _documents(characters)
    if max_chars is None:
        max_chars = natural_chars(documents)
    if corpus != "balanced" or insertion is None:
        return _assemble(documents, max_chars, corpus, seed, insertion, None), INSERTED.get(corpus)
    if insertion.reversed == "alternate":
        return _assemble(documents, max_chars, corpus, seed, insertion, None), 0.5
    share = balancing_share(documents, max_chars, seed, insertion)
    return _assemble(documents, max_chars, corpus, seed, insertion, share), share


def balancing_share(documents: list[str], max_chars: int | None, seed: int, insertion: InsertionSettings,
                    refinements: int = 3) -> float:
    """The share of reversed copies after which the balanced corpus holds as many backward as
    forward repeats of `insertion.balance_n`-grams (within `balance_window` characters), to 0.5%.

    Every share reverses a growing subset of the same copies (variants.insert_copies), so the
    counts move almost linearly with it: the shares 0 and 1 bracket the answer and a few secant
    steps find it. Natural text repeats forwards (4-grams some 50 times more often than backwards),
    so the share is high, and a corpus whose copies are too few to balance even all reversed is an
    error naming the setting to raise."""
    from .statistics import repeat_statistics

    def gap(share: float) -> tuple[float, int]:
        text = _assemble(documents, max_chars, "balanced", seed, insertion, share)
        row = repeat_statistics(text, (insertion.balance_n,), insertion.balance_window).row(0, named=True)
        return row["forward_count"] - row["backward_count"], row["forward_count"]

    (low_gap, _), (high_gap, forward) = gap(0.0), gap(1.0)
    if high_gap > 0:
        raise ValueError(f"pretrain.insertion.share {insertion.share} cannot balance the corpus: with every copy "
                         f"reversed it still has {high_gap} more forward than backward {insertion.balance_n}-gram "
                         f"repeats ({forward} forward); raise pretrain.insertion.share")
    if low_gap <= 0:
        return 0.0
    low, high = 0.0, 1.0
    share = low_gap / (low_gap - high_gap)
    for _ in range(refinements):
        now, forward = gap(share)
        if abs(now) <= 0.005 * forward:
            break
        if now > 0:
            low, low_gap = share, now
        else:
            high, high_gap = share, now
        share = low + (high - low) * low_gap / (low_gap - high_gap)
    return share


def natural_chars(documents: list[str]) -> int:
    """The size of the whole natural corpus (and of the reversed one): every document and its separator."""
    return sum(len(document) + len(SEPARATOR) for document in documents)


def _documents(characters: str) -> list[str]:
    """The natural documents in their order, cleaned of characters outside `characters` and stripped."""
    from pydoc_data.topics import topics

    allowed = frozenset(characters)
    documents = [topics[key] for key in sorted(topics)]
    documents += [path.read_text(encoding="utf-8", errors="ignore") for path in stdlib_files()]
    return [_clean(document, allowed).strip() for document in documents]


def _assemble(documents: list[str], max_chars: int | None, corpus: str, seed: int,
              insertion: InsertionSettings | None, reversed_share: float | None) -> str:
    parts, size = [], 0
    for index, document in enumerate(documents):
        text = transform_document(document, corpus, index, seed, insertion, reversed_share) + SEPARATOR
        if max_chars is not None and size + len(text) > max_chars:
            parts.append(text[:max_chars - size])
            break
        parts.append(text)
        size += len(text)
    return "".join(parts)


def corpus_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
