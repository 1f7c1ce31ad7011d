"""C-RASP[pos], executable: the interpreter against hand counts, the tasks' programs on every generator
style, and the check that stops a run on the first example a program gets wrong."""

import dataclasses

import numpy as np
import pyarrow.parquet as pq
import pytest

from lengthgen.tasks import TASKS, LengthBin, definitions
from lengthgen.tasks.generate import make_dataset
from lengthgen.tasks.generators import symbols_used
from lengthgen.tasks.theory import theory_table
from lengthgen.tasks.theory_check import ExampleSet, TheoryCheckFailed, score, tenfold_settings, theory_check
from lengthgen.theory import (
    AMBIGUOUS,
    NEXT,
    NONE,
    SEPARATOR,
    Conditional,
    Count,
    Is,
    Match,
    Periodic,
    Program,
    Top,
    evaluate,
    generate,
    next_symbols,
)
from lengthgen.theory.plain import expand_program, is_plain

PROGRAMMED = ["UR", "UL", "NRFirst", "NLFirst", "UF", "UB"]
STRING = [[0, 1, 0, 0, 1]]  # x_1 … x_5 over an alphabet of two symbols


def values(node, string=STRING, alphabet_size=2):
    return evaluate(node, np.array(string), alphabet_size)[0].tolist()


@pytest.mark.parametrize("node, expected", [
    (Count(Is(0)), [1, 1, 2, 3, 3]),  # #[j ≤ i] Q_0(j)
    (Count(Is(0), distance=1), [0, 1, 0, 1, 1]),  # #[j ≤ i, j = i − 1] Q_0(j)
    (Count(Top(), match=Match(0, 0)), [1, 1, 2, 3, 2]),  # #[j ≤ i](x_j = x_i)
    (Count(Is(1), match=Match(1, 0)), [0, 0, 1, 1, 0]),  # #[j ≤ i](x_{j−1} = x_i ∧ x_j = 1)
    (2 * Count(Is(0)) - Count(Top()) + 1, [2, 1, 2, 3, 2]),
    (Count(Is(0)) >= Count(Is(1)) + 1, [True, False, True, True, True]),  # 1≥1, 1≥2, 2≥2, 3≥2, 3≥3
    (Count(Is(0)) == 3, [False, False, False, True, True]),
    (Conditional(Is(0), Count(Is(0)), Count(Is(1))), [1, 1, 2, 3, 2]),
    (Periodic(2, 1), [True, False, True, False, True]),  # i ≡ 1 (mod 2), positions from 1
    (Is(1, back=1), [False, False, True, False, False]),
    (Is(0) & ~Is(0, back=1), [True, False, True, False, False]),
    (Is(1) | Periodic(5, 0), [False, True, False, False, True]),
])
def test_operations_against_hand_counts(node, expected):
    assert values(node) == expected


def test_an_operation_on_the_output_symbol_has_a_value_per_symbol():
    assert values(Is(NEXT, back=1)) == [[False, False], [True, False], [False, True], [True, False], [True, False]]
    # #[j ≤ i](x_{j−1} = x_i ∧ x_j = a): the bigrams (x_i, a) seen so far
    assert values(Count(Is(NEXT), match=Match(1, 0))) == [[0, 0], [0, 0], [0, 1], [1, 1], [1, 0]]


def test_next_symbols_reads_one_symbol_none_or_ambiguous():
    previous = Program("previous", Is(NEXT, back=1))
    assert next_symbols(previous, STRING, 2)[0].tolist() == [NONE, 0, 1, 0, 0]
    either = Program("either", Is(NEXT) | Is(NEXT, back=1))
    assert next_symbols(either, STRING, 2)[0].tolist() == [0, AMBIGUOUS, AMBIGUOUS, 0, AMBIGUOUS]
    # Strings of other lengths in one call: each read on its own, as if alone.
    assert [r.tolist() for r in next_symbols(previous, [[1], [0, 1, 1]], 2)] == [[NONE], [NONE, 0, 1]]
    with pytest.raises(ValueError, match="symbols must lie in 0..2"):
        next_symbols(previous, [[0, 3]], 2)


def test_generation_stops_where_no_next_symbol_holds():
    # NEXT_a(i) := x_i = ⟨sep⟩ ∧ x_{i−1} = a: after 0 1 ⟨sep⟩ it writes 1, then nothing holds
    program = Program("one step", Is(SEPARATOR) & Is(NEXT, back=1))
    assert generate(program, [0, 1, 2], 2, limit=5) == ([1], "end")
    # NEXT_a(i) := x_{i−1} = a never ends: 0 1 -> 0, 0 1 0 -> 1, 0 1 0 1 -> 0
    assert generate(Program("echo", Is(NEXT, back=1)), [0, 1], 2, limit=3) == ([0, 1, 0], "limit")


