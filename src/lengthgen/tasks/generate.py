"""Seeded, deterministic task data (docs/spec.md §1).

Inputs are drawn per *generator* (unique/non-unique retrieval/copy), never per task, so every
task that shares a generator -- in particular each left/right mirror pair -- gets the same
contexts and queries for a given (encoding, length, seed). Targets are then read off per task.

Symbols are integer indices into an alphabet; an *encoding* turns them into text:
``tokens`` ("s0 s4 s2", one vocabulary entry per symbol, for models trained from scratch) or
``chars`` ("AeC", one character per symbol, for pretrained models in context); ``finetune`` is
spelled like ``chars`` and has its own generator settings (the fine-tuning data).

Each generator (a record in `generators.py`, which holds the draws) has styles
(`settings["style"]`). `controlled`, ours (docs/spec.md §1): every occurrence of the query has
both neighbours, occurrences are never adjacent, mirror tasks share their inputs exactly. The
authors' (their `fromscratch/create_datasets.py` and `finetuning/*/generate_data.py`), each with
their bugs fixed:
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
from .generators import CHAR_SYMBOLS, DIGITS, ENCODINGS, LOWERCASE, get_generator, length_unit, style_of
from .lengths import LengthBin

__all__ = ["CHAR_SYMBOLS", "DIGITS", "ENCODINGS", "LOWERCASE", "check_settings", "encode", "generate_inputs",
           "make_dataset", "target_of", "write_data_file"]


def generator_rng(generator: str, encoding: str, length_bin: LengthBin, seed: int,
                  stream: str | None = None) -> np.random.Generator:
    """The random stream of one generator; `stream` names further independent streams
    (training batches, validation sets) that never coincide with the evaluation files'."""
    key = [seed, zlib.crc32(generator.encode()), zlib.crc32(encoding.encode()), length_bin.low, length_bin.high]
    if stream is not None:
        key.append(zlib.crc32(stream.encode()))
    return np.random.default_rng(np.random.SeedSequence(key))


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
    generator = get_generator(task.generator)
    style = style_of(settings)
    if style not in generator.styles:
        raise ValueError(f"{generator.name} has no style {style!r}; known: {', '.join(generator.styles)}")
    if generator.styles[style].fixed_characters and encoding == "tokens":
        raise ValueError(f"{generator.name} style {style} spells letters and digits: "
                         "it needs the chars or finetune encoding")
    alphabet = settings["alphabet_size"]
    limit = generator.max_alphabet.get(encoding)
    if limit is not None and alphabet > limit:
        raise ValueError(f"{generator.name} alphabet_size {alphabet} exceeds the {limit} symbols of the {encoding} encoding")
    if alphabet < 2:
        raise ValueError(f"{generator.name} alphabet_size must be at least 2, got {alphabet}")
    shortest = generator.shortest(settings)
    if length_bin.high < shortest:
        raise ValueError(f"length {length_bin} is too short for task {task.name}: it needs at least {shortest}")
    if generator.distinct and length_bin.high > alphabet:
        raise ValueError(f"{generator.name.replace('_', ' ')} of length {length_bin.high} needs that many distinct "
                         f"symbols; alphabet_size is {alphabet}")


def generate_inputs(task: Task, encoding: str, settings: dict, length_bin: LengthBin, count: int, seed: int,
                    stream: str | None = None):
    """Yield (context, query, occurrences) for `count` examples, shared by all tasks of the generator.

    Ranges start at the generator's shortest valid length when their low end is below it.
    """
    check_settings(task, encoding, settings, length_bin)
    rng = generator_rng(task.generator, encoding, length_bin, seed, stream)
    generator = get_generator(task.generator)
    make = generator.style(settings).draw
    low = max(length_bin.low, generator.shortest(settings))
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
            ("example", index), ("length", len(context) // length_unit(task.generator, settings)), ("context", context),
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
