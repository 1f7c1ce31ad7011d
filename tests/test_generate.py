"""Task data: every constraint of docs/spec.md §1, checked independently of the generator."""

import numpy as np
import pyarrow as pa
import pytest

from lengthgen.records.tables import read_provenance, write_parquet
from lengthgen.tasks import MIRROR_PAIRS, TASK_NAMES, TASKS, LengthBin
from lengthgen.tasks.generate import CHAR_SYMBOLS, make_dataset

SETTINGS = {
    "unique_retrieval": {"alphabet_size": 5},
    "nonunique_retrieval": {"alphabet_size": 5, "occurrence_divisor": 5},
    "unique_copy": {"alphabet_size": 60},
    "nonunique_copy": {"alphabet_size": 5, "pool_fraction": None},
}
POOL = {"alphabet_size": 52, "pool_fraction": 0.333}


def table(task, encoding, settings, lengths, count, seed):
    return make_dataset(TASKS[task], encoding, settings, LengthBin.parse(lengths), count, seed)


def dataset(task, lengths, seed=0, count=60, encoding="tokens", settings=None):
    settings = settings or SETTINGS[TASKS[task].generator]
    return table(task, encoding, settings, lengths, count, seed).to_pylist()


def expected_target(name, context, query):
    """The target recomputed from the definition, without the generator's occurrence list."""
    task = TASKS[name]
    if task.family == "copying":
        return context if task.direction == "forward" else context[::-1]
    where = [i for i, s in enumerate(context) if s == query]
    p = where[-1] if task.occurrence == "last" else where[0]
    return [context[p + 1] if task.direction == "right" else context[p - 1]]


