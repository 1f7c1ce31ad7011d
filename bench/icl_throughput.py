"""In-context evaluation throughput: lengthgen's batched decoder against per-example `generate`.

Same model, same prompts (the pipeline's own, built from generated data), same stop rules; both run
in this process one after the other. Prints examples/s of each, the ratio, and whether every
answer agrees. Run: `.venv/bin/python bench/icl_throughput.py` (the shipped embedded model when
present, else a randomly initialised model of the same shape: the speed is the same).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import yaml

from lengthgen.engine.decoding import _cut, greedy_decode
from lengthgen.icl.predict import build_requests
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
        answers.append(_cut(tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True), request.stop)[0])
    return answers


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
    files = []  # as in the pipeline: one file per task, decoded on its own
    for task in args.tasks:
        rows = make_dataset(get_task(task), "chars", settings, LengthBin.parse(args.length), args.examples, 0).to_pylist()
        files.append(build_requests(tokenizer, rows, get_task(task), settings, 0, "bare")[1])
    requests = [r for file in files for r in file]
    greedy_decode(model, tokenizer, requests[:2], batch_size=2)  # warm-up
    start = time.perf_counter()
    batched = [a for file in files for a in greedy_decode(model, tokenizer, file, batch_size=args.batch_size)]
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    reference = per_example(model, tokenizer, requests)
    reference_s = time.perf_counter() - start
    agree = sum(a == b for a, b in zip(batched, reference))
    print(f"model: {name}; device {device}, {args.threads} threads; {len(requests)} prompts "
          f"({', '.join(args.tasks)} at length {args.length}), batch {args.batch_size}")
    print(f"per-example generate: {len(requests) / reference_s:8.2f} examples/s")
    print(f"batched decoder:      {len(requests) / batched_s:8.2f} examples/s")
    print(f"ratio batched / generate: {reference_s / batched_s:.1f}x; answers equal: {agree}/{len(requests)}")


if __name__ == "__main__":
    main()
