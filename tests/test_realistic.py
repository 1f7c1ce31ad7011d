"""Realistic tasks (paper 4.2): the lorem-ipsum and git data, the ambiguity scorer (with the
authors' two bugs as tests), predictions with a tiny model, and the workflow stage."""

import copy
import itertools
import re

import numpy as np
import polars as pl
import pytest

from lengthgen.inference.cache import PredictionCache
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.realistic import git
from lengthgen.realistic.ambiguity import alignment, alignment_score, breaks, classes, score_copy
from lengthgen.realistic.lorem import WORDS, paragraph, paragraphs
from lengthgen.realistic.predict import MARGIN, _line_starts, predict_realistic
from lengthgen.realistic.tables import realistic_table
from tiny_models import save_tiny_model, tiny_model

TOKENIZER = build_char_tokenizer()
split = str.split


# -- the scorer -----------------------------------------------------------------------------------
def test_token_classes_follow_the_reference():
    unambiguous, ambiguous = classes("a b a c d e".split())
    assert unambiguous == {"b", "c", "d"} and ambiguous == {"a"}  # e only ends it: neither


@pytest.mark.parametrize("output, expected", [
    ("a b c d e f", []),
    ("a b d e f", [1]),              # c left out: the break follows b
    ("a b c X d e f", [2]),          # an extra token after c
    ("a b Y d e f", [1]),            # c replaced
    ("a b Y Z W d e f", [1]),        # consecutive edits are one break
    ("X b c d e f", []),             # an error before any match is no break after a copied token
    ("a X c d e Y", [0, 4]),
    ("a b c d e f g h", [5]),        # running on after the end
])
def test_breaks_on_hand_made_outputs(output, expected):
    assert breaks("a b c d e f".split(), output.split()) == expected


def _best_by_enumeration(reference, output) -> int:
    """The best global alignment score over every alignment, enumerated path by path."""
    if not reference or not output:
        return -(len(reference) + len(output))
    return max(int(reference[0] == output[0]) + _best_by_enumeration(reference[1:], output[1:]),
               -1 + _best_by_enumeration(reference[1:], output),
               -1 + _best_by_enumeration(reference, output[1:]))


def test_the_alignment_is_optimal_and_complete_against_enumeration():
    rng = np.random.default_rng(0)
    cases = [(list(rng.choice(list("abc"), size=int(rng.integers(0, 6)))),
              list(rng.choice(list("abcd"), size=int(rng.integers(0, 6))))) for _ in range(150)]
    cases += [(list(r), list(o)) for r, o in itertools.product(["ab", "aab", "abc"], ["", "ba", "abab", "c"])]
    for reference, output in cases:
        steps = alignment(reference, output)
        assert alignment_score(steps) == _best_by_enumeration(reference, output), (reference, output)
        assert [i for _, i, _ in steps if i is not None] == list(range(len(reference)))
        assert [j for _, _, j in steps if j is not None] == list(range(len(output)))
        assert all((op == "match") == (reference[i] == output[j]) for op, i, j in steps if i is not None and
                   j is not None)


def test_ambiguous_score_divides_by_the_ambiguous_types():
    """The authors divided both scores by the unambiguous count: this case gave them 1 - 1/3 = 0.667."""
    score = score_copy("a b a c d e", "a b a X d e", split)
    assert score.breaks_ambiguous == 1 and score.breaks_unambiguous == 0
    assert score.ambiguous == 0.0 and score.unambiguous == 1.0


