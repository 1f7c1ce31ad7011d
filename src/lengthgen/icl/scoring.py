"""Scoring in-context answers: the authors' exact match (the main metric), a strict one beside it,
and the induction signature of an error.

The authors (`copying/evaluation.py`) score a completion model's whole output, cut at its stop
strings (retrieval: the line end; copying: a blank line or `<eos>`), with every space and `<eos>`
removed, against the target symbols; a chat model's answer is the text between `<target>` tags,
then cleaned the same way (an `<eos>` inside the tags, which the copy demonstrations show, does not
count against it). Where the tags are incomplete, ours reads to the end of the output (decoding
stops at `</target>`, so a finished answer never has one) or, with no `<target>` at all, the whole
output; the authors sliced at `str.find`'s -1 there, dropping the output's last character, and
without `<target>` its first seven as well (tests/test_icl.py shows both). Strict: the output,
stripped of surrounding whitespace and a final `<eos>`, is exactly the answer as the prompt writes it.
"""

from __future__ import annotations

import re

from ..tasks import Task


def between_tags(completion: str) -> str:
    match = re.search(r"<target>(.*?)(</target>|$)", completion, flags=re.S)
    return match.group(1) if match else completion


def authors_prediction(task: Task, completion: str, chat: bool) -> str:
    """The answer the authors' evaluation reads off a completion (a chat one with incomplete tags as
    the module docstring says, where theirs misread it)."""
    if chat:
        return "".join(between_tags(completion).split()).replace("<eos>", "")
    return completion.replace(" ", "").replace("<eos>", "").strip()


def strict_correct(completion: str, answer_line: str, chat: bool) -> bool:
    text = between_tags(completion) if chat else completion
    text = text.strip()
    text = text[: -len("<eos>")].rstrip() if text.endswith("<eos>") else text
    return text == answer_line


def right_neighbour_error(task: Task, context: str, target_position: int, predicted: str, expected: str) -> bool | None:
    """For a left/backward task's wrong answer: is it what the induction (right) direction gives?

    predicted / expected: symbol strings (the authors' cleaned prediction, the target).
    Retrieval: the answer is the right neighbour of the occurrence used. Backward copy: at the first
    wrong symbol, the right neighbour (in the input) of the last symbol copied correctly; at the
    first symbol, where nothing is copied yet, the input's first symbol (a forward copy's start).
    None for right/forward tasks and for correct answers; False when nothing wrong was produced.
    """
    if task.induction or predicted == expected:
        return None
    if task.family == "retrieval":
        return predicted == context[target_position + 1]
    i = next((k for k, (a, b) in enumerate(zip(predicted, expected)) if a != b), min(len(predicted), len(expected)))
    if i >= len(predicted):
        return False  # stopped early: no wrong symbol to classify
    if i == 0:
        return predicted[0] == context[0]
    j = context.index(expected[i - 1])  # unique copy: symbols are distinct; repeats: first occurrence
    return j + 1 < len(context) and predicted[i] == context[j + 1]
