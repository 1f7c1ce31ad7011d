"""Prompts: the authors' line format, templates and demonstration draws, with their bugs fixed."""

import pytest

from lengthgen.icl.prompts import (
    AUTHORS_VARIANTS,
    EXPLAINED,
    Example,
    build_prompt,
    copy_line,
    draw_demonstrations,
    retrieval_line,
    variants_for,
)
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.tasks import TASKS
from lengthgen.tasks.generate import CHAR_SYMBOLS
from lengthgen.tasks.pools import demonstration_pool

RETRIEVAL = {"alphabet_size": 62, "occurrence_divisor": 5}
COPY = {"alphabet_size": 52, "pool_fraction": 0.333}


def symbols(text):
    return tuple(CHAR_SYMBOLS.index(c) for c in text)


def example(task, context, query=""):
    return Example.of(TASKS[task], symbols(context), symbols(query)[0] if query else -1)


def test_lines_as_the_authors_write_them():
    """Their `atomise`: a space before every symbol, the first one included; `|` spaced; no space
    before the colon; the test line ends with the colon."""
    ur = example("UR", "LDJVS", "V")
    assert retrieval_line(ur, " ", True) == " L D J V S | V: S"
    assert retrieval_line(ur, " ", False) == " L D J V S | V:"
    ub = example("UB", "oHdpn")
    assert copy_line(ub, " ", True) == "<bos> o H d p n : n p d H o <eos>"
    assert copy_line(ub, " ", False) == "<bos> o H d p n :"
    # Without a separator (a character tokenizer): every symbol right after its predecessor.
    assert retrieval_line(ur, "", True) == "LDJVS|V: S" and copy_line(ub, "", True) == "<bos> oHdpn : npdHo <eos>"


def demonstrations_for(task, n=5, index=0, test=None):
    pool = demonstration_pool(TASKS[task], RETRIEVAL if TASKS[task].family == "retrieval" else COPY, 0)
    return draw_demonstrations(TASKS[task], pool, 0, index, test or example(task, "ABCDEFGHIJ", "C"), n)


def test_a_pool_too_small_for_the_shots_is_an_error_not_fewer_demonstrations():
    pool = demonstration_pool(TASKS["UR"], RETRIEVAL, 0)
    assert len(demonstrations_for("UR", n=len(pool) - 1)) == len(pool) - 1
    with pytest.raises(ValueError, match=f"{len(pool)} demonstrations asked of a pool of {len(pool) - 1}"):
        demonstrations_for("UR", n=len(pool), test=Example.of(TASKS["UR"], *pool[0]))


def test_simple_rule_prompt_exactly():
    demos = [example("UL", "FpTu4", "T"), example("UL", "d31Y8", "Y"), example("UL", "3cy6J", "c"),
             example("UL", "8B9l3", "B"), example("UL", "qMhvo", "M")]
    test = example("UL", "Q2EJlHaxyL", "J")
    prompt = build_prompt(TASKS["UL"], "simple_rule", test, demos)
    assert prompt.text == (
        "Each line is written as ‘context|query: target’. The vertical bar ‘|’ separates the context from the "
        "query token.\nAll strings below follow this rule: The answer is the token immediately to the left of the "
        "single instance of the query token.\n\n"
        " d 3 1 Y 8 | Y: 1\n\n 3 c y 6 J | c: 3\n\n 8 B 9 l 3 | B: 8\n\n q M h v o | M: q\n\n"
        " Q 2 E J l H a x y L | J:")
    assert prompt.demonstrations == 4  # the first drawn one is the (unshown) worked example, as in their code
    assert prompt.answer == "E" and prompt.continuation == [(" E", True)]


def test_explained_variants_show_the_worked_example_with_the_right_count():
    demos = [example("NLFirst", "axlPlC", "l")] + [example("NLFirst", "IhMeMX", "M")] * 4
    prompt = build_prompt(TASKS["NLFirst"], "math_rule_explained", example("NLFirst", "26g3u5k5bA", "5"), demos)
    assert "Example - \n a x l P l C | l: x\n• query token = “l” (everything after “|”)\n" in prompt.text
    assert "• it occurs 2 time(s) in the context\n" in prompt.text  # the authors' code always said 0
    assert "$t > 1$ and $x_{n+1} = x_{q_1-1}$" in prompt.text and prompt.demonstrations == 5