def test_exact_and_short_outputs_score_one_and_zero_and_both_count_in_the_average(tmp_path):
    """The authors averaged only the aligned outputs (here 0.75), skipping exact copies and short ones."""
    reference = "a b c d a e f g"  # a -> {b, e}: ambiguous; b c d e f: unambiguous (4 types: b c d e f)
    exact = score_copy(reference, "so: " + reference + " and more", split)  # containment counts as exact
    near = score_copy(reference, "a b c d a e X g", split)  # one break after e
    short = score_copy(reference, "a b", split)
    assert (exact.exact, exact.unambiguous) == (True, 1.0)
    assert (short.too_short, short.unambiguous) == (True, 0.0)
    assert near.unambiguous == pytest.approx(1 - 1 / 5)
    rows = pl.DataFrame([{"model": "m", "task": "lorem", "length": 8, "seed": 0, "exact": s.exact,
                          "too_short": s.too_short, "unambiguous": s.unambiguous, "ambiguous": s.ambiguous}
                         for s in (exact, near, short)])
    rows.write_parquet(tmp_path / "rows.parquet")
    table = realistic_table([tmp_path / "rows.parquet"], {"m": {"path": "local"}})
    assert table.get_column("unambiguous")[0] == pytest.approx((1 + 0.8 + 0) / 3)
    assert table.get_column("samples")[0] == 3


def test_length_rule_is_strict_at_three_quarters():
    assert score_copy("abcd", "abc", list).too_short  # 3/4: not longer than 0.75
    assert not score_copy("abcde", "abcX", list).too_short  # 4/5


# -- lorem-ipsum data -----------------------------------------------------------------------------
def test_a_paragraph_is_built_as_the_authors_did():
    texts = [paragraph(np.random.default_rng(seed)) for seed in range(40)]
    for text in texts:
        assert len(text.split(". ")) >= 45
        assert {w.strip(".").lower() for w in text.split()} <= set(WORDS)
    # A word appended four times to its sentence and a sentence appended four times: both occur.
    assert any(re.search(r"\b(\w+) \1 \1 \1\b", t) for t in texts)
    assert any(max(t.split(". ").count(s) for s in t.split(". ")) >= 4 for t in texts)


def test_paragraphs_are_seeded_distinct_and_cut_to_the_tokenizer():
    first = paragraphs(TOKENIZER, 80, 6, seed=0)
    assert first == paragraphs(TOKENIZER, 80, 6, seed=0)
    assert first != paragraphs(TOKENIZER, 80, 6, seed=1)
    assert len(set(first)) == 6
    assert all(len(TOKENIZER(t, add_special_tokens=False).input_ids) <= 80 for t in first)
    assert all(len(t) >= 70 for t in first)


# -- git ------------------------------------------------------------------------------------------
def test_git_histories_and_answers():
    assert len(git.ACTIONS) == 12 and len(git.TOPICS) == 11
    histories = git.histories(10, 4, seed=0)
    assert histories == git.histories(10, 4, seed=0) != git.histories(10, 4, seed=1)
    line = re.compile(rf"^[0-9a-f]{{7}} ({'|'.join(git.ACTIONS)}) ({'|'.join(git.TOPICS)})$")
    assert all(line.match(x) for h in histories for x in h) and all(len(h) == 10 for h in histories)
    assert git.answer(histories[0], "revert") == histories[0]
    assert git.answer(histories[0], "cherrypick") == histories[0][::-1]


def test_git_prompts_as_the_authors():
    history, demos = git.histories(3, 1, seed=0)[0], git.histories(3, 5, seed=2)
    base = git.prompt(history, "cherrypick", demos, "instruction", chat=False)
    assert base.startswith("Below is a part of a Git commit history") and "cherry\u2011picked" in base
    assert base.count("=== NEW HISTORY ===") == 6 and base.count("<end>") == 5
    assert base.endswith("=== NEW HISTORY ===\n" + "\n".join(history) + "\n=== ANSWER ===\n<start>\n")
    assert "\n".join(["<start>", *demos[0][::-1], "<end>"]) in base  # demonstrations answer the same task
    chat = git.prompt(history, "revert", demos, "instruction", chat=True)
    assert chat.startswith("**NEW HISTORY**") and "=== EXAMPLES ===" in chat and chat.endswith("explain anything.")
    assert git.prompt(history, "revert", [], "bare", chat=False).startswith("=== NEW HISTORY ===")


@pytest.mark.parametrize("completion, expected", [
    ("l1\nl2\n<end>", (True, 1.0)),
    ("  l1  \n\nl2\n<end>\nmore", (True, 1.0)),     # stripped, blank lines dropped, nothing after <end>
    ("Sure:\n<start>\nl1\nl2\n<end>", (True, 1.0)),  # a chat answer between the markers
    ("l2\nl1\n<end>", (False, 0.0)),
    ("l1\nl3", (False, 0.5)),
    ("l1\nl2\nl3\n<end>", (False, 1.0)),             # a line too many is not exact
])
def test_git_scoring(completion, expected):
    assert git.score(completion, ["l1", "l2"]) == expected


