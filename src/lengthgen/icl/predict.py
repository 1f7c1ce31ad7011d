"""In-context evaluation of a pretrained model on one (task, length, seed, variant) data file.

Completion models get the few-shot text of prompts.py and stop at the line end / `<eos>`; chat
models get the same content in their chat template and answer between `<target>` and
`</target>`. The new-token budget comes from the answer's own length (never a fixed cap: the
authors' 60-token cap truncated length-100 copies). Each prediction keeps its exact prompt.
"""

from __future__ import annotations

import re

import polars as pl
import torch

from ..engine.decoding import Request, greedy_decode
from ..tasks import Task, get_task
from .cache import PredictionCache, prediction_key
from .prompts import build_prompt, parse_answer

CHAT_INSTRUCTION = "Continue the pattern for the last line. Give only the answer, between <target> and </target>."
BUDGET_MARGIN = 8  # tokens beyond the answer's own length (spaces, the stop string, a stray token)


def chat_prompt(tokenizer, text: str) -> str:
    messages = [{"role": "user", "content": f"{text}\n\n{CHAT_INSTRUCTION}"}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def parse_chat(task: Task, completion: str) -> str:
    match = re.search(r"<target>(.*?)(</target>|$)", completion, flags=re.S)
    return parse_answer(task, match.group(1) if match else completion)


def right_neighbour_error(task: Task, row: dict, predicted: str) -> bool | None:
    """For a left/backward task: is the wrong answer what the induction (right) direction gives?

    Retrieval: the right neighbour of the occurrence used. Backward copy: at the first wrong
    symbol, the right neighbour (in the input) of the last symbol copied correctly.
    None for right/forward tasks and for correct answers.
    """
    expected = row["target_text"] if task.family == "retrieval" else " ".join(row["target_text"])
    if task.induction or predicted == expected:
        return None
    context = row["context_text"]
    if task.family == "retrieval":
        p = row["target_position"]
        return predicted == context[p + 1]
    got, want = predicted.split(), expected.split()
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    if i == 0 or i >= len(got):
        return False
    j = context.index(want[i - 1])  # unique copy: symbols are distinct; repeats: first occurrence
    return j + 1 < len(context) and got[i] == context[j + 1]


def decoding_settings(request: Request) -> dict:
    return {"greedy": True, "max_new_tokens": request.max_new_tokens, "stop": list(request.stop)}


def decode_with_cache(model, tokenizer, requests: list[Request], cache: PredictionCache | None,
                      batch_size: int, progress: bool = False) -> tuple[list[str], list[bool]]:
    """Completions for every request, decoding only those the cache lacks, and which came from it.

    `model` may be a function returning the model: it is called only when something is missing.
    """
    keys = [prediction_key(r.prompt, decoding_settings(r)) for r in requests]
    found = [cache.get(k) if cache is not None else None for k in keys]
    missing = [i for i, c in enumerate(found) if c is None]
    cached = [c is not None for c in found]
    if missing:
        model = model() if callable(model) and not isinstance(model, torch.nn.Module) else model
        decoded = greedy_decode(model, tokenizer, [requests[i] for i in missing], batch_size=batch_size,
                                progress=progress)
        for i, completion in zip(missing, decoded):
            found[i] = completion
        if cache is not None:
            cache.add({keys[i]: found[i] for i in missing})
    return found, cached


def build_requests(tokenizer, rows: list[dict], task: Task, settings: dict, seed: int, variant: str,
                   kind: str = "completion", shots: int = 5) -> tuple[list, list[Request]]:
    """The prompt (with its expected answer) and the decoding request of every example."""
    prompts = [build_prompt(task, settings, seed, variant, r["context"], r["query"], r["target"], shots)
               for r in rows]
    stops = ("</target>",) if kind == "chat" else ("\n", "<eos>")
    requests = []
    for prompt in prompts:
        text = chat_prompt(tokenizer, prompt.text) if kind == "chat" else prompt.text
        answer_tokens = len(tokenizer(f" {prompt.answer} <eos>", add_special_tokens=False).input_ids)
        requests.append(Request(text, answer_tokens + BUDGET_MARGIN + (8 if kind == "chat" else 0), stops))
    return prompts, requests


def evaluate_rows(model, tokenizer, rows: list[dict], task: Task, settings: dict, seed: int, variant: str,
                  kind: str = "completion", batch_size: int = 16, shots: int = 5, progress: bool = False,
                  cache: PredictionCache | None = None) -> pl.DataFrame:
    """Per-example prompt, completion, parsed answer and exact match.

    `model` is a model or a function returning one (loaded only if the cache lacks a prediction).
    """
    prompts, requests = build_requests(tokenizer, rows, task, settings, seed, variant, kind, shots)
    completions, from_cache = decode_with_cache(model, tokenizer, requests, cache, batch_size, progress)
    parse = parse_chat if kind == "chat" else parse_answer
    predicted = [parse(task, c) for c in completions]
    return pl.DataFrame({
        "example": [r["example"] for r in rows],
        "length": [r["length"] for r in rows],
        "prompt": [r.prompt for r in requests],
        "completion": completions,
        "prediction": predicted,
        "expected": [p.answer for p in prompts],
        "correct": [a == p.answer for a, p in zip(predicted, prompts)],
        "right_neighbour_error": [right_neighbour_error(task, r, a) for r, a in zip(rows, predicted)],
        "max_new_tokens": [r.max_new_tokens for r in requests],
        "from_cache": from_cache,
    }, schema_overrides={"right_neighbour_error": pl.Boolean})


def predict_files(load_model, tokenizer, files: list[dict], settings: dict[str, dict], kind: str, shots: int,
                  batch_size: int, cache: PredictionCache | None = None, progress: bool = False) -> pl.DataFrame:
    """Predictions for every file of a grid with one model, loaded once and only if the cache lacks
    something. files: [{"task", "bin", "seed", "variant", "rows"}]; settings: generator settings per task."""
    loaded = []

    def model():
        if not loaded:
            loaded.append(load_model())
        return loaded[0]

    frames = []
    for file in files:
        task = get_task(file["task"])
        frame = evaluate_rows(model, tokenizer, file["rows"], task, settings[task.name], file["seed"], file["variant"],
                              kind, batch_size, shots, progress=progress, cache=cache)
        frames.append(frame.with_columns(pl.lit(task.name).alias("task"), pl.lit(file["bin"]).alias("bin"),
                                         pl.lit(file["seed"]).alias("seed"), pl.lit(file["variant"]).alias("variant")))
    return pl.concat(frames)
