"""The theory, executable: every task's C-RASP[pos] program run on every example of the run.

A program's output on an example is what it generates after the task's prompt (retrieval
`x_1 … x_n ⟨sep⟩ q`, copying `x_1 … x_n ⟨sep⟩`) until no NEXT_a holds; it is right when that is the
target, exactly. The sets: every data file of the run, and per (encoding, task) strings ten times
longer than its longest test bin, made for the check with the same generator settings, except
- a generator of distinct symbols (unique copy) needs as many symbols as the copy is long: its
  alphabet grows to that length (spelled as `tokens`: the character encodings have only 52 or 62 characters);
- `letters_digits` (a symbol that occurs once among 36 letters and digits) almost never exists at
  that length: those strings are `controlled` over the same 62 characters.
An expressible task below 1.0 anywhere stops the check with the first example its program fails on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..records.provenance import Provenance
from ..theory import NONE, generate, next_symbols
from .datafile import read_examples
from .definitions import TASKS, Task, get_task
from .generate import encode, generate_inputs, target_of
from .generators import CHAR_SYMBOLS, get_generator, style_of, symbols_used
from .lengths import LengthBin

TENFOLD = 10  # the check's longest strings: this many times the longest test bin
TENFOLD_EXAMPLES = 100  # strings per (encoding, task, seed) at that length
TENFOLD_STREAM = "theory_check"
COLUMNS = ["encoding", "task", "program", "lengths", "bin", "seeds", "examples", "correct", "share"]


class TheoryCheckFailed(AssertionError):
    """An expressible task's program gives a wrong answer on an example of the run."""


@dataclass
class ExampleSet:
    """Examples of one task, encoding, length bin and seed: a data file or a set made for the check."""

    task: Task
    encoding: str
    bin: str
    seed: int
    lengths: str  # "test": a data file of the run; "10x": made for the check
    alphabet_size: int  # |Σ|; the separator is the next symbol
    examples: list[int]
    contexts: list[list[int]]
    queries: list[int]
    targets: list[list[int]]

    def prompt(self, k: int) -> list[int]:
        """What the task gives its model: the context, the separator and, for retrieval, the query."""
        query = [self.queries[k]] if self.task.family == "retrieval" else []
        return list(self.contexts[k]) + [self.alphabet_size] + query


def score(examples: ExampleSet) -> np.ndarray:
    """Per example, whether the program generates exactly the target (read in one pass over prompt and
    target: a value at a position depends on the positions up to it only)."""
    prompts = [examples.prompt(k) for k in range(len(examples.examples))]
    strings = [p + list(t) for p, t in zip(prompts, examples.targets)]
    reads = next_symbols(examples.task.program, strings, examples.alphabet_size)
    return np.array([read[len(p) - 1:].tolist() == list(t) + [NONE]
                     for read, p, t in zip(reads, prompts, examples.targets)], dtype=bool)


def spell(symbols: list[int], examples: ExampleSet) -> str:
    """Symbols as the encoding writes them (as `tokens` where it has no character for each)."""
    characters = examples.encoding != "tokens" and examples.alphabet_size <= len(CHAR_SYMBOLS)
    return encode(symbols, examples.encoding if characters else "tokens") or "(nothing)"


def failure(examples: ExampleSet, k: int) -> str:
    """One line naming the example and what the program made of it, generated symbol by symbol."""
    task, target = examples.task, examples.targets[k]
    made, ending = generate(task.program, examples.prompt(k), examples.alphabet_size, limit=len(target) + 1)
    produced = spell(made, examples) + {"end": "", "ambiguous": " then several symbols at once",
                                        "limit": " and more"}[ending]
    query = f", query {spell([examples.queries[k]], examples)}" if task.family == "retrieval" else ""
    return (f"theory check: the C-RASP[pos] program of {task.name} ({task.program.name}) fails on "
            f"{examples.encoding}/{task.name}/{examples.bin} ({examples.lengths}) seed {examples.seed} example "
            f"{examples.examples[k]}: context {spell(examples.contexts[k], examples)}{query}: expected "
            f"{spell(target, examples)}, produced {produced}")


def data_set(path, data: Mapping) -> ExampleSet:
    """The examples of one data file (columns of `generate.data_schema`)."""
    columns = read_examples(path, columns=["task", "encoding", "bin", "seed", "example", "context", "query",
                                           "target"]).to_pydict()
    task, encoding = get_task(columns["task"][0]), columns["encoding"][0]
    settings = data[encoding][task.generator]
    return ExampleSet(task, encoding, columns["bin"][0], columns["seed"][0], "test", symbols_used(task.generator, settings),
                      columns["example"], columns["context"], columns["query"], columns["target"])