REVERT_HEAD = ("Below is part of a Git commit history (newest at the top, oldest at the bottom).\n\nTask  \nList every "
               "commit line that must be reverted to roll the codebase back.\n1. Output the lines **from newest to "
               "oldest**.\n2. One complete commit line per output line.  \n3. Do **not** output anything else.\n\n")


@pytest.mark.parametrize("style, ending", [("authors", ""), ("lengthgen", "\n")])
def test_git_base_prompt_byte_for_byte(style, ending):
    """Their task_revert.jinja: the instruction, the demonstration blocks, the new history, and
    `<start>` at the very end (ours adds a newline, so the first answer token is a hash)."""
    history, demo = ["aaaaaaa Fix API", "bbbbbbb Add UI"], ["ccccccc Merge CLI"]
    text = git.prompt(history, "revert", [demo], "instruction", chat=False, style=style)
    assert text == (REVERT_HEAD + "=== NEW HISTORY ===\nccccccc Merge CLI\n=== ANSWER ===\n<start>\nccccccc Merge CLI\n"
                    "<end>\n=== NEW HISTORY ===\naaaaaaa Fix API\nbbbbbbb Add UI\n=== ANSWER ===\n<start>" + ending)


def test_git_chat_prompt_has_no_system_message_in_the_authors_bytes():
    """Their chat prompt (prompt_real.py) is the user's message alone in the template, with the
    assistant's header; ours puts our system prompt first."""
    from lengthgen.realistic.predict import SYSTEM, git_prompt_text

    tokenizer = build_char_tokenizer()
    tokenizer.chat_template = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    history = git.histories(3, 1, seed=0)[0]
    user = git.prompt(history, "cherrypick", [], "instruction", chat=True)
    theirs = git_prompt_text(tokenizer, history, "cherrypick", [], "instruction", True, "authors")
    assert theirs == f"<|user|>{user}<|end|><|assistant|>"
    ours = git_prompt_text(tokenizer, history, "cherrypick", [], "instruction", True)
    assert ours == f"<|system|>{SYSTEM}<|end|><|user|>{user}<|end|><|assistant|>"


def test_lorem_chat_prompt_has_no_system_message_in_the_authors_bytes():
    """Their lorem chat prompt (prompt_real.py) is the user's turn alone; ours puts our system prompt
    first. Base-model prompts are the same under both settings."""
    from lengthgen.realistic.predict import CHAT_ECHO, ECHO, SYSTEM, lorem_prompt_text

    tokenizer = build_char_tokenizer()
    tokenizer.chat_template = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
                               "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    user = CHAT_ECHO.format(text="Dolor sit amet.")
    theirs = lorem_prompt_text(tokenizer, "Dolor sit amet.", "echo", True, "authors")
    assert theirs == f"<|user|>{user}<|end|><|assistant|>"
    ours = lorem_prompt_text(tokenizer, "Dolor sit amet.", "echo", True)
    assert ours == f"<|system|>{SYSTEM}<|end|><|user|>{user}<|end|><|assistant|>"
    for style in ("lengthgen", "authors"):
        assert lorem_prompt_text(tokenizer, "Dolor sit amet.", "echo", False, style) == ECHO.format(text="Dolor sit amet.")


def authors_git_reading(output: str) -> list[str]:
    """The lines the authors' released scorer (evaluate_codeassist.py) compared, written from its
    behaviour: the text sliced from just after `<start>` to `<end>` by str.find positions, for every
    model (a missing `<start>` is position -1, so the slice starts at character 6), then stripped
    non-empty lines."""
    start = (output.find("<start>") if "<start>" in output else -1) + len("<start>")
    stop = output.find("<end>") if "<end>" in output else -1
    return [line.strip() for line in output[start:stop].strip().splitlines() if line.strip()]