def line_of(task, example_, answered):
    return (retrieval_line if TASKS[task].family == "retrieval" else copy_line)(example_, " ", answered)


@pytest.mark.parametrize("task", ["UR", "NLLast", "UF", "NB"])
def test_every_variant_shows_its_demonstrations_then_the_test_line_and_is_clean(task):
    """Each variant: its own text around the same lines, the answered demonstrations and the test
    line last (nothing after it: the model continues from there), with no raw-string debris."""
    test = example(task, "ABCDEFGHIJ", "C") if TASKS[task].family == "retrieval" else example(task, "ABCDEFGHIJ")
    demonstrations = demonstrations_for(task, test=test)
    texts = set()
    for variant in variants_for(TASKS[task]):
        text = build_prompt(TASKS[task], variant, test, demonstrations).text
        assert text.endswith("\n" + line_of(task, test, False)) and text.count(line_of(task, test, False)) == 1
        assert all(line_of(task, d, True) in text for d in demonstrations[1:])
        assert "\\n" not in text and 'r"' not in text and "        " not in text  # no raw-string debris (docs/spec.md §7)
        texts.add(text)
    assert len(texts) == len(variants_for(TASKS[task]))


@pytest.mark.parametrize("task", ["NRFirst", "UB"])
def test_the_authors_retrieval_variants_keep_the_first_demonstration_for_the_worked_example(task):
    """As their code does: a retrieval prompt of theirs spends the first drawn demonstration on the
    worked example, which only the explained variants show; their copy variants and ours show every
    demonstration. `demonstrations` counts what the model sees."""
    test = example(task, "ABCDEFGHIJ", "C") if TASKS[task].family == "retrieval" else example(task, "ABCDEFGHIJ")
    demonstrations = demonstrations_for(task, test=test)
    for variant in variants_for(TASKS[task]):
        prompt = build_prompt(TASKS[task], variant, test, demonstrations)
        hidden = TASKS[task].family == "retrieval" and variant in AUTHORS_VARIANTS and variant not in EXPLAINED
        assert (line_of(task, demonstrations[0], True) in prompt.text) == (not hidden), variant
        assert prompt.demonstrations == len(demonstrations) - hidden, variant


def test_demonstrations_are_drawn_per_example_and_never_the_test_example():
    test = example("UR", "ABCDE", "C")
    pool = demonstration_pool(TASKS["UR"], RETRIEVAL, 0)
    assert len(pool) == 100 and all(len(c) == 5 for c, _, _ in pool)  # the authors' unique pool: length 6 with q
    pool = [(test.context, test.query, [2])] + pool  # the test example is in the pool: it must be skipped
    for index in range(30):
        assert test not in draw_demonstrations(TASKS["UR"], pool, 0, index, test, 5)
    assert draw_demonstrations(TASKS["UR"], pool, 0, 1, test, 5) != draw_demonstrations(TASKS["UR"], pool, 0, 2, test, 5)
    assert draw_demonstrations(TASKS["UR"], pool, 0, 1, test, 5) != draw_demonstrations(TASKS["UR"], pool, 1, 1, test, 5)
    # Mirror tasks see the same demonstration inputs (a left/right gap never comes from them).
    left = draw_demonstrations(TASKS["UL"], pool, 0, 7, test, 5)
    right = draw_demonstrations(TASKS["UR"], pool, 0, 7, test, 5)
    assert [(d.context, d.query) for d in left] == [(d.context, d.query) for d in right]


def test_chat_prompts_have_the_authors_system_format_and_layout():
    demos = [example("UR", "FpTu4", "T"), example("UR", "d31Y8", "Y")]
    prompt = build_prompt(TASKS["UR"], "simple_rule", example("UR", "Q2EJl", "J"), demos, chat=True)
    assert prompt.system.startswith("You are a very careful and precise assistant.")
    assert "context: d 3 1 Y 8\nquery: Y\n<target>8</target>" in prompt.text
    assert prompt.text.endswith("context|query?\ncontext: Q 2 E J l\nquery: J\n\nPut the final answer between "
                                "<target> and </target> tags. Start your response with the answer first and only "
                                "then explain if needed.")
    copy = build_prompt(TASKS["UB"], "obey", example("UB", "abc"), [example("UB", "xyzwv")], chat=True)
    assert copy.text.endswith("no explanation is needed for this simple task.")
    assert copy.continuation == [("<target>", False), ("c", True), (" b", True), (" a", True), ("</target>", False)]


