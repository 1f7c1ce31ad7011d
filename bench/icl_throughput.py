"""In-context stage throughput: greedy answers plus teacher-forced measures of the pipeline's own
prompts, three ways, in one process on the same model and prompts.

- per example: `generate` one prompt at a time, then one forward pass over prompt + answer;
- batched (the pipeline until this bench): batched `generate` (left padding, static KV cache) and a
  separate batched teacher-forced pass;
- the pipeline now (`inference.forcing.force`): one forced pass per batch gives the measures and the
  greedy tokens as long as they agree with the reference; only the rest decode, from its cache.

Prints prompts/s of each, the ratios, and whether every answer and measure agrees with the
per-example path. Run: `.venv/bin/python bench/icl_throughput.py --model results/models/smollm2`
(the default: that conversion when present, else the shipped embedded model).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import torch

from lengthgen.config import validate_config
from lengthgen.icl.predict import BUDGET_MARGIN, STOPS, build_prompts
from lengthgen.icl.teacher import TeacherItem, forced_items
from lengthgen.inference.decoding import Request, greedy_decode, stop_cut
from lengthgen.inference.forcing import force
from lengthgen.inference.text import symbol_separator
from lengthgen.runtime import configure
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generate import make_dataset

REPO = Path(__file__).resolve().parents[1]
SMOLLM2 = REPO / "results" / "models" / "smollm2"
EMBEDDED = REPO / "resources" / "embedded" / "gpt2"


def pipeline_items(tokenizer, tasks: dict[str, int], examples: int, variants: dict[str, str]):
    """Per task (one file, as the workflow runs it): the forced items with their decoding budgets."""
    config = validate_config({}, check_availability=False)
    separator = symbol_separator(tokenizer)
    files = []
    for name, length in tasks.items():
        task = get_task(name)
        settings = config["data"]["chars"][task.generator]
        rows = make_dataset(task, "chars", settings, LengthBin(length, length), examples, 0).to_pylist()
        prompts = build_prompts(task, rows, settings, 0, variants[task.family], separator, False, 5)
        teacher = [TeacherItem(p.text, p.continuation, None,
                               len(tokenizer("".join(t for t, _ in p.continuation), add_special_tokens=False).input_ids)
                               + BUDGET_MARGIN, STOPS[task.family]) for p in prompts]
        files.append(forced_items(tokenizer, teacher)[0])
    return files


def per_example(model, tokenizer, items):
    answers, measures = [], []
    for item in items:
        ids = torch.tensor([item.prompt])
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=item.budget,
                             do_sample=False, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                             stop_strings=list(item.stop), tokenizer=tokenizer)
        tokens = out[0, ids.shape[1]:].tolist()
        tokens = tokens[:tokens.index(tokenizer.eos_token_id)] if tokenizer.eos_token_id in tokens else tokens
        answers.append(stop_cut(tokenizer.decode(tokens, skip_special_tokens=True), item.stop)[0])
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([item.prompt + item.answer])).logits[0]
        measures.append(logits[len(item.prompt) - 1:-1].argmax(-1).tolist())
    return answers, measures


def batched(model, tokenizer, items, batch_size: int):
    requests = [Request(tokenizer.decode(i.prompt), i.budget, i.stop) for i in items]
    answers = greedy_decode(model, tokenizer, requests, batch_size)
    read = force(model, tokenizer, [replace(i, budget=0) for i in items], batch_size)
    return answers, [r.predicted for r in read]


def fused(model, tokenizer, items, batch_size: int):
    read = force(model, tokenizer, items, batch_size)
    return [r.completion for r in read], [r.predicted for r in read]


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=SMOLLM2 if SMOLLM2.is_dir() else EMBEDDED)
    parser.add_argument("--tasks", nargs="+", default=["UR=30", "UL=30", "UF=20", "UB=20"], help="TASK=LENGTH")
    parser.add_argument("--examples", type=int, default=16, help="per task")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--variants", default="simple_rule,bare", help="retrieval,copying")
    args = parser.parse_args()
    device = configure(args.threads)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tasks = {t.split("=")[0]: int(t.split("=")[1]) for t in args.tasks}
    retrieval, copying = args.variants.split(",")
    files = pipeline_items(tokenizer, tasks, args.examples, {"retrieval": retrieval, "copying": copying})
    items = [i for file in files for i in file]
    fused(model, tokenizer, items[:2], 2)  # warm-up
    runs = {}
    for label, run in (("per example: generate, then a forced pass", lambda f: per_example(model, tokenizer, f)),
                       ("batched generate + batched forced pass", lambda f: batched(model, tokenizer, f, args.batch_size)),
                       ("one forced pass that starts decoding", lambda f: fused(model, tokenizer, f, args.batch_size))):
        outputs, seconds = timed(lambda run=run: [run(file) for file in files])
        runs[label] = ([a for o in outputs for a in o[0]], [m for o in outputs for m in o[1]], seconds)
        print(f"  {label}: {seconds:.1f} s", flush=True)
    n = len(items)
    print(f"model: {args.model}; device {device}, {args.threads} threads; {n} prompts "
          f"({', '.join(args.tasks)}; {args.variants}), batch {args.batch_size}")
    answers0, measures0, seconds0 = next(iter(runs.values()))
    for label, (answers, measures, seconds) in runs.items():
        print(f"{label:44s} {n / seconds:7.2f} prompts/s  {seconds0 / seconds:5.2f}x per example  "
              f"answers equal: {sum(a == b for a, b in zip(answers, answers0))}/{n}  "
              f"measures equal: {sum(a == b for a, b in zip(measures, measures0))}/{n}")
    batched_s, fused_s = runs["batched generate + batched forced pass"][2], runs["one forced pass that starts decoding"][2]
    print(f"one forced pass / batched: {batched_s / fused_s:.2f}x")


if __name__ == "__main__":
    main()
