"""The corpus variants (pretrain/variants.py) each change only what they say, and the repeat
statistics (pretrain/statistics.py) see the change they are meant to make."""

import random
from collections import Counter

import pytest

from lengthgen.models.char_tokenizer import DEFAULT_CHARACTERS
from lengthgen.pretrain.corpus import build_corpus
from lengthgen.pretrain.statistics import repeat_statistics
from lengthgen.pretrain.variants import CORPORA, insert_copies, split_passages, transform_document
from lengthgen.settings import INSERTED, USES_INSERTION, InsertionSettings

DEFAULT_INSERTION = InsertionSettings(0.25, [8, 32], [0, 8])
CHARS = 300_000


def natural_documents():
    """The documents as the corpus had them before there were variants: the help topics in sorted
    order, then the library source, each cleaned and stripped, "\\n\\n" after each."""
    from pydoc_data.topics import topics

    from lengthgen.pretrain.corpus import stdlib_files

    allowed = frozenset(DEFAULT_CHARACTERS)
    for key in sorted(topics):
        yield "".join(c for c in topics[key] if c in allowed).strip() + "\n\n"
    for path in stdlib_files():
        yield "".join(c for c in path.read_text(encoding="utf-8", errors="ignore") if c in allowed).strip() + "\n\n"


def document_spans(max_chars: int) -> list[tuple[int, int]]:
    """(start, end) of each whole natural document within the first `max_chars` characters."""
    spans, start = [], 0
    for document in natural_documents():
        if start + len(document) > max_chars:
            break
        spans.append((start, start + len(document)))
        start += len(document)
    return spans


@pytest.fixture(scope="module")
def corpora() -> dict[str, str]:
    return {name: build_corpus(CHARS, corpus=name, seed=0, insertion=DEFAULT_INSERTION if name in USES_INSERTION else None)
            for name in CORPORA}


def test_natural_is_the_identity_and_the_old_corpus():
    text = "Some text,\n\n  with (odd) spacing \t"
    assert transform_document(text, "natural", 3, 7, DEFAULT_INSERTION) == text
    natural = build_corpus(200_000, corpus="natural")
    assert natural == build_corpus(200_000)
    old = ""
    for document in natural_documents():
        old += document
        if len(old) >= 200_000:
            break
    assert natural == old[:200_000]


def test_reversed_reverses_each_document_in_place(corpora):
    natural, backwards = corpora["natural"], corpora["reversed"]
    assert len(backwards) == len(natural) == CHARS
    spans = document_spans(CHARS)
    assert len(spans) > 20
    for start, end in spans:
        assert backwards[start:end - 2] == natural[start:end - 2][::-1]
        assert backwards[end - 2:end] == "\n\n"
    whole = spans[-1][1]
    assert Counter(backwards[:whole]) == Counter(natural[:whole])
    assert transform_document("abc\n d", "reversed", 0, 0, None) == "d \ncba"


def distinct_text(size: int) -> str:
    """`size` different characters, so every character in a copy names the position it came from."""
    return "".join(chr(0x4E00 + i) for i in range(size))


def parse_copies(text: str, out: str, passages: list[str]) -> tuple[str, list[dict]]:
    """Split `out` (text with copies inserted) into the original characters and the copies.

    A character of `out` is original when it is the next character of `text`, else a copy's, and a
    copy's characters must all come from text already passed (a copy follows its source). Runs of
    copied characters are cut into the passages they copy, forward or reversed."""
    position = {c: i for i, c in enumerate(text)}
    starts, start = {}, 0
    for index, passage in enumerate(passages):
        starts[start] = index
        start += len(passage)
    kept, copies, cursor, passage_now, run = [], [], 0, -1, []

    def flush():
        while run:
            first = run[0]
            if first in starts and len(run) >= len(passages[starts[first]]) \
                    and run[:len(passages[starts[first]])] == list(range(first, first + len(passages[starts[first]]))):
                source = starts[first]
                direction = "forward"
            else:  # a reversed copy: it starts at its passage's last character
                source = max(index for start, index in starts.items() if start <= first)
                direction = "backward"
            size = len(passages[source])
            piece = "".join(text[i] for i in run[:size])
            expected = passages[source] if direction == "forward" else passages[source][::-1]
            assert piece == expected, "a copy is not a passage of the original nor its reversal"
            copies.append({"source": source, "after": passage_now, "direction": direction, "chars": size})
            del run[:size]

    for char in out:
        index = position[char]
        if index == cursor:
            flush()
            kept.append(char)
            if cursor in starts:
                passage_now = starts[cursor]
            cursor += 1
        else:
            assert index < cursor, "a copy comes before its source"
            run.append(index)
    flush()
    return "".join(kept), copies


