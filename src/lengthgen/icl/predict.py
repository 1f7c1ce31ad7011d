"""In-context predictions of one model on a grid of data files, with their scores.

Completion models get the few-shot text of `prompts` and stop where the authors' runs stopped
(retrieval: the line end; copying: a blank line or `<eos>`); chat models get the authors' system
and format prompts in their chat template and answer between `<target>` tags. The new-token budget
comes from the answer's own length (never a fixed cap: the authors' 60-token cap truncated
length-100 copies), with a floor for chat models (`icl.chat.max_new_tokens`: room for a sentence
before the answer; the authors' 20 and 400). Every prediction keeps its exact prompt, and beside
the greedy answer the teacher-forced measures of `teacher`. Decodings and teacher-forced scores are
cached, and the model is loaded only when something is missing.
"""

from __future__ import annotations

import polars as pl

from ..inference.cache import PredictionCache, prediction_key
from ..inference.cached import CachedModel, forced_with_cache
from ..inference.forcing import ForcedItem
from ..inference.text import model_text
from ..settings import ChatSettings
from ..tasks import Task, get_task
from ..tasks.generate import encode
from ..tasks.pools import demonstration_pool
from .prompts import Example, build_prompt, draw_demonstrations
from .scoring import authors_prediction, right_neighbour_error, strict_correct
from .teacher import TeacherItem, forced_items, scores_of

BUDGET_MARGIN = 8  # tokens beyond the answer's own length (the stop string, a stray token)
STOPS = {"retrieval": ("\n",), "copying": ("\n\n", "<eos>")}


def build_prompts(task: Task, rows: list[dict], settings: dict, seed: int, variant: str, separator: str,
                  chat: bool, shots: int, chat_prompt: str = "lengthgen"):
    """The prompt of every example of a data file, demonstrations drawn per example from the pool."""
    pool = demonstration_pool(task, settings, seed)
    prompts = []
    for row in rows:
        example = Example.of(task, row["context"], row["query"], row["occurrences"])
        demonstrations = draw_demonstrations(task, pool, seed, row["example"], example, shots)
        prompts.append(build_prompt(task, variant, example, demonstrations, separator, chat, chat_prompt))
    return prompts


def _neighbours(task: Task, row: dict, separator: str, chat: bool) -> tuple[str, str] | None:
    """(right, left) neighbour of the occurrence the answer is read from, spelled as the answer."""
    if task.family != "retrieval":
        return None
    context, p = row["context"], row["target_position"]
    lead = "" if chat else " "
    return lead + encode([context[p + 1]], "chars"), lead + encode([context[p - 1]], "chars")


def predict_rows(model: CachedModel, tokenizer, task: Task, rows: list[dict], prompts: list, batch_size: int,
                 cache: PredictionCache | None = None, progress: bool = False, min_new_tokens: int = 0,
                 generation_prompt: bool = True) -> pl.DataFrame:
    """Greedy answers and teacher-forced measures of one file's prompts, with their scores.

    min_new_tokens: the new-token budget's floor (a chat model's room for a sentence before its
    answer); the answer's own length plus a margin when that is more, so no answer is ever cut.
    generation_prompt: whether greedy decoding starts after the chat template's assistant header
    (the teacher-forced measures always read the answer there)."""
    chat = prompts[0].chat if prompts else False
    texts = [model_text(tokenizer, p.text, p.system if p.chat else None, generation_prompt) for p in prompts]
    stops = ("</target>",) if chat else STOPS[task.family]
    budgets = [max(min_new_tokens, len(tokenizer("".join(t for t, _ in p.continuation),
                                                 add_special_tokens=False).input_ids) + BUDGET_MARGIN)
               for p in prompts]
    # Without the generation prompt a chat model writes the assistant's header itself, so greedy
    # decoding starts before it while the measures read the answer after it: two passes, not one.
    answered_after = texts if generation_prompt or not chat else [model_text(tokenizer, p.text, p.system)
                                                                 for p in prompts]
    fused = answered_after is texts
    teacher = [TeacherItem(text, p.continuation, _neighbours(task, row, p.separator, chat), budget if fused else 0,
                           stops) for text, p, row, budget in zip(answered_after, prompts, rows, budgets)]
    items, plans = forced_items(tokenizer, teacher)
    decoding = None if fused else [ForcedItem(tokenizer(t, add_special_tokens=False).input_ids, [], [], b, stops)
                                   for t, b in zip(texts, budgets)]
    teacher_keys = [prediction_key(i.prompt, {"teacher_forced": i.continuation, "neighbours": i.neighbours})
                    for i in teacher]
    completions, from_cache, scores, new = forced_with_cache(
        model, tokenizer, texts, items, teacher_keys, lambda i, result: scores_of(teacher[i], plans[i], result),
        cache, batch_size, progress, decoding)
    if cache is not None:
        cache.add(new)
    predicted = [authors_prediction(task, c, chat) for c in completions]
    return pl.DataFrame({
        "example": [r["example"] for r in rows],
        "length": [r["length"] for r in rows],
        "prompt": texts,
        "completion": completions,
        "prediction": predicted,
        "expected": [p.answer for p in prompts],
        "correct": [a == p.answer for a, p in zip(predicted, prompts)],
        "correct_strict": [strict_correct(c, p.answer_line, chat) for c, p in zip(completions, prompts)],
        "right_neighbour_error": [right_neighbour_error(task, r["context_text"], r["target_position"], a, p.answer)
                                  for r, a, p in zip(rows, predicted, prompts)],
        "tf_symbol_accuracy": [s["symbol_accuracy"] for s in scores],
        "tf_exact": [s["exact"] for s in scores],
        "target_logprob": [s["target_logprob"] for s in scores],
        "p_right": [s["p_right"] for s in scores],
        "p_left": [s["p_left"] for s in scores],
        "separator": [p.separator for p in prompts],
        "demonstrations": [p.demonstrations for p in prompts],
        "max_new_tokens": budgets,
        "from_cache": from_cache,
    }, schema_overrides={"right_neighbour_error": pl.Boolean, "p_right": pl.Float64, "p_left": pl.Float64})


def predict_files(load_model, tokenizer, files: list[dict], *, settings: dict[str, dict], chat: bool, separator: str,
                  shots: int, batch_size: int, cache: PredictionCache | None = None,
                  progress: bool = False, chat_settings: ChatSettings | None = None) -> pl.DataFrame:
    """Predictions for every file of a grid with one model, loaded once and only if the cache lacks
    something. files: [{"task", "bin", "seed", "variant", "rows"}]; settings: generator settings per task;
    chat_settings: a chat model's `icl.chat` section (its prompts, budget floor per family, generation prompt)."""
    model = CachedModel(load_model)
    chat_settings = chat_settings if chat else None
    budget_floor = chat_settings.max_new_tokens if chat_settings else {}
    chat_prompt = chat_settings.prompt if chat_settings else "lengthgen"
    generation_prompt = chat_settings.generation_prompt if chat_settings else True
    frames = []
    for file in files:
        task = get_task(file["task"])
        prompts = build_prompts(task, file["rows"], settings[task.name], file["seed"], file["variant"], separator,
                                chat, shots, chat_prompt)
        frame = predict_rows(model, tokenizer, task, file["rows"], prompts, batch_size, cache, progress,
                             budget_floor.get(task.family) or 0, generation_prompt)
        frames.append(frame.with_columns(pl.lit(task.name).alias("task"), pl.lit(file["bin"]).alias("bin"),
                                         pl.lit(file["seed"]).alias("seed"), pl.lit(file["variant"]).alias("variant")))
    return pl.concat(frames)
