"""Edge patching throughput: the one-pass attention function against the per-position reference
(every query's attention recomputed on its own, as the authors did), on the same copy prompts and
the same patching plan. Prints the time of each, the ratio, and whether the numbers agree.

Run: `.venv/bin/python bench/mechanism_throughput.py` (the shipped embedded model).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lengthgen.inference.text import symbol_separator
from lengthgen.mechanism.patching import patching
from lengthgen.mechanism.prompts import few_shot_prompts
from lengthgen.mechanism.reference import per_position_attention
from lengthgen.runtime import configure

EMBEDDED = Path(__file__).resolve().parents[1] / "resources" / "embedded" / "gpt2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=EMBEDDED)
    parser.add_argument("--length", type=int, default=5)
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    configure(args.threads)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    prompts = few_shot_prompts(tokenizer, args.length, "backward", args.instances, 10, 0, symbol_separator(tokenizer))
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    scores = {"induction": np.random.default_rng(0).random((layers, heads)),
              "anti_induction": np.random.default_rng(1).random((layers, heads))}
    patching(model, prompts, scores, ablate=2, batch_size=args.instances)  # warm-up
    start = time.perf_counter()
    fast = patching(model, prompts, scores, ablate=2, batch_size=args.instances)
    fast_s = time.perf_counter() - start
    start = time.perf_counter()
    slow = patching(model, prompts, scores, ablate=2, batch_size=args.instances, function=per_position_attention)
    slow_s = time.perf_counter() - start
    worst = max(abs(fast[c]["loss"] - slow[c]["loss"]) for c in fast)
    same = all(fast[c]["accuracy"] == slow[c]["accuracy"] for c in fast)
    print(f"model: {args.model.name}; {args.instances} prompts of {prompts.ids.shape[1]} tokens (L={args.length}), "
          f"5 patching conditions plus the corrupted run, {args.threads} threads, CPU")
    print(f"per-position reference: {slow_s:7.2f} s")
    print(f"one-pass edge patching: {fast_s:7.2f} s")
    print(f"ratio: {slow_s / fast_s:.1f}x; largest loss difference {worst:.2e}; accuracies equal: {same}")


if __name__ == "__main__":
    main()
