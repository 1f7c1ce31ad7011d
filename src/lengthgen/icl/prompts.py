"""Few-shot prompts for pretrained models (docs/spec.md §3; the authors' `retrieval/` and `copying/`).

Line formats, the authors' (their code puts a space before every symbol, the first one included):
    retrieval    `` L D J V S | V: S``        the test line ends after ``:``, lines joined by a blank line
    copying      ``<bos> o H d p n : n p d H o <eos>``   the test line ends after `` :``, one per line
The symbol separator is a prompt setting: a space (the paper: with a BPE tokenizer each spaced
symbol is one token) or nothing (a character tokenizer, where spaces would put each symbol two
tokens after its predecessor, out of an induction head's reach). `<bos>`/`<eos>` are literal text.

Demonstrations are drawn for each test example from a pool of short examples, excluding the test
example itself (retrieval: 100 unique-query contexts of 5 symbols, 1,500 repeated-query contexts of
6; copying: 1,500 strings of 5), seeded by (generator, seed, example index): every prompt variant of
an example, and both tasks of a mirror pair, see the same demonstration inputs.

Variants. The authors': retrieval `simple_rule`, `math_rule`, `simple_rule_explained`,
`math_rule_explained` (one drawn demonstration becomes the worked example: the explained variants
show it, the others leave it out, as their code does); copying `bare`, `obey`, `hint_examples`
(the authors call it `hint`). Ours, kept under their names: retrieval `bare`, `rule`, `formal`,
`example`; copying `rule`, `hint`. Fixed against the authors' text (docs/spec.md §7): no stray
raw-string text or literal backslash-n in the math rules, the worked example counts the query's
occurrences (theirs always said 0), no stray indentation. Chat models get the authors' system and
format prompts; retrieval in their context/query layout, with the demonstrations also in
`simple_rule_explained` (their chat version dropped them; `chat_prompt="authors"` gives their bytes).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from ..tasks import TASKS, Task
from ..tasks.generate import encode, target_of

RETRIEVAL_VARIANTS = ("bare", "rule", "formal", "example", "simple_rule", "math_rule", "simple_rule_explained",
                      "math_rule_explained")
COPY_VARIANTS = ("bare", "rule", "hint", "obey", "hint_examples")
EXPLAINED = ("simple_rule_explained", "math_rule_explained")
AUTHORS_VARIANTS = ("simple_rule", "math_rule", "simple_rule_explained", "math_rule_explained", "obey",
                    "hint_examples")
def variants_for(task: Task) -> tuple[str, ...]:
    return RETRIEVAL_VARIANTS if task.family == "retrieval" else COPY_VARIANTS


# -- the authors' rule texts (retrieval/prompt_constants.py, copying/prompt_completion.py) --------
RULE_SIMPLE = {
    "UL": "The answer is the token immediately to the left of the single instance of the query token.",
    "UR": "The answer is the token immediately to the right of the single instance of the query token.",
    "NLLast": "When the query appears multiple times, the answer is the token just to the left of its last appearance.",
    "NRLast": "When the query appears multiple times, the answer is the token just to the right of its last appearance.",
    "NLFirst": "When the query appears multiple times, the answer is the token just to the left of its first appearance.",
    "NRFirst": "When the query appears multiple times, the answer is the token just to the right of its first "
               "appearance.",
    "UF": "The output is exactly the same sequence as the input.",
    "NF": "The output is exactly the same sequence as the input.",
    "UB": "The output is the input sequence written in reverse order.",
    "NB": "The output is the input sequence written in reverse order.",
}
RULE_MATH = {
    "UL": "$t = 1$ and $x_{n+1} = x_{q_1-1}$", "UR": "$t = 1$ and $x_{n+1} = x_{q_1+1}$",
    "NLLast": "$t > 1$ and $x_{n+1} = x_{q_t-1}$", "NRLast": "$t > 1$ and $x_{n+1} = x_{q_t+1}$",
    "NLFirst": "$t > 1$ and $x_{n+1} = x_{q_1-1}$", "NRFirst": "$t > 1$ and $x_{n+1} = x_{q_1+1}$",
}


def authors_text(texts: dict[str, str], task: Task) -> str:
    """The authors' text for a task; for a task they did not have (an extension's), the text of the
    paper's task with the same family, direction, uniqueness and occurrence; else none."""
    if task.name in texts:
        return texts[task.name]
    traits = lambda t: (t.family, t.direction, t.unique, t.occurrence)  # noqa: E731
    return next((texts[t.name] for t in TASKS.values() if t.name in texts and traits(t) == traits(task)), "")