def tenfold_settings(task: Task, encoding: str, settings: dict, length: int) -> tuple[str, dict]:
    """The generator settings (and the encoding to generate under) of the check's longest strings."""
    settings = dict(settings)
    generator = get_generator(task.generator)
    if style_of(settings) == "letters_digits":
        settings.update(style="controlled", alphabet_size=symbols_used(generator.name, settings))
    if generator.distinct:
        settings["alphabet_size"] = max(settings["alphabet_size"], length)
    limit = generator.max_alphabet.get(encoding)
    return ("tokens" if limit is not None and settings["alphabet_size"] > limit else encoding), settings


def tenfold_set(task: Task, encoding: str, longest: LengthBin, seed: int, data: Mapping) -> ExampleSet:
    """Strings TENFOLD times the longest test bin, from the generator's own stream for the check."""
    length = LengthBin(TENFOLD * longest.high, TENFOLD * longest.high)
    generated_as, settings = tenfold_settings(task, encoding, data[encoding][task.generator], length.high)
    contexts, queries, targets = [], [], []
    for context, query, occurrences in generate_inputs(task, generated_as, settings, length, TENFOLD_EXAMPLES, seed,
                                                       stream=TENFOLD_STREAM):
        contexts.append(context)
        queries.append(query)
        targets.append(target_of(task, context, occurrences)[0])
    return ExampleSet(task, encoding, str(length), seed, f"{TENFOLD}x", symbols_used(task.generator, settings),
                      list(range(len(contexts))), contexts, queries, targets)


def example_sets(paths, data: Mapping):
    """Every data file of a task with a program, then the check's longest strings of each (encoding,
    task, seed) those files have."""
    longest: dict[tuple[str, str], LengthBin] = {}
    seeds: dict[tuple[str, str], set[int]] = {}
    for path in paths:
        examples = data_set(path, data)
        if examples.task.program is None:
            continue
        key = (examples.encoding, examples.task.name)
        length_bin = LengthBin.parse(examples.bin)
        longest[key] = max(longest.get(key, length_bin), length_bin, key=lambda b: b.high)
        seeds.setdefault(key, set()).add(examples.seed)
        yield examples
    for (encoding, name), length_bin in longest.items():
        for seed in sorted(seeds[(encoding, name)]):
            yield tenfold_set(get_task(name), encoding, length_bin, seed, data)


def theory_check(paths, data: Mapping) -> pl.DataFrame:
    """Per (encoding, task, bin), the share of examples on which the task's program outputs the target;
    raises TheoryCheckFailed at the first example an expressible task's program gets wrong."""
    rows = []
    for examples in example_sets(paths, data):
        correct = score(examples)
        if not correct.all():
            raise TheoryCheckFailed(failure(examples, int(np.flatnonzero(~correct)[0])))
        rows.append({"encoding": examples.encoding, "task": examples.task.name, "program": examples.task.program.name,
                     "lengths": examples.lengths, "bin": examples.bin, "seed": examples.seed,
                     "examples": len(correct), "correct": int(correct.sum())})
    if not rows:
        return pl.DataFrame(schema={c: pl.Utf8 for c in COLUMNS})
    frame = pl.DataFrame(rows).group_by(["encoding", "task", "program", "lengths", "bin"], maintain_order=True).agg(
        pl.col("seed").n_unique().alias("seeds"), pl.col("examples").sum(), pl.col("correct").sum())
    frame = frame.with_columns((pl.col("correct") / pl.col("examples")).alias("share"),
                               pl.col("task").map_elements(list(TASKS).index, return_dtype=pl.Int64).alias("order"),
                               pl.col("bin").map_elements(lambda b: LengthBin.parse(b).low, return_dtype=pl.Int64)
                               .alias("low"))
    return frame.sort(["encoding", "order", "low"]).select(COLUMNS)


def write_theory_check(paths, data: Mapping, provenance: Provenance, outputs) -> None:
    """data: the config's generator settings per encoding (`data:`)."""
    from ..records.tables import to_markdown, write_table

    frame = theory_check(paths, data)
    provenance = provenance.record()
    markdown = (f"# Theory, executable: each task's C-RASP[pos] program on the run's examples\n\n"
                f"Share of examples on which the program generates exactly the target: every data file of the run "
                f"(`test`) and, per encoding and task, {TENFOLD_EXAMPLES} strings per seed {TENFOLD} times its "
                f"longest test bin (`{TENFOLD}x`; unique copy over as many symbols as the copy is long). The "
                f"programs are in the theory table.\n\n" + to_markdown(frame)
                + f"\nconfig hash {provenance['config_hash']}, code {provenance['code_version']}, "
                  f"device {provenance['device']}\n")
    write_table(frame, outputs, provenance, markdown=markdown)