@pytest.mark.parametrize("seed", range(3))
def test_insert_copies_only_adds_passages_or_their_reversals_after_their_source(seed):
    text = distinct_text(3_000)
    out, backward_chars, forward_chars = insert_copies(text, random.Random(seed), DEFAULT_INSERTION)
    passages = split_passages(text, random.Random(seed), DEFAULT_INSERTION.passage_chars)
    assert "".join(passages) == text
    original, copies = parse_copies(text, out, passages)
    assert original == text  # removing the copies gives back the document exactly
    assert copies and len(out) == len(text) + backward_chars + forward_chars
    assert backward_chars == sum(c["chars"] for c in copies if c["direction"] == "backward")
    assert forward_chars == sum(c["chars"] for c in copies if c["direction"] == "forward")
    assert abs(backward_chars - forward_chars) <= DEFAULT_INSERTION.passage_chars[1]
    directions = [c["direction"] for c in sorted(copies, key=lambda c: c["source"])]
    assert directions[::2] == ["backward"] * len(directions[::2])  # the 1st, 3rd, 5th... are reversed
    assert directions[1::2] == ["forward"] * len(directions[1::2])
    for copy in copies:
        assert copy["chars"] >= DEFAULT_INSERTION.passage_chars[0]
        gap = copy["after"] - copy["source"]
        assert 0 <= gap <= DEFAULT_INSERTION.gap_passages[1]
        assert gap >= DEFAULT_INSERTION.gap_passages[0] or copy["after"] == len(passages) - 1


def test_the_share_of_passages_copied_is_the_setting():
    text = distinct_text(20_000)
    for share in (0.1, 0.25, 0.5):
        insertion = InsertionSettings(share, [8, 32], [0, 8])
        out, _, _ = insert_copies(text, random.Random(1), insertion)
        passages = split_passages(text, random.Random(1), insertion.passage_chars)
        eligible = sum(len(p) >= insertion.passage_chars[0] for p in passages)
        _, copies = parse_copies(text, out, passages)
        assert len(copies) / eligible == pytest.approx(share, abs=0.05)


def test_balanced_is_deterministic_per_seed_and_document():
    rng = random.Random(5)
    text = "".join(rng.choice("abcdefgh ") for _ in range(5_000))
    once = transform_document(text, "balanced", 4, 0, DEFAULT_INSERTION)
    assert once == transform_document(text, "balanced", 4, 0, DEFAULT_INSERTION) != text
    assert once != transform_document(text, "balanced", 4, 1, DEFAULT_INSERTION)
    assert once != transform_document(text, "balanced", 5, 0, DEFAULT_INSERTION)
    with pytest.raises(ValueError, match="insertion"):
        transform_document(text, "balanced", 4, 0, None)


def test_an_unknown_corpus_names_the_known_ones():
    with pytest.raises(ValueError, match="natural, reversed, balanced") as error:
        transform_document("abc", "shuffled", 0, 0, None)
    assert "'shuffled'" in str(error.value)
    with pytest.raises(ValueError, match="known: natural"):
        build_corpus(1_000, corpus="shuffled")