def test_the_copy_continuation_spells_a_correct_completion():
    prompt = build_prompt(TASKS["UB"], "bare", example("UB", "abc"), [example("UB", "xyzwv")] * 5)
    assert "".join(t for t, _ in prompt.continuation) == " c b a <eos>"
    assert prompt.answer == "cba" and prompt.answer_line == "c b a"
    tokenizer = build_char_tokenizer()
    assert tokenizer.decode(tokenizer(prompt.text + " c b a <eos>").input_ids).endswith(": c b a <eos>")


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown prompt variant 'hint' for UR"):
        build_prompt(TASKS["UR"], "hint", example("UR", "ABC", "B"), [])


# Byte for byte, written from the authors' templates (retrieval/prompt_constants.py,
# copying/prompt_completion.py and prompt_instruct.py) with their debris fixed as docs/spec.md §7 asks: no
# literal backslash-n, raw-string quotes or indentation, the worked example's count right.
RULE_NRFIRST = ("When the query appears multiple times, the answer is the token just to the right of its first "
                "appearance.")
MATH = ("Let $X = x_1 \\ldots x_n$ with $n \\ge 4$ and $x_i \\in \\Sigma$ (token vocabulary).{gap}The final token "
        "$x_n$ is the query token $q$.\nIn the context $x_1 \\ldots x_{{n-1}}$, $q$ appears $t$ times at indices "
        "$q_1, \\ldots, q_t$ ($1 \\le q_1 \\le q_t \\le n-1$).\n\nContinuation token $x_{{n+1}}$ is defined by:")
WORKED = ("{line}\n• query token = “X” (everything after “|”)\n• it occurs 2 time(s) in the context\n"
          "• according to the rule → answer = “b”")
SHOWN = " p 1 q 1 r s | 1: q\n\n G h G i j k | G: h\n\n Q 2 E J 2 H a x y L | 2:"
COMPLETION_RETRIEVAL = {
    "simple_rule": ("Each line is written as ‘context|query: target’. The vertical bar ‘|’ separates the context "
                    "from the query token.\nAll strings below follow this rule: " + RULE_NRFIRST + "\n\n" + SHOWN),
    "math_rule": (MATH.format(gap="  ") + " $t > 1$ and $x_{n+1} = x_{q_1+1}$\n\nExamples:\n" + SHOWN),
    "simple_rule_explained": (
        "Each line is written as context|query: target. The vertical bar | marks the query token.\nAll strings "
        "below follow this rule:\n" + RULE_NRFIRST + "\n\nWorked example\n" + WORKED.format(line=" a X b X c d | X: b")
        + "\n\nNow continue the sequence (fill in the targets):\n\n" + SHOWN),
    "math_rule_explained": (MATH.format(gap=" ") + "\n$t > 1$ and $x_{n+1} = x_{q_1+1}$\n\nExample - \n"
                            + WORKED.format(line=" a X b X c d | X: b") + "\n\nStrings:\n\n" + SHOWN),
}
COPIES = "<bos> a b c d e : e d c b a <eos>\n<bos> V W X Y Z : Z Y X W V <eos>\n<bos> f g h :"
COMPLETION_COPY = {
    "bare": COPIES,
    "obey": ("Here are some samples of the format <bos> input : output <eos> where the rule being followed is - "
             "The output is the input sequence written in reverse order.\n\n" + COPIES),
    "hint_examples": "Here are some examples where in every example the output is the input read backwards.\n\n" + COPIES,
}
SYSTEM = ("You are a very careful and precise assistant. You always follow the instructions without caring about "
          "what the task and how it is formulated. You always solve tasks yourself. You never generate code.")
CHAT_FORMAT = {"retrieval": "\n\nPut the final answer between <target> and </target> tags. Start your response "
                            "with the answer first and only then explain if needed.",
               "copying": "\n\nPut the answer between <target> and </target> tags. Start your response with the "
                          "answer and no explanation is needed for this simple task."}
CHAT_EXPLAINED = (
    "Each line is written as ‘context|query: target’. The vertical bar ‘|’ separates the context from the query "
    "token.\nAll strings below follow this rule:\n" + RULE_NRFIRST + "\n\nWorked example:\n"
    + WORKED.format(line="context: a X b X c d\nquery: X\n<target>b</target>") + "\n\n{shown}"
    "Based on the examples, what is the answer to the following context|query?\n{gap}context: Q 2 E J 2 H a x y L\n"
    "query: 2" + CHAT_FORMAT["retrieval"])
