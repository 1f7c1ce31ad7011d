"""Few-shot prompts for pretrained models (SPEC section 3), for every task and prompt variant.

Retrieval, one demonstration per line, blank line between them, characters separated by spaces:
    ``A b C d E | b: C``           the test line ends after ``:``
Copying, one demonstration per line:
    ``<bos> a b c d e : a b c d e <eos>``   the test line is ``<bos> x y z :``
Demonstrations are short (retrieval length 5-6, copying length 5) and seeded per
(task, seed, variant), drawn from the same generators as the test data but their own stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tasks import LengthBin, Task
from ..tasks.generate import encode, generate_inputs, target_of

RETRIEVAL_VARIANTS = ("bare", "rule", "formal", "example")
COPY_VARIANTS = ("bare", "rule", "hint")


def variants_for(task: Task) -> tuple[str, ...]:
    return RETRIEVAL_VARIANTS if task.family == "retrieval" else COPY_VARIANTS


def _rule(task: Task) -> str:
    if task.family == "copying":
        order = "in the same order" if task.induction else "in reverse order"
        return f"Repeat the symbols before the colon {order}."
    side = "right" if task.induction else "left"
    which = {"first": "first ", "last": "last "}.get(task.occurrence or "", "")
    return f"Answer with the symbol directly to the {side} of the {which}occurrence of the query symbol."


def _formal(task: Task) -> str:
    offset = "+1" if task.induction else "-1"
    where = {"first": "min", "last": "max"}.get(task.occurrence or "", "the unique")
    return (f"Given x_1 ... x_n | q, let p = {where} {{i : x_i = q}}; output x_(p{offset})."
            if task.occurrence else f"Given x_1 ... x_n | q with q occurring once at p, output x_(p{offset}).")


HINT = "Hint: look back at the input to find which symbol comes next."


@dataclass
class Prompt:
    text: str
    answer: str  # the expected continuation's content (the answer without format tokens)


def _line(task: Task, context: list[int], query: int, target: list[int], with_answer: bool) -> str:
    spaced = " ".join(encode(context, "chars"))
    if task.family == "retrieval":
        head = f"{spaced} | {encode([query], 'chars')}:"
        return f"{head} {encode(target, 'chars')}" if with_answer else head
    head = f"<bos> {spaced} :"
    return f"{head} {' '.join(encode(target, 'chars'))} <eos>" if with_answer else head


def demonstrations(task: Task, settings: dict, seed: int, variant: str, count: int = 5):
    lengths = LengthBin(5, 6) if task.family == "retrieval" else LengthBin(5, 5)
    for context, query, occurrences in generate_inputs(task, "chars", settings, lengths, count, seed,
                                                       stream=f"demonstrations/{variant}"):
        target, _ = target_of(task, context, occurrences)
        yield context, query, target


def build_prompt(task: Task, settings: dict, seed: int, variant: str, context: list[int], query: int,
                 target: list[int], shots: int = 5) -> Prompt:
    """The completion-model prompt for one test example."""
    if variant not in variants_for(task):
        raise ValueError(f"unknown prompt variant {variant!r} for {task.name}; known: {', '.join(variants_for(task))}")
    separator = "\n\n" if task.family == "retrieval" else "\n"
    lines = [_line(task, c, q, t, True) for c, q, t in demonstrations(task, settings, seed, variant, shots)]
    preamble = {"rule": _rule(task), "formal": _formal(task), "hint": f"{_rule(task)} {HINT}"}.get(variant)
    if variant == "example":
        c, q, t = next(demonstrations(task, settings, seed, "worked-example", 1))
        where = target_of(task, c, [i for i, s in enumerate(c) if s == q])[1]
        preamble = (f"Worked example: in \"{_line(task, c, q, t, False)}\" the query {encode([q], 'chars')} "
                    f"is at position {where + 1}, so the answer is {encode(t, 'chars')}.")
    body = separator.join(lines + [_line(task, context, query, target, False)])
    text = f"{preamble}\n\n{body}" if preamble else body
    answer = encode(target, "chars") if task.family == "retrieval" else " ".join(encode(target, "chars"))
    return Prompt(text, answer)


def parse_answer(task: Task, completion: str) -> str:
    """The answer a completion gives, normalised like `Prompt.answer`."""
    text = completion.strip()
    if task.family == "retrieval":
        return text.split()[0] if text else ""
    text = text.split("<eos>")[0].split("\n")[0]
    return " ".join(text.split())