def test_reversal_keeps_every_repeat_pair_but_not_exactly_the_shares():
    """Reversing a text maps each repeat pair (i, j) onto a pair in the same direction the same
    distance apart, but the share counts a pair at its earlier end, which reversal makes the later
    one: with "abab" at 0, 10 and 12 (the last two overlap), 0 has a repeat after it, 10 and 12
    have one before them. So the reversed text's shares match only approximately."""
    text = "abab" + "xyzwvu" + "ababab"
    assert text[::-1] == "bababa" + "uvwzyx" + "baba"
    natural, flipped = (repeat_statistics(t, (4,)).row(0, named=True) for t in (text, text[::-1]))
    assert natural["positions"] == flipped["positions"] == 13
    assert (natural["forward"], flipped["forward"]) == (1 / 13, 2 / 13)  # abab(0) vs baba(0) and baba(2)
    assert natural["backward"] == flipped["backward"] == 1 / 13


def test_balanced_adds_backward_repeats_and_reversed_keeps_both_shares(corpora):
    """On some hundred thousand characters of the real corpus: the balanced corpus has more backward
    repeats (and a smaller forward / backward ratio); the reversed one the same shares as the
    natural one up to the ends of pairs (above) and the document boundaries. Cut at the last whole
    document, so that both hold the same documents."""
    whole = document_spans(CHARS)[-1][1]
    texts = {"natural": corpora["natural"][:whole], "reversed": corpora["reversed"][:whole],
             "balanced": corpora["balanced"]}
    tables = {name: repeat_statistics(text, (2, 3, 4), 256) for name, text in texts.items()}
    natural, backwards, balanced = (tables[name].to_dicts() for name in ("natural", "reversed", "balanced"))
    for plain, flipped, mixed in zip(natural, backwards, balanced):
        assert flipped["positions"] == pytest.approx(plain["positions"], abs=100)  # n-grams across a boundary
        assert flipped["forward"] == pytest.approx(plain["forward"], abs=0.002)
        assert flipped["backward"] == pytest.approx(plain["backward"], abs=0.002)
        assert mixed["backward"] > plain["backward"] + 0.1
        assert mixed["forward_to_backward"] < 0.8 * plain["forward_to_backward"]


def test_forward_and_backward_only_insert_the_same_copies_one_way_each():
    """Every reversed share draws the same passages, places and lengths: none reversed, all
    reversed and any share between differ only in which copies are reversed."""
    text = build_corpus(20_000)
    outs = {share: insert_copies(text, random.Random(3), DEFAULT_INSERTION, share) for share in (0.0, 0.4, 1.0)}
    (forward, b0, f0), (mixed, bm, fm), (backward, b1, f1) = outs[0.0], outs[0.4], outs[1.0]
    assert b0 == 0 and f1 == 0 and f0 == b1 == bm + fm > 0 and 0 < bm < b1
    assert len(forward) == len(mixed) == len(backward)
    assert Counter(forward) == Counter(backward)  # the same characters: only their order in copies differs


DOSE = {"forward-only": 0.0, "reversed-25": 0.25, "reversed-50": 0.5, "reversed-75": 0.75, "backward-only": 1.0}


def test_the_dose_arms_reverse_growing_nested_shares_of_the_same_copies():
    """Finding 7's dose-response: each arm reverses its share of one set of copies, and a copy
    reversed at one dose is reversed at every higher one, so the arms differ in dose alone."""
    text = distinct_text(20_000)
    insertion = InsertionSettings(0.25, [4, 12], [0, 8])
    passages = split_passages(text, random.Random("0:7"), insertion.passage_chars)
    reversed_sources, placements = {}, set()
    for corpus, share in DOSE.items():
        assert INSERTED[corpus] == share
        _, copies = parse_copies(text, transform_document(text, corpus, 7, 0, insertion), passages)
        placements.add(tuple((c["source"], c["after"], c["chars"]) for c in copies))
        reversed_sources[corpus] = {c["source"] for c in copies if c["direction"] == "backward"}
        assert len(reversed_sources[corpus]) / len(copies) == pytest.approx(share, abs=0.06)
    assert len(placements) == 1  # the same passages, places and lengths at every dose
    doses = list(reversed_sources.values())
    assert all(low <= high for low, high in zip(doses, doses[1:]))