@pytest.mark.parametrize("task", TASK_NAMES)
@pytest.mark.parametrize("lengths", ["5", "12", "40", "5-60"])
def test_constraints_and_targets(task, lengths):
    spec = LengthBin.parse(lengths)
    for row in dataset(task, lengths):
        context, query, n = row["context"], row["query"], row["length"]
        assert len(context) == n and spec.low <= n <= spec.high
        assert row["target"] == expected_target(task, context, query)
        where = [i for i, s in enumerate(context) if s == query]
        t = TASKS[task]
        if t.family == "retrieval":
            assert where == row["occurrences"]
            assert all(0 < p < n - 1 for p in where), "an occurrence lacks a neighbour"
            assert all(b - a >= 2 for a, b in zip(where, where[1:])), "adjacent occurrences"
            if t.unique:
                assert len(where) == 1
            else:
                assert 2 <= len(where) <= max(2, n // 5)
        elif t.unique:
            assert len(set(context)) == n
        assert all(0 <= s < SETTINGS[t.generator]["alphabet_size"] for s in context)


def test_nonunique_retrieval_occurrence_counts_cover_their_range():
    counts = {len(row["occurrences"]) for row in dataset("NRLast", "50", count=400)}
    assert counts == set(range(2, 11))


def test_nonunique_retrieval_other_tokens_are_uniform_without_query():
    rows = dataset("NRFirst", "50", count=400)
    others = np.concatenate([[s for s in r["context"] if s != r["query"]] for r in rows])
    shares = np.bincount(others, minlength=5) / len(others)
    assert shares.min() > 0.17 and shares.max() < 0.23


@pytest.mark.parametrize("task", ["NF", "NB"])
def test_pool_copy_repeats_every_symbol(task):
    for row in dataset(task, "6-40", settings=POOL, encoding="chars"):
        counts = {s: row["context"].count(s) for s in row["context"]}
        assert min(counts.values()) >= 2
        assert len(counts) == max(1, min(round(row["length"] * 0.333), row["length"] // 2))


def test_chars_encoding_is_one_character_per_symbol():
    rows = dataset("NLFirst", "20", encoding="chars", settings={"alphabet_size": 62, "occurrence_divisor": 5})
    for row in rows:
        assert row["context_text"] == "".join(CHAR_SYMBOLS[s] for s in row["context"])
        assert row["query_text"] == CHAR_SYMBOLS[row["query"]]
        assert row["target_text"] == CHAR_SYMBOLS[row["target"][0]]


def test_tokens_encoding_names_each_symbol():
    row = dataset("UB", "4")[0]
    assert row["context_text"].split() == [f"s{s}" for s in row["context"]]
    assert row["target_text"].split() == [f"s{s}" for s in reversed(row["context"])]


@pytest.mark.parametrize("task", TASK_NAMES)
def test_deterministic(task):
    a = table(task, "tokens", SETTINGS[TASKS[task].generator], "5-30", 50, 3)
    b = table(task, "tokens", SETTINGS[TASKS[task].generator], "5-30", 50, 3)
    assert a.equals(b)
    c = table(task, "tokens", SETTINGS[TASKS[task].generator], "5-30", 50, 4)
    assert not a.equals(c)


def test_the_same_data_and_provenance_make_the_same_file(tmp_path):
    """Snakemake's checksums and the shared output cache see a data file as unchanged when its
    bytes are: the provenance record is written with sorted keys, so the order a config built it
    in does not show, while any change to its content does."""
    data = table("NRLast", "tokens", SETTINGS["nonunique_retrieval"], "10-20", 30, 1)
    record = {"config_hash": "abc", "seed": 1, "config": {"task": "NRLast", "bin": "10-20"}}
    reordered = {"config": {"bin": "10-20", "task": "NRLast"}, "seed": 1, "config_hash": "abc"}
    paths = [tmp_path / f"{name}.parquet" for name in ("first", "reordered", "other")]
    write_parquet(data, paths[0], record)
    write_parquet(data, paths[1], reordered)
    write_parquet(data, paths[2], {**record, "seed": 2})
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()


def _unique_query_twice(row):
    p, n = row["occurrences"][0], row["length"]
    second = p + 2 if p + 2 < n - 1 else p - 2
    row["context"][second] = row["query"]
    row["occurrences"] = sorted([p, second])


def _an_occurrence_left_unstated(row):
    """One more interior, non-adjacent query in the context, not in the stated occurrences."""
    context, q = row["context"], row["query"]
    free = [i for i in range(2, len(context) - 2) if q not in context[i - 1:i + 2]]
    context[free[0]] = q


def _adjacent_occurrences(row):
    row["context"][row["occurrences"][0] + 1] = row["query"]
    row["occurrences"] = [i for i, s in enumerate(row["context"]) if s == row["query"]]


def _repeated_symbol(row):
    row["context"][1] = row["context"][0]


@pytest.mark.parametrize("task, violate", [("UR", _unique_query_twice), ("NRLast", _an_occurrence_left_unstated),
                                           ("NRFirst", _adjacent_occurrences), ("UF", _repeated_symbol)])
def test_the_data_summary_flags_a_file_with_one_row_against_its_task(tmp_path, task, violate):
    """The workflow's data check (the data_summary table) on a file that breaks its task's
    definition in one row: constraints_hold turns false (it is true for the file as generated)."""

    from lengthgen.tasks.summary import summarise_file

    data = table(task, "tokens", SETTINGS[TASKS[task].generator], "12", 5, 0)
    write_parquet(data, tmp_path / "valid.parquet", {"seed": 0})
    assert summarise_file(tmp_path / "valid.parquet")["constraints_hold"]
    rows = data.to_pylist()
    violate(rows[3])
    write_parquet(pa.Table.from_pylist(rows, schema=data.schema), tmp_path / "broken.parquet", {"seed": 0})
    assert summarise_file(tmp_path / "broken.parquet")["constraints_hold"] is False


def test_known_values_are_stable():
    """Pins the generator's output: a change here changes every experiment's data."""
    row = dataset("NRFirst", "12", seed=0, count=1)[0]
    assert (row["context"], row["query"], row["occurrences"], row["target"]) == EXPECTED_NRFIRST


# Checked by hand: q = 2 sits at 1 and 10 (non-adjacent, interior); right of the first is 4.
EXPECTED_NRFIRST = ([0, 2, 4, 3, 4, 1, 3, 0, 3, 3, 2, 0], 2, [1, 10], [4])


@pytest.mark.parametrize("left,right", MIRROR_PAIRS)
def test_mirror_pairs_share_inputs(left, right):
    a, b = dataset(left, "8-30"), dataset(right, "8-30")
    assert [(r["context"], r["query"]) for r in a] == [(r["context"], r["query"]) for r in b]
    if TASKS[left].family == "retrieval":
        assert any(x["target"] != y["target"] for x, y in zip(a, b))


def test_first_and_last_share_inputs():
    a, b = dataset("NLFirst", "20"), dataset("NRLast", "20")
    assert [r["context"] for r in a] == [r["context"] for r in b]


def test_nlfirst_never_wraps_around():
    """The authors' generator read x_{-1} (the last token) when q was first; ours never puts q there."""
    for row in dataset("NLFirst", "5-8", count=500):
        first = row["occurrences"][0]
        assert first >= 1 and row["target"] == [row["context"][first - 1]]


@pytest.mark.parametrize("settings,lengths,message", [
    ({"alphabet_size": 10}, "11", "needs that many distinct symbols"),
])
def test_unique_copy_longer_than_alphabet(settings, lengths, message):
    with pytest.raises(ValueError, match=message):
        table("UF", "tokens", settings, lengths, 1, 0)


@pytest.mark.parametrize("task,lengths", [("UR", "2"), ("NRLast", "4"), ("NLFirst", "1-4")])
def test_too_short(task, lengths):
    with pytest.raises(ValueError, match="too short"):
        dataset(task, lengths)


def test_range_low_end_starts_at_shortest_valid_length():
    assert min(r["length"] for r in dataset("NRLast", "1-6", count=200)) == 5


@pytest.mark.parametrize("text", ["0", "5-3", "a", "1-2-3", ""])
def test_bad_length_spec(text):
    with pytest.raises(ValueError, match="bad length"):
        LengthBin.parse(text)


def test_provenance_round_trip(tmp_path):
    data = table("UR", "tokens", SETTINGS["unique_retrieval"], "5", 3, 0)
    write_parquet(data, tmp_path / "x.parquet", {"config_hash": "abc", "seed": 0})
    assert read_provenance(tmp_path / "x.parquet") == {"config_hash": "abc", "seed": 0}
    assert not list(tmp_path.glob(".*tmp")), "temporary file left behind"
