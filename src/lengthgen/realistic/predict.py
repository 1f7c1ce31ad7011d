"""Predictions and scores of one model on the realistic tasks: lorem-ipsum echoes and git lists.

Greedy decoding with a new-token budget from the reference's own length (never a fixed cap),
through the shared forced pass and prediction cache (`lengthgen.inference`); beside it, teacher-forced measures
(the reference given, the model's top token read at every step), which see models too small to
echo a paragraph: for lorem, next-token accuracy where the current token is unambiguous against
ambiguous; for git, the share of answer tokens ranked first, and of the first tokens of lines after
the first (where the next line must be found: after the last one in the history for a revert, before
it for a cherry-pick), revert against cherry-pick.
"""

from __future__ import annotations

import zlib

import numpy as np
import polars as pl

from ..inference.cache import PredictionCache, prediction_key
from ..inference.cached import CachedModel, forced_with_cache
from ..inference.forcing import ForcedItem
from ..inference.text import model_text
from . import TASKS, git
from .ambiguity import classes, score_copy
from .lorem import paragraphs

MARGIN = 16  # tokens beyond the reference's own length (the end marker, a stray token)
# The authors' echo prompt for base models (prompts/realistic/loremipsum/task_echo.jinja).
ECHO = ("# RULE : Paragraphs are repeated **exactly** as is, whenever an Echo is seen.\n\n"
        "Paragraph:\n<start> Once upon a time in a land far away. <end>\nEcho:\n"
        "<start> Once upon a time in a land far away. <end>\n\n"
        "Paragraph:\n<start> The quick brown fox jumps over the lazy dog. <end>\nEcho:\n"
        "<start> The quick brown fox jumps over the lazy dog. <end>\n\n"
        "Paragraph:\n<start> {text} <end>\nEcho:\n<start> ")
# Without the rule and the demonstrations: for a model whose context they would not fit.
ECHO_BARE = "Paragraph:\n<start> {text} <end>\nEcho:\n<start> "
CHAT_ECHO = ("Please repeat the following paragraph exactly as it is, without any changes:\n\nParagraph:\n"
             "-------------------------------\n{text}\n-------------------------------\n\n"
             "Put the repeated paragraph between <paragraph> and </paragraph> tags. Use the phrase \"THE_END\" to "
             "mark the end of the response.")
SYSTEM = ("You are a very careful and precise assistant. You always follow the instructions and solve tasks yourself. "
          "You never generate code.")


def _predict(model: CachedModel, tokenizer, prompts: list[str], answers: list[list[int]], budgets: list[int],
             stops: tuple[str, ...], cache, batch_size: int, progress: bool):
    """Greedy completions and teacher-forced hits (whether the model ranks each answer token first)
    of the same prompts, from one forced pass per batch; new entries cached as one shard."""
    items = [ForcedItem(tokenizer(p, add_special_tokens=False).input_ids, a, [], b, stops)
             for p, a, b in zip(prompts, answers, budgets)]
    keys = [prediction_key(p, {"teacher_forced_tokens": a}) for p, a in zip(prompts, answers)]
    outputs, cached, hits, new = forced_with_cache(
        model, tokenizer, prompts, items, keys, lambda i, result: [p == t for p, t in zip(result.predicted, answers[i])],
        cache, batch_size, progress)
    if cache is not None and new:
        cache.add(new)
    return outputs, cached, hits


def lorem_prompt_text(tokenizer, text: str, variant: str, chat: bool, style: str = "lengthgen") -> str:
    """What a model is given for one paragraph: the echo prompt, for a chat model in its template, after
    our system prompt unless `style` is the authors' (their prompt_real.py sent the user's turn alone)."""
    template = CHAT_ECHO if chat else (ECHO if variant == "echo" else ECHO_BARE)
    return model_text(tokenizer, template.format(text=text), SYSTEM if chat and style != "authors" else None,
                      chat=chat)


def lorem_rows(model: CachedModel, tokenizer, tokens: int, seed: int, count: int, variant: str, chat: bool,
               batch_size: int, cache=None, progress: bool = False, style: str = "lengthgen") -> pl.DataFrame:
    """style "authors": a chat model's prompt is the user's message alone (no system prompt); base
    prompts are the same in both styles."""
    texts = paragraphs(tokenizer, tokens, count, seed)
    prompts = [lorem_prompt_text(tokenizer, t, variant, chat, style) for t in texts]
    references = [tokenizer(t, add_special_tokens=False).input_ids for t in texts]
    stops = ("</paragraph>", "THE_END") if chat else ("<end>",)
    budget = [len(r) + MARGIN + (8 if chat else 0) for r in references]
    outputs, cached, hits = _predict(model, tokenizer, prompts, references, budget, stops, cache, batch_size, progress)
    outputs = [o.split("<paragraph>")[-1] if chat else o for o in outputs]
    tokenize = lambda text: tokenizer(text, add_special_tokens=False).input_ids
    scores = [score_copy(t, o, tokenize) for t, o in zip(texts, outputs)]
    rows = []
    for i, (text, output, score, reference, hit) in enumerate(zip(texts, outputs, scores, references, hits)):
        unambiguous, ambiguous = classes(reference)
        # hit[k]: token k of the reference predicted from everything before it; its "current" token is k - 1.
        current = [(reference[k - 1], hit[k]) for k in range(1, len(reference))]
        rows.append({"example": i, "length": tokens, "reference": text, "completion": output, "exact": score.exact,
                     "too_short": score.too_short, "unambiguous": score.unambiguous, "ambiguous": score.ambiguous,
                     "breaks_unambiguous": score.breaks_unambiguous, "breaks_ambiguous": score.breaks_ambiguous,
                     "tf_unambiguous": _mean([h for t, h in current if t in unambiguous]),
                     "tf_ambiguous": _mean([h for t, h in current if t in ambiguous]),
                     "max_new_tokens": budget[i], "from_cache": cached[i]})
    return pl.DataFrame(rows, schema_overrides={"unambiguous": pl.Float64, "ambiguous": pl.Float64,
                                                "tf_unambiguous": pl.Float64, "tf_ambiguous": pl.Float64})