def test_the_written_out_programs_are_plain_c_rasp_and_agree_with_the_shorthand():
    """Match, Is(σ, back) and NEXT are shorthands: written out per symbol, they give the same values."""
    strings = np.random.default_rng(0).integers(0, 4, size=(300, 9))  # alphabet of 3, separator 3, anywhere
    for name in PROGRAMMED:
        program = TASKS[name].program
        plain = expand_program(program, 3)
        assert all(is_plain(operation) for operation in plain.values()), name
        written_out = np.stack([evaluate(plain[a], strings, 3) for a in range(3)], axis=-1)
        assert (evaluate(program.next, strings, 3) == written_out).all(), name


def test_a_program_reads_as_the_paper_writes_it():
    assert TASKS["UR"].program.lines() == [
        "QUERY(i) := x_{i−1} = ⟨sep⟩",
        "NEXT_a(i) := QUERY(i) ∧ #[j ≤ i](x_{j−1} = x_i ∧ x_j = a) ≥ 1"]
    assert TASKS["NRFirst"].program.lines()[1] == "FIRST(i) := #[j ≤ i](x_j = x_i) = 1"


# -- the tasks' programs on the data -------------------------------------------------------------------
RETRIEVAL = {"alphabet_size": 6, "occurrence_divisor": 5}
STYLES = [  # (tasks, encoding, generator settings): every style, in every encoding it is spelled in
    *((task, encoding, {**RETRIEVAL, "style": style}) for task in ["UR", "UL", "NRFirst", "NLFirst"]
      for encoding in ["tokens", "chars"] for style in ["controlled", "authors"]),
    *((task, encoding, {"alphabet_size": 6, "style": style}) for encoding in ["chars", "finetune"]
      for task, style in [("UR", "letters_digits"), ("UL", "letters_digits"),
                          ("NRFirst", "pairs"), ("NLFirst", "pairs")]),
    *((task, encoding, {"alphabet_size": 52}) for task in ["UF", "UB"] for encoding in ["tokens", "chars", "finetune"]),
]


def example_set(task, encoding, settings, lengths, count=40, seed=0):
    rows = make_dataset(TASKS[task], encoding, settings, LengthBin.parse(lengths), count, seed).to_pydict()
    alphabet = symbols_used(TASKS[task].generator, settings)
    return ExampleSet(TASKS[task], encoding, lengths, seed, "test", alphabet, rows["example"], rows["context"],
                      rows["query"], rows["target"])


@pytest.mark.parametrize("task, encoding, settings", STYLES)
def test_every_program_outputs_the_target_on_every_generator_style(task, encoding, settings):
    for lengths in ["1-12", "40-50"]:
        assert score(example_set(task, encoding, settings, lengths)).all()


def test_a_program_fails_on_the_mirror_task():
    """UR's program (offset flipped: the left neighbour) on UR's data is wrong wherever the neighbours differ."""
    examples = example_set("UR", "tokens", RETRIEVAL, "5-20")
    flipped = dataclasses.replace(examples, task=TASKS["UL"])
    differ = [c[p - 1] != c[p + 1] for c, p in
              ((c, c.index(q)) for c, q in zip(examples.contexts, examples.queries))]
    assert score(flipped).tolist() == [not d for d in differ] and any(differ)


# -- the check -----------------------------------------------------------------------------------------
DATA = {"tokens": {"unique_retrieval": RETRIEVAL, "nonunique_retrieval": RETRIEVAL,
                    "unique_copy": {"alphabet_size": 12}, "nonunique_copy": {"alphabet_size": 5}}}


def data_files(tmp_path, tasks, bins=("1-8", "9-12"), seed=0):
    paths = []
    for task in tasks:
        generator = TASKS[task].generator
        for length_bin in bins:
            path = tmp_path / f"{task}-{length_bin}.parquet"
            pq.write_table(make_dataset(TASKS[task], "tokens", DATA["tokens"][generator],
                                        LengthBin.parse(length_bin), 20, seed), path)
            paths.append(path)
    return paths


def test_the_check_scores_every_file_and_ten_times_the_longest_bin(tmp_path):
    table = theory_check(data_files(tmp_path, ["UR", "NRLast", "UF"]), DATA)  # NRLast has no program: skipped
    assert table.select("task", "lengths", "bin", "examples").rows() == [
        ("UR", "test", "1-8", 20), ("UR", "test", "9-12", 20), ("UR", "10x", "120", 100),
        ("UF", "test", "1-8", 20), ("UF", "test", "9-12", 20), ("UF", "10x", "120", 100)]
    assert table.get_column("share").to_list() == [1.0] * 6


