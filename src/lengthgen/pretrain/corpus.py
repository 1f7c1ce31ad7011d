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

from ..models.char_tokenizer import DEFAULT_CHARACTERS
from ..settings import InsertionSettings
from .variants import transform_document

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
    from pydoc_data.topics import topics

    allowed = frozenset(characters)
    documents = [topics[key] for key in sorted(topics)]
    documents += [path.read_text(encoding="utf-8", errors="ignore") for path in stdlib_files()]
    parts, size = [], 0
    for index, document in enumerate(documents):
        text = transform_document(_clean(document, allowed).strip(), corpus, index, seed, insertion) + "\n\n"
        if max_chars is not None and size + len(text) > max_chars:
            parts.append(text[:max_chars - size])
            break
        parts.append(text)
        size += len(text)
    return "".join(parts)


def corpus_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
