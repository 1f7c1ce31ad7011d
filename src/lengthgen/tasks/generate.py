"""Seeded, deterministic task data (docs/spec.md §1).

Inputs are drawn per *generator* (unique/non-unique retrieval/copy), never per task, so every
task that shares a generator -- in particular each left/right mirror pair -- gets the same
contexts and queries for a given (encoding, length, seed). Targets are then read off per task.

Symbols are integer indices into an alphabet; an *encoding* turns them into text:
``tokens`` ("s0 s4 s2", one vocabulary entry per symbol, for models trained from scratch) or
``chars`` ("AeC", one character per symbol, for pretrained models in context); ``finetune`` is
spelled like ``chars`` and has its own generator settings (the fine-tuning data).

Each generator has styles (`settings["style"]`). `controlled`, ours (docs/spec.md §1): every
occurrence of the query has both neighbours, occurrences are never adjacent, mirror tasks share
their inputs exactly. The authors' (their `fromscratch/create_datasets.py` and
`finetuning/*/generate_data.py`), each with their bugs fixed:
- `authors` retrieval from scratch. Unique: the query may sit at the end whose neighbour is not
  needed; both tasks of a mirror pair share every draw and the query is placed one position further
  for the left task, so their inputs are mirror images in distribution. Non-unique: the context
  uniform over the alphabet, the query picked from it, at least two occurrences, adjacent ones
  allowed; Last tasks reject a last occurrence that ends the context (theirs, for both), First
  tasks one that starts it (their NLFirst read the context's last symbol there: a bug).
- `pairs` (fine-tuning First/Last): (lowercase letter, digit) pairs, the query letter in 1-3 pair
  slots (never the first or last pair), other letters uniform (they may match it), 10% query-only
  variants (another letter of the same body asked); right = the digit of the query's pair, left =
  the digit of the previous pair. The length is the number of pairs. An example whose used
  occurrence is the first pair is dropped (for both tasks of the pair): their left tasks read the
  last pair's digit there, First and Last alike.
- `letters_digits` (fine-tuning UL/UR, `S||c`): letters or digits with probability 1/2 each, the
  query a symbol that occurs once, with the neighbour its task needs.
- `few_digits` (fine-tuning NF/NB): digit strings over 1-5 distinct digits.
- `authors_in_context` (their in-context `retrieval/` and `copying/generate_data.py`): non-unique
  retrieval as ours but with occurrences from the third symbol on; non-unique copy with their short
  strings (about 4 distinct symbols at length 5, ours 2) and a pool of floor(n/3) symbols (ours
  rounds).
Unique copy is the same in both (symbols without replacement); from-scratch non-unique copy with
`pool_fraction: null` is the authors' (uniform draws).
"""

from __future__ import annotations

import zlib

import numpy as np

from ..settings import DataFileSettings
from .definitions import Task
from .lengths import LengthBin

CHAR_SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
LOWERCASE = np.arange(26, 52)  # indices of a-z in CHAR_SYMBOLS
DIGITS = np.arange(52, 62)  # indices of 0-9
ENCODINGS = ("tokens", "chars", "finetune")
# Most symbols a generator may use per encoding (chars: 62 for retrieval, the 52 letters for copying).
MAX_ALPHABET = {
    ("chars", "unique_retrieval"): 62, ("chars", "nonunique_retrieval"): 62,
    ("chars", "unique_copy"): 52, ("chars", "nonunique_copy"): 52,
    ("finetune", "unique_retrieval"): 62, ("finetune", "nonunique_retrieval"): 62,
    ("finetune", "unique_copy"): 62, ("finetune", "nonunique_copy"): 62,
}
# Styles whose alphabet is fixed characters (alphabet_size does not apply), and how many context
# symbols one unit of their length is.
# `letters_digits` counts two characters a unit too, so that one fine-tuning retrieval bin serves
# UL/UR and First/Last at the authors' lengths (train up to 100 characters, test 102-200).
CHARACTER_STYLES = {"pairs": 2, "letters_digits": 2, "few_digits": 1}


# Shortest context a generator can make while keeping its constraints.
MIN_LENGTH: dict[str, int] = {
    "unique_retrieval": 3,  # q with both neighbours inside
    "nonunique_retrieval": 5,  # two non-adjacent interior occurrences
    "unique_copy": 1,
    "nonunique_copy": 2,  # every symbol at least twice needs two tokens
}