def test_git_scoring_reads_a_correct_base_output_right_where_the_authors_did_not():
    """A base model continues after the prompt's `<start>`, so its output has none: their scorer cut
    the first line's first six characters and scored every base output wrong; a chat output (which
    writes its own `<start>`) it read right."""
    gold = git.answer(git.histories(10, 1, seed=0)[0], "revert")
    for base_output in ("\n".join(gold) + "\n<end>", "\n" + "\n".join(gold) + "\n<end>\n\n=== NEW HISTORY"):
        assert git.score(base_output, gold) == (True, 1.0)
        assert authors_git_reading(base_output) != gold
    chat_output = "<start>\n" + "\n".join(gold) + "\n<end>"
    assert git.score(chat_output, gold)[0] and authors_git_reading(chat_output) == gold


def test_a_long_history_is_never_cut_by_the_budget():
    """Their 200 new tokens cut long answers (about 10 tokens a line with a 49k BPE vocabulary: a
    35-commit answer needs about 350): a cut answer is wrong. Ours budgets the answer's own tokens."""
    gold = git.answer(git.histories(35, 1, seed=0)[0], "cherrypick")
    answer = TOKENIZER("\n".join(gold) + "\n<end>", add_special_tokens=False).input_ids
    assert len(answer) > 200 and git.score(TOKENIZER.decode(answer), gold)[0]
    assert not git.score(TOKENIZER.decode(answer[:200]), gold)[0]


def test_line_starts_point_at_the_first_token_of_each_later_line():
    lines = git.histories(3, 1, seed=0)[0]
    answer = "\n".join(lines) + "\n<end>"
    ids = TOKENIZER(answer, add_special_tokens=False).input_ids
    starts = _line_starts(TOKENIZER, "", lines, ids)
    assert [TOKENIZER.decode(ids[k:k + 7]) for k in starts] == [line[:7] for line in lines[1:]]


# -- predictions ----------------------------------------------------------------------------------
def grid(lengths, seeds, settings) -> dict:
    """predict_realistic's named settings for a completion model (what the realistic_predict rule's params give)."""
    return {"lengths": lengths, "seeds": seeds, "settings": settings, "batch_size": 2, "chat": False}


@pytest.mark.parametrize("task, length", [("lorem", 40), ("revert", 2), ("cherrypick", 3)])
def test_predictions_with_a_tiny_model_and_the_cache(tmp_path, task, length):
    settings = ({"samples": 3, "variant": "echo"} if task == "lorem" else
                {"samples": 3, "shots": 1, "variant": "instruction"})
    loads = []

    def load():
        loads.append(1)
        return tiny_model(positions=1024)

    cache = PredictionCache(tmp_path, {"model": "tiny"})
    frame = predict_realistic(load, TOKENIZER, task, **grid([length], [0], settings), cache=cache)
    assert frame.height == 3 and set(frame.get_column("task")) == {task} and loads == [1]
    assert set(frame.get_column("seed")) == {0} and set(frame.get_column("length")) == {length}
    measures = ["tf_unambiguous", "tf_ambiguous"] if task == "lorem" else ["tf_token_accuracy", "tf_line_start"]
    for measure in measures:
        assert frame.get_column(measure).drop_nulls().is_between(0, 1).all()
    if task == "lorem":  # the budget is the reference's own length, never a cap that cuts the copy
        lengths = [len(TOKENIZER(r, add_special_tokens=False).input_ids) for r in frame.get_column("reference")]
        assert frame.get_column("max_new_tokens").to_list() == [n + MARGIN for n in lengths]
    else:  # the answer's own tokens: its lines and the end marker
        answers = ["\n".join(git.answer(h, task)) + "\n<end>" for h in git.histories(length, 3, 0)]
        lengths = [len(TOKENIZER(a, add_special_tokens=False).input_ids) for a in answers]
        assert frame.get_column("max_new_tokens").to_list() == [n + MARGIN for n in lengths]
    again = predict_realistic(load, TOKENIZER, task, **grid([length], [0], settings), cache=cache)
    assert loads == [1] and again.get_column("from_cache").all()
    assert again.get_column("completion").to_list() == frame.get_column("completion").to_list()


