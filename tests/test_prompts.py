"""Prompts follow SPEC section 3 exactly, are seeded, and parse back to the answer."""

import pytest

from lengthgen.icl.prompts import build_prompt, parse_answer, variants_for
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import make_dataset

RETRIEVAL = {"alphabet_size": 62, "occurrence_divisor": 5}
COPY = {"alphabet_size": 52}


def first_example(task, settings, length):
    return make_dataset(TASKS[task], "chars", settings, LengthBin.parse(length), 1, 0).to_pylist()[0]


def test_retrieval_format():
    row = first_example("UL", RETRIEVAL, "12")
    prompt = build_prompt(TASKS["UL"], RETRIEVAL, 0, "bare", row["context"], row["query"], row["target"])
    blocks = prompt.text.split("\n\n")
    assert len(blocks) == 6  # five demonstrations, then the test line
    for demo in blocks[:5]:
        context, rest = demo.split(" | ")
        query, target = rest.split(": ")
        symbols = context.split(" ")
        assert 5 <= len(symbols) <= 6 and symbols.count(query) == 1
        assert symbols[symbols.index(query) - 1] == target  # left neighbour: UL
    assert blocks[-1] == " ".join(row["context_text"]) + f" | {row['query_text']}:"
    assert prompt.answer == row["target_text"]


def test_copy_format_and_no_length_cap():
    row = first_example("UB", COPY, "50")
    prompt = build_prompt(TASKS["UB"], COPY, 0, "bare", row["context"], row["query"], row["target"])
    lines = prompt.text.split("\n")
    assert len(lines) == 6
    for demo in lines[:5]:
        assert demo.startswith("<bos> ") and demo.endswith(" <eos>")
        source, copy = demo[len("<bos> "):-len(" <eos>")].split(" : ")
        assert copy.split() == source.split()[::-1] and len(source.split()) == 5
    assert lines[-1] == "<bos> " + " ".join(row["context_text"]) + " :"
    assert prompt.answer.split() == list(row["target_text"]) and len(prompt.answer.split()) == 50


@pytest.mark.parametrize("task", ["UR", "NLLast", "UF", "NB"])
def test_every_variant_is_seeded_and_distinct(task):
    settings = RETRIEVAL if task in ("UR", "NLLast") else {**COPY, "pool_fraction": 0.333}
    row = first_example(task, settings, "10")
    texts = set()
    for variant in variants_for(TASKS[task]):
        a = build_prompt(TASKS[task], settings, 0, variant, row["context"], row["query"], row["target"]).text
        assert a == build_prompt(TASKS[task], settings, 0, variant, row["context"], row["query"], row["target"]).text
        assert a != build_prompt(TASKS[task], settings, 1, variant, row["context"], row["query"], row["target"]).text
        assert "\\n" not in a and "r'" not in a  # no stray raw-string text (an authors' bug)
        texts.add(a)
    assert len(texts) == len(variants_for(TASKS[task]))


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown prompt variant 'hint' for UR"):
        build_prompt(TASKS["UR"], RETRIEVAL, 0, "hint", [0, 1, 2], 1, [2])


@pytest.mark.parametrize("task,completion,answer", [
    ("UR", " k\n\nA b", "k"), ("UR", "", ""), ("UF", " a b c <eos>\n<bos>", "a b c"), ("UB", " x  y\nz", "x y"),
])
def test_parse_answer(task, completion, answer):
    assert parse_answer(TASKS[task], completion) == answer