STYLE_MIN_LENGTH = {("unique_retrieval", "authors"): 2, ("nonunique_retrieval", "authors"): 3,
                    ("nonunique_retrieval", "pairs"): 3, ("unique_retrieval", "letters_digits"): 2,
                    ("nonunique_copy", "few_digits"): 1, ("nonunique_retrieval", "authors_in_context"): 6,
                    ("nonunique_copy", "authors_in_context"): 2}


def style_of(settings: dict) -> str:
    return settings.get("style", "controlled")


def min_length(generator: str, settings: dict) -> int:
    """Shortest length the generator can make under its constraints."""
    style = style_of(settings)
    if (generator, style) in STYLE_MIN_LENGTH:
        return STYLE_MIN_LENGTH[(generator, style)]
    if generator == "nonunique_copy" and settings.get("pool_fraction") is None:
        return 1  # plain uniform draws (the from-scratch setting) have no repeat guarantee
    return MIN_LENGTH[generator]


def symbols_used(settings: dict) -> int:
    """How many symbol indices the generator's examples can use (the fixed character styles reach
    the digits, the last of the 62 chars)."""
    return len(CHAR_SYMBOLS) if style_of(settings) in CHARACTER_STYLES else settings["alphabet_size"]


def length_unit(settings: dict) -> int:
    """Context symbols per unit of length (2 for the authors' letter-digit pairs)."""
    return CHARACTER_STYLES.get(style_of(settings), 1)


def generator_rng(generator: str, encoding: str, length_bin: LengthBin, seed: int,
                  stream: str | None = None) -> np.random.Generator:
    """The random stream of one generator; `stream` names further independent streams
    (training batches, validation sets) that never coincide with the evaluation files'."""
    key = [seed, zlib.crc32(generator.encode()), zlib.crc32(encoding.encode()), length_bin.low, length_bin.high]
    if stream is not None:
        key.append(zlib.crc32(stream.encode()))
    return np.random.default_rng(np.random.SeedSequence(key))


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


def _letters_digits_retrieval(rng, n, settings, task):
    n *= CHARACTER_STYLES["letters_digits"]
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


GENERATORS = {
    ("unique_retrieval", "controlled"): _unique_retrieval,
    ("unique_retrieval", "authors"): _authors_unique_retrieval,
    ("unique_retrieval", "letters_digits"): _letters_digits_retrieval,
    ("nonunique_retrieval", "controlled"): _nonunique_retrieval,
    ("nonunique_retrieval", "authors"): _authors_nonunique_retrieval,
    ("nonunique_retrieval", "pairs"): _pairs_retrieval,
    ("nonunique_retrieval", "authors_in_context"): _in_context_nonunique_retrieval,
    ("unique_copy", "controlled"): _unique_copy,
    ("nonunique_copy", "controlled"): _nonunique_copy,
    ("nonunique_copy", "few_digits"): _few_digits_copy,
    ("nonunique_copy", "authors_in_context"): _in_context_nonunique_copy,
}


def target_of(task: Task, context: list[int], occurrences: list[int]) -> tuple[list[int], int]:
    """The task's answer and, for retrieval, the occurrence of q it is read from."""
    if task.family == "copying":
        return (list(context) if task.induction else list(reversed(context))), -1
    position = occurrences[-1] if task.occurrence == "last" else occurrences[0]
    return [context[position + 1 if task.induction else position - 1]], position


def encode(symbols: list[int], encoding: str) -> str:
    if encoding in ("chars", "finetune"):
        return "".join(CHAR_SYMBOLS[s] for s in symbols)
    return " ".join(f"s{s}" for s in symbols)