def test_reversed_passages_adds_reversed_text_that_copies_nothing_nearby():
    """The non-copy control: as many insertions as the copying arms make, each a whole passage
    reversed, from at least balance_window characters away; removing them gives the text back,
    and a document too short for the distance is left as it is."""
    text = distinct_text(20_000)
    insertion = InsertionSettings(0.25, [4, 12], [0, 8])
    out = transform_document(text, "reversed-passages", 7, 0, insertion)
    passages = split_passages(text, random.Random("0:7"), insertion.passage_chars)
    reversals = {p[::-1] for p in passages}
    position = {c: i for i, c in enumerate(text)}
    kept, inserted, cursor = [], [], 0
    for char in out:
        if position[char] == cursor:
            kept.append(char)
            cursor += 1
        else:
            assert abs(position[char] - cursor) >= insertion.balance_window, "a reversal copies text nearby"
            if inserted and inserted[-1][1] == cursor and position[char] == position[inserted[-1][0][-1]] - 1:
                inserted[-1][0].append(char)  # the same reversed passage goes on
            else:
                inserted.append(([char], cursor))
    assert "".join(kept) == text
    pieces = ["".join(chars) for chars, _ in inserted]
    copies = parse_copies(text, insert_copies(text, random.Random("0:7"), insertion, 1.0)[0], passages)[1]
    assert pieces and all(piece in reversals for piece in pieces) and len(pieces) == len(copies)
    short = text[:4 * insertion.balance_window - 1]
    assert transform_document(short, "reversed-passages", 7, 0, insertion) == short


def test_every_corpus_is_the_same_size_when_corpus_chars_is_set(corpora):
    assert {name: len(text) for name, text in corpora.items()} == dict.fromkeys(CORPORA, CHARS)
    assert corpora["forward-only"] != corpora["backward-only"] != corpora["natural"]


def test_balance_solves_the_reversed_share_that_equalises_the_counted_repeats():
    """Counted in the final text: as many backward as forward 4-gram repeats (to 0.5%); natural text
    repeats forwards, so the share is high and alternating copies do not balance; copies too few to
    balance even all reversed stop with the setting to raise."""
    from lengthgen.pretrain.corpus import built_corpus

    balance = InsertionSettings(0.5, (8, 32), (0, 8), reversed="balance")
    text, share = built_corpus(CHARS, corpus="balanced", insertion=balance)
    counts = repeat_statistics(text, (4,), 256).row(0, named=True)
    assert counts["backward_count"] == pytest.approx(counts["forward_count"], rel=0.005)
    assert 0.6 < share < 1 and len(text) == CHARS
    alternate, half = built_corpus(CHARS, corpus="balanced", insertion=InsertionSettings(0.5, (8, 32), (0, 8)))
    old = repeat_statistics(alternate, (4,), 256).row(0, named=True)
    assert half == 0.5 and old["forward_count"] > 1.2 * old["backward_count"]
    with pytest.raises(ValueError, match=r"pretrain.insertion.share 0.05 cannot balance .* raise pretrain.insertion.share"):
        built_corpus(CHARS, corpus="balanced", insertion=InsertionSettings(0.05, (8, 32), (0, 8), reversed="balance"))


def test_without_corpus_chars_every_corpus_is_the_whole_natural_texts_size():
    """corpus_chars null: the natural corpus whole, and every other variant cut to its size, so a
    corpus with copies inserted is no more text than the natural one (it ends earlier in the documents)."""
    natural = build_corpus(None, corpus="natural")
    assert natural == "".join(natural_documents())
    for name in ("reversed", "forward-only", "backward-only", "balanced"):
        text = build_corpus(None, corpus=name, seed=1, insertion=DEFAULT_INSERTION if name in USES_INSERTION else None)
        assert len(text) == len(natural), name
    assert build_corpus(None, corpus="forward-only", seed=1, insertion=DEFAULT_INSERTION) != build_corpus(
        None, corpus="forward-only", seed=2, insertion=DEFAULT_INSERTION)  # the seed places the copies