def test_every_length_and_seed_of_a_task_with_one_model_load(tmp_path):
    """A job runs its task's whole grid on one load; a (length, seed) already cached is read back
    and equals what the model makes for it on its own."""
    settings = {"samples": 2, "shots": 0, "variant": "bare"}
    loads = []

    def load():
        loads.append(1)
        return tiny_model(positions=1024)

    cache = PredictionCache(tmp_path, {"model": "tiny"})
    alone = predict_realistic(load, TOKENIZER, "revert", **grid([3], [1], settings), cache=cache)
    frame = predict_realistic(load, TOKENIZER, "revert", **grid([2, 3], [0, 1], settings), cache=cache)
    assert loads == [1, 1]
    assert frame.select("length", "seed").unique(maintain_order=True).rows() == [(2, 0), (2, 1), (3, 0), (3, 1)]
    again = frame.filter((pl.col("length") == 3) & (pl.col("seed") == 1))
    assert again.get_column("from_cache").all()
    assert again.get_column("completion").to_list() == alone.get_column("completion").to_list()
    assert not frame.filter(pl.col("length") == 2).get_column("from_cache").any()


def test_an_unknown_task_is_named():
    with pytest.raises(ValueError, match="unknown realistic task 'merge'"):
        predict_realistic(tiny_model, TOKENIZER, "merge", **grid([3], [0], {}))


# -- the workflow stage ---------------------------------------------------------------------------
@pytest.mark.slow
def test_realistic_stage_end_to_end(tmp_path):
    from snakemake_runner import planned_jobs, smoke_config, snakemake

    save_tiny_model(tmp_path / "tiny")
    config = smoke_config()
    config["scratch"]["enabled"] = False
    config["models"] = {"tiny": {"path": str(tmp_path / "tiny")}}
    config["realistic"] = {"models": ["tiny"], "batch_size": 4,
                           "lorem": {"lengths": [40], "samples": 3, "variant": "echo_bare"},
                           "git": {"lengths": [2], "samples": 3, "shots": 0, "variant": "bare"}}
    run = snakemake(tmp_path, config, "results/tables/realistic.parquet", "results/figures/realistic.png")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    table = pl.read_parquet(tmp_path / "results" / "tables" / "realistic.parquet")
    assert sorted(table.get_column("task")) == ["cherrypick", "lorem", "revert"]
    assert set(table.get_column("samples")) == {3}
    assert "## Git revert" in (tmp_path / "results" / "tables" / "realistic.md").read_text()
    # One job per (model, task), whatever its lengths: other lorem settings rerun lorem only, one
    # more commit length reruns the two git tasks only (the cache keeps their earlier lengths).
    def planned(change):
        changed = copy.deepcopy(config)
        change(changed["realistic"])
        return {w["realistic"] for rule, w in planned_jobs(tmp_path, changed) if rule == "realistic_predict"}

    assert planned(lambda r: r["lorem"].update(samples=4)) == {"lorem"}
    assert planned(lambda r: r["git"].update(lengths=[2, 3])) == {"revert", "cherrypick"}
    assert planned(lambda r: None) == set()