def check_settings(task: Task, encoding: str, settings: dict, length_bin: LengthBin) -> None:
    """Raise ValueError for a setting the generator cannot honour."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; known: {', '.join(ENCODINGS)}")
    style = style_of(settings)
    if (task.generator, style) not in GENERATORS:
        known = ", ".join(s for g, s in GENERATORS if g == task.generator)
        raise ValueError(f"{task.generator} has no style {style!r}; known: {known}")
    if style in CHARACTER_STYLES and encoding == "tokens":
        raise ValueError(f"{task.generator} style {style} spells letters and digits: "
                         "it needs the chars or finetune encoding")
    alphabet = settings["alphabet_size"]
    limit = MAX_ALPHABET.get((encoding, task.generator))
    if limit is not None and alphabet > limit:
        raise ValueError(f"{task.generator} alphabet_size {alphabet} exceeds the {limit} symbols of the {encoding} encoding")
    if alphabet < 2:
        raise ValueError(f"{task.generator} alphabet_size must be at least 2, got {alphabet}")
    shortest = min_length(task.generator, settings)
    if length_bin.high < shortest:
        raise ValueError(f"length {length_bin} is too short for task {task.name}: it needs at least {shortest}")
    if task.generator == "unique_copy" and length_bin.high > alphabet:
        raise ValueError(
            f"unique copy of length {length_bin.high} needs that many distinct symbols; alphabet_size is {alphabet}")


def generate_inputs(task: Task, encoding: str, settings: dict, length_bin: LengthBin, count: int, seed: int,
                    stream: str | None = None):
    """Yield (context, query, occurrences) for `count` examples, shared by all tasks of the generator.

    Ranges start at the generator's shortest valid length when their low end is below it.
    """
    check_settings(task, encoding, settings, length_bin)
    rng = generator_rng(task.generator, encoding, length_bin, seed, stream)
    make = GENERATORS[(task.generator, style_of(settings))]
    low = max(length_bin.low, min_length(task.generator, settings))
    made = 0
    while made < count:
        made_one = make(rng, int(rng.integers(low, length_bin.high + 1)), settings, task)
        if made_one is None:
            continue  # rejected: drawn again from the length on, as the authors' generators do
        context, query, occurrences = made_one
        made += 1
        yield [int(s) for s in context], query, occurrences


def data_schema():
    """Columns of a data file (pyarrow is imported here only: training needs none of it)."""
    import pyarrow as pa

    return pa.schema([
        ("task", pa.string()),
        ("encoding", pa.string()),
        ("bin", pa.string()),  # the length bin of the file ("30" or "51-100")
        ("seed", pa.int32()),
        ("example", pa.int32()),  # index within the file
        ("length", pa.int32()),  # n, the length of this example (context symbols; pairs for `pairs`)
        ("context", pa.list_(pa.int16())),  # symbol indices x_1..x_n
        ("query", pa.int16()),  # retrieval query symbol; -1 for copying
        ("occurrences", pa.list_(pa.int32())),  # 0-based positions of the query in the context
        ("target_position", pa.int32()),  # occurrence the target is read from; -1 for copying
        ("target", pa.list_(pa.int16())),
        ("context_text", pa.string()),
        ("query_text", pa.string()),
        ("target_text", pa.string()),
    ])


def make_dataset(task: Task, encoding: str, settings: dict, length_bin: LengthBin, count: int, seed: int):
    """The examples of one (task, encoding, length bin, seed) as a table with `data_schema()`."""
    import pyarrow as pa

    schema = data_schema()
    rows = {name: [] for name in schema.names}
    for index, (context, query, occurrences) in enumerate(
            generate_inputs(task, encoding, settings, length_bin, count, seed)):
        target, target_position = target_of(task, context, occurrences)
        for name, value in (
            ("task", task.name), ("encoding", encoding), ("bin", str(length_bin)), ("seed", seed),
            ("example", index), ("length", len(context) // length_unit(settings)), ("context", context),
            ("query", query),
            ("occurrences", occurrences), ("target_position", target_position), ("target", target),
            ("context_text", encode(context, encoding)),
            ("query_text", encode([query], encoding) if query >= 0 else ""),
            ("target_text", encode(target, encoding)),
        ):
            rows[name].append(value)
    return pa.Table.from_pydict(rows, schema=schema)


def write_data_file(settings: DataFileSettings, path) -> None:
    """One data file (the task, encoding, bin and seed of `settings`) as parquet with its provenance."""
    from ..records.provenance import collect
    from ..records.tables import write_parquet
    from .definitions import get_task

    table = make_dataset(get_task(settings.task), settings.encoding, settings.settings,
                         LengthBin.parse(settings.bin), settings.examples, settings.seed)
    wildcards = {k: str(getattr(settings, k)) for k in ("encoding", "task", "bin", "seed")}
    write_parquet(table, path, collect(settings.as_config(), seed=settings.seed, extra={"wildcards": wildcards}))