RULE_HINT = {"forward": "in every example the output repeats the input unchanged.",
             "backward": "in every example the output is the input read backwards."}
MATH_DEFINITION = ("Let $X = x_1 \\ldots x_n$ with $n \\ge 4$ and $x_i \\in \\Sigma$ (token vocabulary).{gap}"
                   "The final token $x_n$ is the query token $q$.\n"
                   "In the context $x_1 \\ldots x_{{{{n-1}}}}$, $q$ appears $t$ times at indices $q_1, \\ldots, q_t$ "
                   "($1 \\le q_1 \\le q_t \\le n-1$).\n\n")
MATH_PREAMBLE = MATH_DEFINITION.format(gap=" ")
MATH_PREAMBLE_WIDE = MATH_DEFINITION.format(gap="  ")  # their math_rule has two spaces there, math_rule_explained one
SIMPLE_PREAMBLE = ("Each line is written as ‘context|query: target’. The vertical bar ‘|’ separates the context "
                   "from the query token.\n")
TEMPLATES = {
    "simple_rule": SIMPLE_PREAMBLE + "All strings below follow this rule: {rule_simple}\n\n{examples}",
    "math_rule": MATH_PREAMBLE_WIDE + "Continuation token $x_{{n+1}}$ is defined by: {rule_math}\n\nExamples:\n{examples}",
    "simple_rule_explained": ("Each line is written as context|query: target. The vertical bar | marks the query token.\n"
                              "All strings below follow this rule:\n{rule_simple}\n\nWorked example\n{explanation}\n\n"
                              "Now continue the sequence (fill in the targets):\n\n{examples}"),
    "math_rule_explained": (MATH_PREAMBLE + "Continuation token $x_{{n+1}}$ is defined by:\n{rule_math}\n\n"
                            "Example - \n{explanation}\n\nStrings:\n\n{examples}"),
    "obey": ("Here are some samples of the format <bos> input : output <eos> where the rule being followed is - "
             "{rule_simple}\n\n{examples}"),
    "hint_examples": "Here are some examples where {rule_hint}\n\n{examples}",
}
SYSTEM_PROMPT = ("You are a very careful and precise assistant. You always follow the instructions without caring "
                 "about what the task and how it is formulated. You always solve tasks yourself. You never generate code.")
FORMAT_PROMPT = {"retrieval": ("Put the final answer between <target> and </target> tags. "
                               "Start your response with the answer first and only then explain if needed."),
                 "copying": ("Put the answer between <target> and </target> tags. "
                             "Start your response with the answer and no explanation is needed for this simple task.")}