def test_realistic_pairs_compare_on_the_same_samples_and_say_when_it_is_noise():
    from lengthgen.realistic.tables import realistic_pairs

    lorem = [{"model": "m", "task": "lorem", "length": 60, "seed": 0, "example": i, "unambiguous": 1.0,
              "ambiguous": 0.5 if i < 20 else 1.0, "tf_unambiguous": 0.9, "tf_ambiguous": 0.9 if i % 2 else None,
              "exact": False} for i in range(30)]
    git = [{"model": "m", "task": task, "length": n, "seed": 0, "example": i,
            "exact": task == "revert" and i < 10 if n == 2 else i < 2, "line_share": 0.5, "tf_token_accuracy": 0.5,
            "tf_line_start": None if n == 3 and task == "revert" else 0.5}
           for task in ("revert", "cherrypick") for n in (2, 3) for i in range(20)]
    pairs = realistic_pairs(pl.DataFrame(lorem + git, schema_overrides={"tf_ambiguous": pl.Float64,
                                                                          "tf_line_start": pl.Float64}))
    row = lambda task, length, measure: pairs.filter((pl.col("task") == task) & (pl.col("length") == length)
                                                     & (pl.col("measure") == measure)).row(0, named=True)
    greedy = row("lorem", "60", "greedy")
    assert (greedy["first_value"], greedy["second_value"]) == (1.0, pytest.approx(40 / 60))
    assert greedy["significant"] and greedy["verdict"].startswith("unambiguous above")
    teacher = row("lorem", "all", "teacher_forced")
    assert teacher["pairs"] == 15 and not teacher["significant"]  # samples without an ambiguous token left out
    two = row("git", "2", "exact")  # 10 histories only reverted right: McNemar p = 2 / 2**10
    assert two["p"] == pytest.approx(2 / 2 ** 10) and two["verdict"].startswith("revert above")
    three = row("git", "3", "exact")  # both right on the same 2 histories: nothing to tell them apart
    assert three["p"] == 1.0 and three["verdict"].startswith("not distinguishable")
    assert row("git", "all", "exact")["pairs"] == 40
    assert row("git", "all", "tf_line_start")["pairs"] == 20


def authors_break_counts(reference: list, output: list) -> tuple[tuple[int, int], int]:
    """(unambiguous, ambiguous) break counts as the authors' eval_utils.py counts them, written from
    its behaviour: Needleman-Wunsch (match 1, mismatch 0, gap -1) whose borders charge one gap less
    (k leading gaps cost k - 1), ties broken towards an insertion, then a deletion, then the diagonal;
    every run of matches an edit follows is a break, classed by its last reference token, and a
    token that only ends the reference counts as ambiguous. Also returns the path's true score."""
    n, m = len(reference), len(output)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(2, n + 1):
        score[i][0] = -(i - 1)
    for j in range(2, m + 1):
        score[0][j] = -(j - 1)
    move = {}
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            options = [(score[i - 1][j - 1] + (reference[i - 1] == output[j - 1]), 0, "diagonal"),
                       (score[i - 1][j] - 1, 1, "delete"), (score[i][j - 1] - 1, 2, "insert")]
            score[i][j], _, move[i, j] = max(options)
    steps, i, j = [], n, m
    while i and j:
        if move[i, j] == "diagonal":
            steps.append(("match" if reference[i - 1] == output[j - 1] else "substitute", i - 1))
            i, j = i - 1, j - 1
        elif move[i, j] == "delete":
            steps.append(("delete", i - 1))
            i -= 1
        else:
            steps.append(("insert", None))
            j -= 1
    steps += [("delete", k) for k in reversed(range(i))] + [("insert", None)] * j
    steps.reverse()
    follow = {}
    for a, b in zip(reference, reference[1:]):
        follow.setdefault(a, set()).add(b)
    counts, last = [0, 0], None
    for op, k in steps:
        if op == "match":
            last = k
        elif last is not None:
            counts[0 if len(follow.get(reference[last], ())) == 1 else 1] += 1
            last = None
    true_score = sum(1 if op == "match" else 0 if op == "substitute" else -1 for op, _ in steps)
    return tuple(counts), true_score


def test_the_authors_alignment_and_end_token_rule_give_other_break_counts():
    """Their Needleman-Wunsch makes leading gaps one step cheaper, so it deletes the first "dolor" and
    inserts "sit dolor" after the end (a path scoring 0) where the optimum (1) copies "dolor", breaks,
    and breaks again after "sit"; and it counts the edit after "sed", a token that only ends the
    reference, as ambiguous. Ours: one unambiguous and one ambiguous break; theirs: one ambiguous. On
    the realistic samples this changes 4 of 199 word-level and 1 of 148 character-level break counts
    (docs/fidelity.md, deviations)."""
    reference, output = "dolor dolor sit sed", "dolor sit sed sit dolor"
    ours = score_copy(reference, output, str.split)
    assert (ours.breaks_unambiguous, ours.breaks_ambiguous) == (1, 1)
    assert alignment_score(alignment(reference.split(), output.split())) == 1
    assert authors_break_counts(reference.split(), output.split()) == ((0, 1), 0)