def test_the_check_stops_at_the_first_example_a_wrong_program_fails(tmp_path, monkeypatch):
    """UR's program with its offset flipped (UL's) stops the check, naming the example."""
    paths = data_files(tmp_path, ["UR"])
    monkeypatch.setitem(definitions.TASKS, "UR", dataclasses.replace(TASKS["UR"], program=TASKS["UL"].program))
    rows = pq.read_table(paths[0]).to_pylist()
    first = next(r for r in rows if r["context"][r["occurrences"][0] - 1] != r["target"][0])
    left = first["context"][first["occurrences"][0] - 1]
    with pytest.raises(TheoryCheckFailed) as failed:
        theory_check(paths, DATA)
    assert str(failed.value) == (
        f"theory check: the C-RASP[pos] program of UR (anti-induction) fails on tokens/UR/1-8 (test) seed 0 example "
        f"{first['example']}: context {first['context_text']}, query {first['query_text']}: expected "
        f"{first['target_text']}, produced s{left}")


def test_the_check_fails_a_retrieval_program_that_does_not_stop(tmp_path, monkeypatch):
    unguarded = Program("no query guard", Count(Is(NEXT), match=Match(1, 0)) >= 1)
    monkeypatch.setitem(definitions.TASKS, "UR", dataclasses.replace(TASKS["UR"], program=unguarded))
    with pytest.raises(TheoryCheckFailed, match=r"expected s\d+, produced s\d+ s\d+"):
        theory_check(data_files(tmp_path, ["UR"]), DATA)


def test_the_check_fails_a_program_that_only_breaks_beyond_the_test_lengths(tmp_path, monkeypatch):
    short = Program("short strings only", TASKS["UR"].program.next & (Count(Top()) <= 40))
    monkeypatch.setitem(definitions.TASKS, "UR", dataclasses.replace(TASKS["UR"], program=short))
    with pytest.raises(TheoryCheckFailed, match=r"on tokens/UR/120 \(10x\) seed 0 example 0: .* produced \(nothing\)"):
        theory_check(data_files(tmp_path, ["UR"]), DATA)


def test_a_new_task_with_a_program_is_in_the_check(tmp_path, monkeypatch):
    twin = dataclasses.replace(TASKS["UB"], name="UBTwin")
    monkeypatch.setitem(definitions.TASKS, "UBTwin", twin)
    table = theory_check(data_files(tmp_path, ["UBTwin"]), DATA)
    assert table.select("task", "bin", "share").rows() == [("UBTwin", "1-8", 1.0), ("UBTwin", "9-12", 1.0),
                                                          ("UBTwin", "120", 1.0)]


def test_the_longest_strings_have_an_alphabet_that_fits_them():
    assert tenfold_settings(TASKS["UF"], "chars", {"alphabet_size": 52}, 200) == ("tokens", {"alphabet_size": 200})
    assert tenfold_settings(TASKS["UF"], "tokens", {"alphabet_size": 150}, 100) == ("tokens", {"alphabet_size": 150})
    assert tenfold_settings(TASKS["UR"], "finetune", {"alphabet_size": 5, "style": "letters_digits"}, 400) == (
        "finetune", {"alphabet_size": 62, "style": "controlled"})


def test_the_theory_table_cites_each_program_or_the_proof_there_is_none():
    table = {row["task"]: row for row in theory_table().iter_rows(named=True)}
    assert table["UR"]["program"] == f"induction: {TASKS['UR'].program}"
    assert table["NRLast"]["program"].startswith("none: ") and "Lemma 6" in table["NRLast"]["program"]
    assert "Theorem 12" in table["NB"]["program"]
    assert [t for t, row in table.items() if row["expressible"]] == PROGRAMMED


def test_every_per_task_fact_is_keyed_by_the_task_records():
    """Adding a task is one record in lengthgen.tasks.definitions: what is written elsewhere per
    task (the config schema's enum, the in-context rule texts) must name exactly the records' tasks,
    and the mirror pairs are the records' own."""
    from lengthgen.config.schema import load_schema
    from lengthgen.icl.prompts import RULE_MATH, RULE_SIMPLE
    from lengthgen.tasks import MIRROR_PAIRS, TASK_NAMES, TASKS

    tasks = load_schema()["properties"]["tasks"]
    assert tasks["items"]["enum"] == list(TASK_NAMES) == tasks["default"]
    assert set(RULE_SIMPLE) == set(TASK_NAMES)
    assert set(RULE_MATH) == {t.name for t in TASKS.values() if t.family == "retrieval"}
    assert {frozenset(p) for p in MIRROR_PAIRS} == {frozenset((t.name, t.mirror)) for t in TASKS.values()}
    assert all(not TASKS[left].induction and TASKS[right].induction for left, right in MIRROR_PAIRS)
