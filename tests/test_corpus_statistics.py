"""Forward and backward n-gram repeat shares (pretrain/statistics.py) on text worked out by hand."""

import random
from types import SimpleNamespace

import polars as pl
import pytest

from lengthgen.pretrain.statistics import corpus_statistics, repeat_statistics
from lengthgen.pretrain.statistics_table import write_corpus_statistics


def row(text, n, window=256) -> dict:
    return repeat_statistics(text, (n,), window).row(0, named=True)


def brute_force(text: str, n: int, window: int) -> dict:
    """The definition, one position and one later position at a time."""
    m = len(text) - n + 1
    counted = forward = backward = 0
    for i in range(max(m, 0)):
        gram = text[i:i + n]
        if gram == gram[::-1]:
            continue
        counted += 1
        later = {text[j:j + n] for j in range(i + n, min(i + window - n, m - 1) + 1)}
        forward += gram in later
        backward += gram[::-1] in later
    return {"positions": counted, "forward": forward / counted if counted else None,
            "backward": backward / counted if counted else None}


def test_a_forward_repeat_is_counted_once_per_position():
    # abc bcX cXX XXa Xab abc: only the first abc is followed by itself.
    assert row("abcXXabc", 3) == {"n": 3, "window": 256, "positions": 6, "forward_count": 1, "backward_count": 0,
                                  "forward": 1 / 6, "backward": 0.0,
                                  "forward_to_backward": None}


def test_a_backward_repeat_needs_the_reversal_after_the_gram_without_overlap():
    # abc -> cba at 5 and bcX -> Xcb at 4 count; cXX -> XXc at 3 overlaps it (3 < 2 + 3).
    assert row("abcXXcba", 3) == {"n": 3, "window": 256, "positions": 6, "forward_count": 0, "backward_count": 2,
                                  "forward": 0.0, "backward": 2 / 6,
                                  "forward_to_backward": 0.0}


def test_palindromes_are_left_out_of_both_counts():
    # 2-grams ab ba aa ab ba: "aa" is its own reversal and is neither counted nor a position.
    result = row("abaaba", 2)
    assert result["positions"] == 4
    # ab(0) -> ab(3) forward, ba(4) backward; ba(1) -> ba(4) forward, ab(3) backward; the last two have nothing after.
    assert (result["forward"], result["backward"]) == (2 / 4, 2 / 4)
    assert row("aaaa", 2)["positions"] == 0 and row("aaaa", 2)["forward"] is None
    assert row("abcba", 5)["positions"] == 0


def test_overlapping_copies_are_not_repeats():
    # abab at 0 and at 2 overlap, and so do abab and its reversal baba at 1.
    assert row("ababab", 4) == {"n": 4, "window": 256, "positions": 3, "forward_count": 0, "backward_count": 0,
                                "forward": 0.0, "backward": 0.0,
                                "forward_to_backward": None}
    # ab(0) -> ab(2) touches without overlapping and counts; ba at 1 overlaps ab at 0 and does not.
    result = row("abab", 2)
    assert (result["positions"], result["forward"], result["backward"]) == (3, 1 / 3, 0.0)


def test_the_window_bound_is_the_end_of_the_repeat():
    # ab at 0 and at 6: the copy ends at 8, inside a window of 8, outside one of 7.
    text = "abcdefab"
    assert row(text, 2, window=8)["forward"] == 1 / 7
    assert row(text, 2, window=7)["forward"] == 0.0
    reverse = "abcdefba"
    assert row(reverse, 2, window=8)["backward"] == 1 / 7
    assert row(reverse, 2, window=7)["backward"] == 0.0
    # A window shorter than two grams has no room for a repeat at all.
    assert row("abab", 2, window=3)["forward"] == 0.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", (2, 3, 4))
def test_matches_the_definition_on_random_text(seed, n):
    rng = random.Random(seed)
    text = "".join(rng.choice("abc" if n < 4 else "ab") for _ in range(400))
    for window in (2 * n - 1, 2 * n, 12, 40):
        expected = brute_force(text, n, window)
        result = row(text, n, window)
        assert {k: result[k] for k in expected} == pytest.approx(expected), window