CHAT_SHOWN = "context: p 1 q 1 r s\nquery: 1\n<target>q</target>\n\ncontext: G h G i j k\nquery: G\n<target>h</target>\n\n"


def prompt_inputs():
    retrieval = [example("NRFirst", "aXbXcd", "X"), example("NRFirst", "p1q1rs", "1"), example("NRFirst", "GhGijk", "G")]
    return (retrieval, example("NRFirst", "Q2EJ2HaxyL", "2"), [example("UB", "abcde"), example("UB", "VWXYZ")],
            example("UB", "fgh"))


@pytest.mark.parametrize("variant", sorted(COMPLETION_RETRIEVAL))
def test_completion_retrieval_prompts_byte_for_byte(variant):
    demonstrations, test, _, _ = prompt_inputs()  # the first demonstration is the worked example
    assert build_prompt(TASKS["NRFirst"], variant, test, demonstrations).text == COMPLETION_RETRIEVAL[variant]


@pytest.mark.parametrize("variant", sorted(COMPLETION_COPY))
def test_completion_copy_prompts_byte_for_byte(variant):
    _, _, demonstrations, test = prompt_inputs()
    assert build_prompt(TASKS["UB"], variant, test, demonstrations).text == COMPLETION_COPY[variant]


@pytest.mark.parametrize("variant", ["obey", "hint_examples"])
def test_chat_copy_prompts_byte_for_byte(variant):
    """Their copy chat runs: the completion prompt, a blank line, their format request; their system prompt."""
    _, _, demonstrations, test = prompt_inputs()
    prompt = build_prompt(TASKS["UB"], variant, test, demonstrations, chat=True)
    assert prompt.text == COMPLETION_COPY[variant] + CHAT_FORMAT["copying"] and prompt.system == SYSTEM


def test_chat_retrieval_prompt_byte_for_byte_theirs_and_ours():
    """Their one retrieval chat variant, as they ran it (the paper preset's `chat.prompt: authors`):
    the worked example but not the demonstrations its last line refers to, and a space before the
    test's lines. Ours shows the demonstrations and drops the space."""
    demonstrations, test, _, _ = prompt_inputs()
    theirs = build_prompt(TASKS["NRFirst"], "simple_rule_explained", test, demonstrations, chat=True,
                          chat_prompt="authors")
    assert theirs.text == CHAT_EXPLAINED.format(shown="", gap=" ") and theirs.system == SYSTEM
    ours = build_prompt(TASKS["NRFirst"], "simple_rule_explained", test, demonstrations, chat=True)
    assert ours.text == CHAT_EXPLAINED.format(shown=CHAT_SHOWN, gap="")


# The authors' bytes at the two places our completion prompts differ (retrieval/ prompt templates):
# their simple_rule is a triple-quoted string whose second line keeps the source's 8-space indentation
# before an escaped newline, and their worked example's count is a constant 0.
AUTHORS_SIMPLE_RULE_BREAK = "from the query token.\n        \nAll strings below follow this rule: "
AUTHORS_WORKED_COUNT = "• it occurs 0 time(s) in the context\n"


def test_completion_prompts_drop_the_authors_indentation_and_count_the_worked_example():
    """Ours: simple_rule's two lines joined by one newline; the worked example counts the query in its
    context, "1" for a unique task and "2" for this NLFirst one, where theirs says "0" for every task."""
    simple = build_prompt(TASKS["UL"], "simple_rule", example("UL", "Q2EJlHaxyL", "J"), demonstrations_for("UL"))
    assert "from the query token.\nAll strings below follow this rule: " in simple.text
    assert AUTHORS_SIMPLE_RULE_BREAK not in simple.text
    unique = build_prompt(TASKS["UL"], "simple_rule_explained", example("UL", "Q2EJlHaxyL", "J"),
                          [example("UL", "FpTu4", "T")] * 5)
    repeated = build_prompt(TASKS["NLFirst"], "simple_rule_explained", example("NLFirst", "26g3u5k5bA", "5"),
                            [example("NLFirst", "axlPlC", "l")] * 5)
    assert "• it occurs 1 time(s) in the context\n" in unique.text
    assert "• it occurs 2 time(s) in the context\n" in repeated.text
    assert AUTHORS_WORKED_COUNT not in unique.text + repeated.text