CHAT_RETRIEVAL = {
    "simple_rule": SIMPLE_PREAMBLE + "All strings below follow this rule: {rule_simple}\n\n{examples}\n\n"
                   "Based on the examples, what is the answer to the following context|query?\n{query}",
    "simple_rule_explained": SIMPLE_PREAMBLE + "All strings below follow this rule:\n{rule_simple}\n\n"
                             "Worked example:\n{explanation}\n\n{examples}\n\n"
                             "Based on the examples, what is the answer to the following context|query?\n{query}",
}
# Their chat templates as they ran them (`chat_prompt: authors`): the explained one has no place for
# the demonstrations it refers to (only the worked example is shown), and the test's lines follow a space.
CHAT_RETRIEVAL_AUTHORS = {
    "simple_rule": CHAT_RETRIEVAL["simple_rule"].replace("?\n{query}", "?\n {query}"),
    "simple_rule_explained": SIMPLE_PREAMBLE + "All strings below follow this rule:\n{rule_simple}\n\n"
                             "Worked example:\n{explanation}\n\n"
                             "Based on the examples, what is the answer to the following context|query?\n {query}",
}
CHAT_PROMPTS = {"lengthgen": CHAT_RETRIEVAL, "authors": CHAT_RETRIEVAL_AUTHORS}
# Ours: the instruction a chat model gets after any prompt that has no chat form of the authors'.
CHAT_INSTRUCTION = "Continue the pattern for the last line. Give only the answer, between <target> and </target>."


# -- our variants --------------------------------------------------------------------------------
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


# -- examples and their lines --------------------------------------------------------------------
@dataclass(frozen=True)
class Example:
    """One task instance as symbol indices (chars encoding)."""

    context: tuple[int, ...]
    query: int  # -1 for copying
    target: tuple[int, ...]

    @classmethod
    def of(cls, task: Task, context, query, occurrences=None) -> Example:
        occurrences = [i for i, s in enumerate(context) if s == query] if occurrences is None else occurrences
        return cls(tuple(context), int(query), tuple(target_of(task, list(context), occurrences)[0]))


@dataclass
class Prompt:
    """What a model is shown and what a correct model answers.

    text: the completion text, or the user message of a chat model (with `system`);
    answer: the target symbols as one string (the authors' scoring compares against it);
    answer_line: the answer written in the prompt's own format (the strict scoring);
    continuation: what a correct model emits next, as (text, is_symbol) segments: a symbol's
    segment carries the separator before it, so each is tokenized as it would stand in the text."""

    text: str
    answer: str
    answer_line: str
    continuation: list[tuple[str, bool]]
    separator: str
    system: str | None = None
    demonstrations: int = 0
    chat: bool = field(default=False)


def _symbols(symbols, separator: str) -> str:
    return separator.join(encode(list(symbols), "chars"))


def retrieval_line(example: Example, separator: str, with_answer: bool) -> str:
    """`` L D J V S | V: S`` (separator " "), ``LDJVS|V: S`` (no separator)."""
    head = f"{separator}{_symbols(example.context, separator)}{separator}|{separator}{encode([example.query], 'chars')}:"
    return f"{head} {_symbols(example.target, separator)}" if with_answer else head


def copy_line(example: Example, separator: str, with_answer: bool) -> str:
    head = f"<bos> {_symbols(example.context, separator)} :"
    return f"{head} {_symbols(example.target, separator)} <eos>" if with_answer else head


def chat_retrieval_line(example: Example, separator: str, with_answer: bool) -> str:
    head = f"context: {_symbols(example.context, separator)}\nquery: {encode([example.query], 'chars')}"
    return f"{head}\n<target>{_symbols(example.target, separator)}</target>" if with_answer else head


def explanation(task: Task, example: Example, separator: str, line) -> str:
    """The worked example (the authors' wording; the occurrence count is right, theirs always said 0)."""
    query = encode([example.query], "chars")
    return (f"{line(example, separator, True)}\n"
            f"• query token = “{query}” (everything after “|”)\n"
            f"• it occurs {example.context.count(example.query)} time(s) in the context\n"
            f"• according to the rule → answer = “{_symbols(example.target, separator)}”")


# -- demonstration pools -------------------------------------------------------------------------
def draw_demonstrations(task: Task, pool: list[tuple], seed: int, index: int, test: Example,
                        shots: int) -> list[Example]:
    """`shots` pool examples for test example `index`, never the test example itself (a pool too
    small for them is an error, never fewer shots: the config check names `icl.shots` first)."""
    rng = np.random.default_rng([seed, zlib.crc32(task.generator.encode()), index, zlib.crc32(b"demonstrations")])
    allowed = [p for p in pool if (p[0], p[1]) != (test.context, test.query)]
    if shots > len(allowed):
        raise ValueError(f"{shots} demonstrations asked of a pool of {len(allowed)} besides the test example")
    chosen = rng.choice(len(allowed), size=shots, replace=False)
    return [Example.of(task, *allowed[int(i)]) for i in np.sort(chosen)]


