"""In-context evaluation throughput: the pipeline's decoding path (`engine.decoding.greedy_decode`)
against Hugging Face `generate` one prompt at a time and batched (left padding, and a static KV
cache). The pipeline used a hand-written decoder until this bench showed batched `generate` as fast
(bench/RESULTS.md); it now wraps `generate`, and this bench guards that it stays as fast and equal.

Same model, same prompts (the pipeline's own, built from generated data), same stop rules and
per-prompt budgets; all run in this process one after the other. Prints examples/s of each, the
ratios, and whether every answer agrees. Run: `.venv/bin/python bench/icl_throughput.py` (the
shipped embedded model when present, else a randomly initialised model of the same shape).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import yaml

from lengthgen.engine.decoding import Request, greedy_decode, stop_cut
from lengthgen.icl.predict import BUDGET_MARGIN, STOPS, build_prompts
from lengthgen.icl.prompts import symbol_separator
from lengthgen.runtime import configure
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generate import make_dataset

REPO = Path(__file__).resolve().parents[1]
EMBEDDED = REPO / "resources" / "embedded" / "gpt2"


def load_model(path: Path, device: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lengthgen.models.builders import build_char_model
    from lengthgen.models.char_tokenizer import build_char_tokenizer

    if path.is_dir():
        return (AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(device).eval(),
                AutoTokenizer.from_pretrained(path), str(path.relative_to(REPO) if path.is_relative_to(REPO) else path))
    tokenizer = build_char_tokenizer()
    special = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                   pad_token_id=tokenizer.pad_token_id)
    preset = yaml.safe_load((REPO / "configs" / "pretrain.yaml").read_text())["pretrain"]
    model = build_char_model("gpt2", len(tokenizer), preset["context"], seed=0, special_ids=special, **preset["model"])
    shape = preset["model"]
    return model.to(device).eval(), tokenizer, f"random gpt2 of the pretrain preset's shape {shape} (no shipped model)"


def per_example(model, tokenizer, requests) -> list[str]:
    device = next(model.parameters()).device
    answers = []
    for request in requests:
        ids = torch.tensor([tokenizer(request.prompt, add_special_tokens=False).input_ids], device=device)
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=request.max_new_tokens,
                             do_sample=False, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                             stop_strings=list(request.stop), tokenizer=tokenizer)
        answers.append(stop_cut(tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True), request.stop)[0])
    return answers


def batched_generate(model, tokenizer, requests, batch_size: int, static: bool) -> list[str]:
    """`generate` on left-padded batches (sorted by length, as the decoder does): each row cut to its
    own budget and stop strings afterwards."""
    device = next(model.parameters()).device
    tokenizer.padding_side = "left"
    order = sorted(range(len(requests)), key=lambda i: -len(tokenizer(requests[i].prompt).input_ids))
    answers = [None] * len(requests)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        batch = tokenizer([requests[i].prompt for i in rows], return_tensors="pt", padding=True,
                          add_special_tokens=False).to(device)
        budget = max(requests[i].max_new_tokens for i in rows)
        out = model.generate(**batch, max_new_tokens=budget, do_sample=False, eos_token_id=tokenizer.eos_token_id,
                             pad_token_id=tokenizer.pad_token_id, stop_strings=sorted({s for i in rows
                                                                                       for s in requests[i].stop}),
                             tokenizer=tokenizer, cache_implementation="static" if static else None)
        for row, i in enumerate(rows):
            tokens = out[row, batch["input_ids"].shape[1]:][: requests[i].max_new_tokens].tolist()
            if tokenizer.eos_token_id in tokens:
                tokens = tokens[: tokens.index(tokenizer.eos_token_id)]
            answers[i] = stop_cut(tokenizer.decode(tokens, skip_special_tokens=True), requests[i].stop)[0]
    return answers


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=EMBEDDED)
    parser.add_argument("--tasks", nargs="+", default=["UR", "NLFirst", "UF", "UB"])
    parser.add_argument("--length", default="15")
    parser.add_argument("--examples", type=int, default=32, help="per task")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    device = configure(args.threads)
    model, tokenizer, name = load_model(args.model, str(device))
    settings = {"alphabet_size": 52, "pool_fraction": 1 / 3, "occurrence_divisor": 4}
    separator = symbol_separator(tokenizer)
    files = []  # as in the pipeline: one file per task, decoded on its own
    for name_ in args.tasks:
        task = get_task(name_)
        rows = make_dataset(task, "chars", settings, LengthBin.parse(args.length), args.examples, 0).to_pylist()
        prompts = build_prompts(task, rows, settings, 0, "bare", separator, False, 5)
        files.append([Request(p.text, len(tokenizer("".join(t for t, _ in p.continuation)).input_ids) + BUDGET_MARGIN,
                              STOPS[task.family]) for p in prompts])
    requests = [r for file in files for r in file]
    greedy_decode(model, tokenizer, requests[:2], batch_size=2)  # warm-up
    batch = args.batch_size
    decoder, decoder_s = timed(lambda: [a for f in files for a in greedy_decode(model, tokenizer, f, batch_size=batch)])
    dynamic, dynamic_s = timed(lambda: [a for f in files for a in batched_generate(model, tokenizer, f, batch, False)])
    static, static_s = timed(lambda: [a for f in files for a in batched_generate(model, tokenizer, f, batch, True)])
    reference, reference_s = timed(lambda: per_example(model, tokenizer, requests))
    n = len(requests)
    print(f"model: {name}; device {device}, {args.threads} threads; {n} prompts "
          f"({', '.join(args.tasks)} at length {args.length}, separator {separator!r}), batch {batch}")
    for label, answers, seconds in (("per-example generate", reference, reference_s),
                                    ("batched generate, dynamic cache", dynamic, dynamic_s),
                                    ("batched generate, static cache", static, static_s),
                                    ("pipeline decoding path", decoder, decoder_s)):
        agree = sum(a == b for a, b in zip(answers, reference))
        print(f"{label:32s} {n / seconds:8.2f} examples/s  {reference_s / seconds:5.1f}x per-example  "
              f"answers equal to per-example: {agree}/{n}")
    print(f"pipeline decoding path / best batched generate: {min(dynamic_s, static_s) / decoder_s:.2f}x")


if __name__ == "__main__":
    main()