def _mean(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def git_prompt_text(tokenizer, history: list[str], task: str, demonstrations: list[list[str]], variant: str,
                    chat: bool, style: str = "lengthgen") -> str:
    """What a model is given for one history: the git prompt, for a chat model in its template, after
    our system prompt unless `style` is the authors' (their chat prompt was the user's message alone)."""
    text = git.prompt(history, task, demonstrations, variant, chat, style)
    return model_text(tokenizer, text, SYSTEM if chat and style != "authors" else None, chat=chat)


def git_rows(model: CachedModel, tokenizer, task: str, commits: int, seed: int, count: int, shots: int, variant: str,
             chat: bool, batch_size: int, cache=None, progress: bool = False, style: str = "lengthgen") -> pl.DataFrame:
    """style "authors": their prompt bytes (a base prompt ends at `<start>`; a chat one is the user's
    message alone, no system prompt); ours adds the newline and the system prompt."""
    lines = git.histories(commits, count, seed)
    prompts, golds = [], []
    for i, history in enumerate(lines):
        rng = np.random.default_rng([seed, commits, i, zlib.crc32(b"git-demonstrations")])
        others = [j for j in range(count) if j != i]
        demos = [lines[j] for j in rng.choice(others, size=min(shots, len(others)), replace=False)] if shots else []
        prompts.append(git_prompt_text(tokenizer, history, task, demos, variant, chat, style))
        golds.append(git.answer(history, task))
    lead = "<start>\n" if chat else "\n" if style == "authors" else ""
    answers = [lead + "\n".join(g) + "\n<end>" for g in golds]
    answer_ids = [tokenizer(a, add_special_tokens=False).input_ids for a in answers]
    starts = [_line_starts(tokenizer, lead, g, ids) for g, ids in zip(golds, answer_ids)]
    budget = [len(a) + MARGIN for a in answer_ids]
    outputs, cached, hits = _predict(model, tokenizer, prompts, answer_ids, budget, ("<end>",), cache, batch_size,
                                     progress)
    rows = []
    for i, (output, gold, hit) in enumerate(zip(outputs, golds, hits)):
        exact, share = git.score(output, gold)
        rows.append({"example": i, "length": commits, "task": task, "completion": output, "exact": exact,
                     "line_share": share, "tf_token_accuracy": _mean(hit),
                     "tf_line_start": _mean([hit[k] for k in starts[i]]), "max_new_tokens": budget[i],
                     "from_cache": cached[i]})
    return pl.DataFrame(rows, schema_overrides={"tf_token_accuracy": pl.Float64, "tf_line_start": pl.Float64})


def _line_starts(tokenizer, lead: str, lines: list[str], ids: list[int]) -> list[int]:
    """Answer-token indices where a line after the first begins: the one place where revert and
    cherry-pick differ (within a line both copy forward), so where the order of lines is recalled.
    A line whose start falls inside a token is left out."""
    found = []
    for k in range(1, len(lines)):
        prefix = tokenizer(lead + "\n".join(lines[:k]) + "\n", add_special_tokens=False).input_ids
        if len(prefix) < len(ids) and ids[:len(prefix)] == prefix:
            found.append(len(prefix))
    return found


def predict_realistic(load_model, tokenizer, task: str, *, lengths: list[int], seeds: list[int], settings: dict,
                      batch_size: int, chat: bool, cache: PredictionCache | None = None,
                      progress: bool = False) -> pl.DataFrame:
    """One task at every (length, seed) with one model, loaded once and only if the cache lacks
    something (a 70B model takes minutes to load). task: "lorem", "revert" or "cherrypick"; lengths:
    paragraph tokens or commits; settings: that task's section. Each (length, seed) adds its new
    predictions to the cache as it finishes, so a job killed midway keeps them."""
    if task not in TASKS:
        raise ValueError(f"unknown realistic task {task!r}; known: {', '.join(TASKS)}")
    model = CachedModel(load_model)
    frames = []
    for length in lengths:
        for seed in seeds:
            if task == "lorem":
                frame = lorem_rows(model, tokenizer, length, seed, settings["samples"], settings["variant"], chat,
                                   batch_size, cache, progress, settings.get("prompt", "lengthgen"))
                frame = frame.with_columns(pl.lit("lorem").alias("task"))
            else:
                frame = git_rows(model, tokenizer, task, length, seed, settings["samples"], settings["shots"],
                                 settings["variant"], chat, batch_size, cache, progress,
                                 settings.get("prompt", "lengthgen"))
            frames.append(frame.with_columns(pl.lit(seed).alias("seed")))
    return pl.concat(frames, how="diagonal")