# -- prompts -------------------------------------------------------------------------------------
def _continuation(task: Task, example: Example, separator: str, chat: bool) -> list[tuple[str, bool]]:
    symbols = encode(list(example.target), "chars")
    if chat:
        return [("<target>", False), *((separator * (i > 0) + s, True) for i, s in enumerate(symbols)),
                ("</target>", False)]
    segments = [(" " + symbols[0], True)] + [(separator + s, True) for s in symbols[1:]]
    return segments + ([(" <eos>", False)] if task.family == "copying" else [])


def build_prompt(task: Task, variant: str, example: Example, demonstrations: list[Example], separator: str = " ",
                 chat: bool = False, chat_prompt: str = "lengthgen") -> Prompt:
    """The prompt of one test example. `demonstrations`: the drawn pool examples; with the authors'
    retrieval variants the first is the worked example (shown only by the explained variants).
    chat_prompt: a chat model's retrieval templates, ours ("lengthgen": the explained one shows the
    demonstrations it refers to) or the authors' bytes ("authors")."""
    if variant not in variants_for(task):
        raise ValueError(f"unknown prompt variant {variant!r} for {task.name}; known: {', '.join(variants_for(task))}")
    worked = None
    if task.family == "retrieval" and variant in AUTHORS_VARIANTS:
        worked, demonstrations = demonstrations[0], demonstrations[1:]
    chat_layout = chat and task.family == "retrieval" and variant in CHAT_RETRIEVAL
    line = chat_retrieval_line if chat_layout else retrieval_line if task.family == "retrieval" else copy_line
    shown = [line(d, separator, True) for d in demonstrations]
    test = line(example, separator, False)
    joiner = "\n\n" if task.family == "retrieval" else "\n"
    fields = {"rule_simple": authors_text(RULE_SIMPLE, task), "rule_math": authors_text(RULE_MATH, task),
              "rule_hint": RULE_HINT[task.direction] if task.family == "copying" else "",
              "explanation": explanation(task, worked, separator, line) if worked else ""}
    if chat_layout:
        text = CHAT_PROMPTS[chat_prompt][variant].format(examples=joiner.join(shown), query=test, **fields)
    elif variant in TEMPLATES:
        text = TEMPLATES[variant].format(examples=joiner.join(shown + [test]), **fields)
    else:
        preamble = {"rule": _rule(task), "formal": _formal(task), "hint": f"{_rule(task)} {HINT}"}.get(variant)
        if variant == "example":
            where = [i for i, s in enumerate(demonstrations[0].context) if s == demonstrations[0].query]
            position = target_of(task, list(demonstrations[0].context), where)[1]
            preamble = (f"Worked example: in \"{line(demonstrations[0], separator, False)}\" the query "
                        f"{encode([demonstrations[0].query], 'chars')} is at position {position + 1}, so the answer is "
                        f"{_symbols(demonstrations[0].target, separator)}.")
        body = joiner.join(shown + [test])
        text = f"{preamble}\n\n{body}" if preamble else body
    system = None
    if chat:
        system = SYSTEM_PROMPT
        instruction = FORMAT_PROMPT[task.family] if (chat_layout or variant in TEMPLATES) else CHAT_INSTRUCTION
        text = f"{text}\n\n{instruction}"
    answer = encode(list(example.target), "chars")
    return Prompt(text=text, answer=answer, answer_line=_symbols(example.target, separator),
                  continuation=_continuation(task, example, separator, chat), separator=separator, system=system,
                  demonstrations=len(demonstrations) + (worked is not None and variant in EXPLAINED), chat=chat)
