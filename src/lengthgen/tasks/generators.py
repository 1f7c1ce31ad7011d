"""The input generators, as data: one record per generator (what tasks sharing inputs share).

A generator's record holds everything that depends on "which inputs are these": its draws per
style, the shortest length each can make, its demonstration pool, the most symbols each encoding
spells, whether its symbols are all distinct, and its settings' schema with each encoding's
defaults. Tasks name their generator (`Task.generator`); nothing else keys a table by its name, so a
new input kind is one record passed to `register_generator` (docs/architecture.md, "Adding a task").
The draws themselves and the styles are described in `generate.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

CHAR_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
LOWERCASE = np.arange(26, 52)  # indices of a-z in CHAR_SYMBOLS
DIGITS = np.arange(52, 62)  # indices of 0-9
ENCODINGS = ("tokens", "chars", "finetune")

# draw(rng, length, settings, task) -> (context, query, occurrences), or None to draw again.
Draw = Callable[..., Any]


@dataclass(frozen=True)
class Style:
    """One way a generator draws its inputs (`settings["style"]`)."""

    draw: Draw
    min_length: int | Callable[[Mapping], int] | None = None  # shortest length, when not the generator's
    unit: int = 1  # context symbols per unit of length (2 for letter-digit pairs)
    fixed_characters: bool = False  # spells fixed letters and digits: alphabet_size unused, no `tokens`


@dataclass(frozen=True)
class Generator:
    name: str
    styles: Mapping[str, Style]  # by style name; "controlled" is the default
    min_length: int  # shortest context the controlled style can make under its constraints
    pool: tuple[int, int]  # the few-shot demonstration pool: (context length, examples)
    settings_schema: str | Mapping  # a `$defs` entry of config.schema.yaml, or the JSON schema itself
    defaults: Mapping[str, Mapping] = field(default_factory=dict)  # per encoding, the schema's defaults
    max_alphabet: Mapping[str, int] = field(default_factory=dict)  # most symbols per character encoding
    distinct: bool = False  # every symbol of a context distinct: a length needs that many symbols

    def style(self, settings: Mapping) -> Style:
        return self.styles[style_of(settings)]

    def shortest(self, settings: Mapping) -> int:
        """Shortest length this generator can make under `settings`."""
        shortest = self.style(settings).min_length
        if shortest is None:
            return self.min_length
        return shortest(settings) if callable(shortest) else shortest


def style_of(settings: Mapping) -> str:
    return settings.get("style", "controlled")


def _draw_without(rng: np.random.Generator, alphabet: int, excluded: int, size: int) -> np.ndarray:
    """Uniform draws with replacement from the alphabet minus one symbol."""
    draws = rng.integers(0, alphabet - 1, size=size)
    return draws + (draws >= excluded)


def _unique_retrieval(rng, n, settings, task):
    alphabet = settings["alphabet_size"]
    query = int(rng.integers(alphabet))
    context = _draw_without(rng, alphabet, query, n)
    position = int(rng.integers(1, n - 1))  # both neighbours inside
    context[position] = query
    return context, query, [position]


def _nonunique_retrieval(rng, n, settings, task, first: int = 1):
    """Occurrences at non-adjacent positions first..n-2 (ours: from 1, every one with both neighbours)."""
    alphabet = settings["alphabet_size"]
    query = int(rng.integers(alphabet))
    context = _draw_without(rng, alphabet, query, n)
    interior = n - 1 - first  # positions first..n-2
    most = min(max(2, n // settings["occurrence_divisor"]), (interior + 1) // 2)
    count = int(rng.integers(2, most + 1))
    # Uniform non-adjacent subset: choose `count` of `interior - count + 1` slots, then spread them.
    slots = np.sort(rng.choice(interior - count + 1, size=count, replace=False))
    positions = slots + np.arange(count) + first
    context[positions] = query
    return context, query, positions.tolist()


def _in_context_nonunique_retrieval(rng, n, settings, task):
    """The authors' in-context generator (retrieval/generate_data.py): as ours, but occurrences drawn
    from positions 2..n-2, so the first one is never the second symbol."""
    return _nonunique_retrieval(rng, n, settings, task, first=2)


def _unique_copy(rng, n, settings, task):
    return rng.choice(settings["alphabet_size"], size=n, replace=False), -1, []


def _nonunique_copy(rng, n, settings, task):
    alphabet, fraction = settings["alphabet_size"], settings.get("pool_fraction")
    if fraction is None:
        return rng.integers(0, alphabet, size=n), -1, []
    pool_size = max(1, min(alphabet, round(n * fraction), n // 2))
    pool = rng.choice(alphabet, size=pool_size, replace=False)
    sequence = np.concatenate([pool, pool, rng.choice(pool, size=n - 2 * pool_size)])
    return rng.permutation(sequence), -1, []


def _in_context_nonunique_copy(rng, n, settings, task):
    """The authors' in-context generator (copying/generate_data.py). Up to 5 symbols: uniform draws,
    and when all differ, the last made a copy of an earlier one (so about 4 distinct at length 5,
    where ours has 2); longer: a pool of floor(n/3) symbols (at most n/2), each used twice, the rest
    drawn from it, shuffled (ours rounds n/3: one symbol more at lengths 20 and 50)."""
    alphabet = settings["alphabet_size"]
    if n <= 5:
        sequence = rng.integers(0, alphabet, size=n)
        if len(set(sequence.tolist())) == n:
            sequence[-1] = sequence[rng.integers(0, n - 1)]
        return sequence, -1, []
    pool = rng.choice(alphabet, size=min(n // 2, max(2, n // 3), alphabet), replace=False)
    sequence = np.concatenate([pool, pool, rng.choice(pool, size=n - 2 * len(pool))])
    return rng.permutation(sequence), -1, []


def _authors_unique_retrieval(rng, n, settings, task):
    alphabet = settings["alphabet_size"]
    query = int(rng.integers(alphabet))
    others = _draw_without(rng, alphabet, query, n - 1)
    position = int(rng.integers(0, n - 1)) + (not task.induction)  # the needed neighbour always exists
    return np.insert(others, position, query), query, [position]


def _authors_nonunique_retrieval(rng, n, settings, task):
    context = rng.integers(0, settings["alphabet_size"], size=n)
    query = int(context[rng.integers(n)])
    occurrences = np.flatnonzero(context == query).tolist()
    if len(occurrences) < 2:
        return None
    if (task.occurrence == "last" and occurrences[-1] == n - 1) or (task.occurrence == "first" and occurrences[0] == 0):
        return None
    return context, query, occurrences


def _pairs_retrieval(rng, n, settings, task):
    letters = rng.choice(LOWERCASE, size=n)
    query = int(rng.choice(LOWERCASE))
    slots = rng.choice(np.arange(1, n - 1), size=int(rng.integers(1, min(3, n - 2) + 1)), replace=False)
    letters[slots] = query
    digits = rng.choice(DIGITS, size=n)
    if rng.random() < 0.1:  # a query-only variant: another letter of the same body is asked
        others = sorted(set(letters.tolist()) - {query})
        query = int(rng.choice(others)) if others else query
    context = np.stack([letters, digits], axis=1).reshape(-1)
    occurrences = np.flatnonzero(context == query).tolist()
    if (occurrences[-1] if task.occurrence == "last" else occurrences[0]) == 0:
        return None  # no previous pair: their *_left read the last pair's digit (a bug); mirrors drop it too
    return context, query, occurrences


# `letters_digits` counts two characters a unit too, so that one fine-tuning retrieval bin serves
# UL/UR and First/Last at the authors' lengths (train up to 100 characters, test 102-200).
LETTERS_DIGITS_UNIT = 2


def _letters_digits_retrieval(rng, n, settings, task):
    n *= LETTERS_DIGITS_UNIT
    is_letter = rng.random(n) < 0.5
    context = np.where(is_letter, rng.choice(LOWERCASE, size=n), rng.choice(DIGITS, size=n))
    symbols, counts = np.unique(context, return_counts=True)
    once = symbols[counts == 1]
    if not len(once):
        return None
    query = int(rng.choice(once))
    position = int(np.flatnonzero(context == query)[0])
    if position in (0, n - 1):
        return None  # the authors dropped an example whose needed neighbour is missing; mirrors share
    return context, query, [position]


def _few_digits_copy(rng, n, settings, task):
    digits = rng.choice(DIGITS, size=int(rng.integers(1, 6)), replace=False)
    return rng.choice(digits, size=n), -1, []


def _copy_min_length(settings: Mapping) -> int:
    # plain uniform draws (the from-scratch setting) have no repeat guarantee; a pool needs two tokens
    return 1 if settings.get("pool_fraction") is None else 2


_CHARS_RETRIEVAL = {"chars": 62, "finetune": 62}
_CHARS_COPY = {"chars": 52, "finetune": 62}
_RETRIEVAL_DEFAULTS = {"tokens": {}, "chars": {"alphabet_size": 62}, "finetune": {"alphabet_size": 62}}
_COPY_DEFAULTS = {"tokens": {}, "chars": {"alphabet_size": 52}, "finetune": {"alphabet_size": 52}}
_POOLED = {"alphabet_size": 52, "pool_fraction": 0.333}

_BUILT_IN = [
    Generator("unique_retrieval", {
        "controlled": Style(_unique_retrieval),
        "authors": Style(_authors_unique_retrieval, min_length=2),
        "letters_digits": Style(_letters_digits_retrieval, min_length=2, unit=LETTERS_DIGITS_UNIT, fixed_characters=True),
    }, min_length=3, pool=(5, 100), settings_schema="retrieval_unique", defaults=_RETRIEVAL_DEFAULTS,
        max_alphabet=_CHARS_RETRIEVAL),  # q with both neighbours inside
    Generator("nonunique_retrieval", {
        "controlled": Style(_nonunique_retrieval),
        "authors": Style(_authors_nonunique_retrieval, min_length=3),
        "pairs": Style(_pairs_retrieval, min_length=3, unit=2, fixed_characters=True),
        "authors_in_context": Style(_in_context_nonunique_retrieval, min_length=6),
    }, min_length=5, pool=(6, 1500), settings_schema="retrieval_nonunique", defaults=_RETRIEVAL_DEFAULTS,
        max_alphabet=_CHARS_RETRIEVAL),  # two non-adjacent interior occurrences
    Generator("unique_copy", {"controlled": Style(_unique_copy)}, min_length=1, pool=(5, 1500),
              settings_schema="copy_unique", defaults=_COPY_DEFAULTS, max_alphabet=_CHARS_COPY, distinct=True),
    Generator("nonunique_copy", {
        "controlled": Style(_nonunique_copy, min_length=_copy_min_length),
        "few_digits": Style(_few_digits_copy, min_length=1, fixed_characters=True),
        "authors_in_context": Style(_in_context_nonunique_copy, min_length=2),
    }, min_length=2, pool=(5, 1500), settings_schema="copy_nonunique",
        defaults={"tokens": {}, "chars": _POOLED, "finetune": _POOLED}, max_alphabet=_CHARS_COPY),
]
_GENERATORS: dict[str, Generator] = {g.name: g for g in _BUILT_IN}
GENERATORS: Mapping[str, Generator] = MappingProxyType(_GENERATORS)


def register_generator(generator: Generator) -> None:
    """Add an input generator's record (before the tasks that name it; see `register_task`)."""
    if generator.name in _GENERATORS:
        raise ValueError(f"generator {generator.name!r} is already a record")
    if "controlled" not in generator.styles:
        raise ValueError(f"generator {generator.name!r} needs a 'controlled' style (the default)")
    missing = set(ENCODINGS) - set(generator.defaults)
    if missing:
        raise ValueError(f"generator {generator.name!r} gives no defaults for encodings {sorted(missing)}")
    _GENERATORS[generator.name] = generator


def get_generator(name: str) -> Generator:
    try:
        return _GENERATORS[name]
    except KeyError:
        raise ValueError(f"unknown generator {name!r}; known generators: {', '.join(_GENERATORS)}") from None


def symbols_used(generator: str, settings: Mapping) -> int:
    """How many symbol indices the generator's examples can use (the fixed character styles reach
    the digits, the last of the 62 chars)."""
    fixed = get_generator(generator).style(settings).fixed_characters
    return len(CHAR_SYMBOLS) if fixed else settings["alphabet_size"]


def length_unit(generator: str, settings: Mapping) -> int:
    """Context symbols per unit of length (2 for the authors' letter-digit pairs)."""
    return get_generator(generator).style(settings).unit