@pytest.mark.parametrize("seed", range(3))
def test_repeats_by_distance_are_the_single_window_counts_at_each_distance(seed):
    """One pass gives every window: each row equals the statistics of that window alone, counts
    rise with the window, and a distance at or past `window` is not a row of its own."""
    rng = random.Random(seed)
    text = "".join(rng.choice("abcd") for _ in range(600))
    table = repeat_statistics(text, (2, 3), window=64, distances=(40, 8, 16, 64, 100))
    assert table.select("n", "window").rows() == [(n, w) for n in (2, 3) for w in (8, 16, 40, 64)]
    for r in table.iter_rows(named=True):
        alone = row(text, r["n"], r["window"])
        assert r == alone and r["forward_count"] == round(r["forward"] * r["positions"])
    for n in (2, 3):
        counts = table.filter(pl.col("n") == n)["backward_count"].to_list()
        assert counts == sorted(counts) and counts[0] < counts[-1]


def test_the_ratio_and_the_table_shape():
    table = repeat_statistics("abcXXabcXXcba", (2, 3, 4), window=16)
    assert table.columns == ["n", "window", "positions", "forward_count", "backward_count", "forward", "backward",
                             "forward_to_backward"]
    assert table["n"].to_list() == [2, 3, 4]
    for r in table.iter_rows(named=True):
        if r["backward"]:
            assert r["forward_to_backward"] == pytest.approx(r["forward"] / r["backward"])
    assert repeat_statistics("a", (2,))["positions"].to_list() == [0]


def test_corpus_statistics_stacks_one_table_per_corpus():
    texts = {"one": "abcXXabc", "two": "abcXXcba"}
    table = corpus_statistics(texts, (2, 3), window=64, reversed_shares={"two": 0.25})
    assert table.columns[:3] == ["corpus", "chars", "reversed_share"]
    assert table["corpus"].to_list() == ["one", "one", "two", "two"] and table["chars"].to_list() == [8] * 4
    assert table["reversed_share"].to_list() == [None, None, 0.25, 0.25]
    assert (table.filter(pl.col("corpus") == "two").drop("corpus", "chars", "reversed_share")
            .equals(repeat_statistics(texts["two"], (2, 3), 64)))


def test_write_corpus_statistics_builds_each_corpus_and_records_the_settings(tmp_path):
    from lengthgen.records.files import read_frame
    from lengthgen.records.provenance import Provenance
    from lengthgen.records.tables import read_provenance
    from lengthgen.settings import CorpusStatisticsSettings

    settings = {"corpora": ["natural", "balanced"], "corpus_chars": 5_000, "seeds": [0, 1], "ns": [2, 3], "window": 64,
                "distances": [16], "insertion": {"share": 0.25, "passage_chars": [8, 32], "gap_passages": [0, 8]}}
    outputs = SimpleNamespace(parquet=tmp_path / "stats.parquet", markdown=tmp_path / "stats.md")
    write_corpus_statistics(CorpusStatisticsSettings.from_config(settings), Provenance(settings), outputs)
    table = read_frame(outputs.parquet)
    assert table.columns[:2] == ["corpus", "seed"]
    assert table["corpus"].to_list() == (["natural"] * 4 + ["balanced"] * 4) * 2
    assert table["seed"].to_list() == [0] * 8 + [1] * 8
    assert table["chars"].to_list() == [5_000] * 16 and table["reversed_share"].to_list() == ([None] * 4 + [0.5] * 4) * 2
    natural, balanced = (table.filter(pl.col("corpus") == name, pl.col("seed") == 0) for name in ("natural", "balanced"))
    assert natural["backward"].to_list() != balanced["backward"].to_list()  # each corpus is its own variant
    other = table.filter(pl.col("corpus") == "balanced", pl.col("seed") == 1)
    assert other["positions"].to_list() != balanced["positions"].to_list()  # each seed places its own copies
    natural_1 = table.filter(pl.col("corpus") == "natural", pl.col("seed") == 1)
    assert natural_1.drop("seed").equals(natural.drop("seed"))  # the natural text has no copies to place
    assert table["window"].to_list() == [16, 64] * 8
    assert read_provenance(outputs.parquet)["config"] == settings
    assert "# Corpus repeats" in outputs.markdown.read_text()
