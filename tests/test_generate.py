"""Task data: every constraint of SPEC section 1, checked independently of the generator."""

import numpy as np
import pyarrow.parquet as pq
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


def test_same_bytes_on_disk(tmp_path):
    """Byte-for-byte: two writes of the same data without provenance are identical files."""
    paths = []
    for i in range(2):
        data = table("NRLast", "tokens", SETTINGS["nonunique_retrieval"], "10-20", 30, 1)
        paths.append(tmp_path / f"{i}.parquet")
        pq.write_table(data, paths[-1])
    assert paths[0].read_bytes() == paths[1].read_bytes()


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
