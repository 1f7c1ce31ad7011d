"""bf16 for the 135M LM's stages: what bfloat16 weights (and float32 weights under bf16 autocast)
change in the three stages that run SmolLM2, and how much faster they are on this CPU.

In one process, on the default config's settings (config.yaml through `validate_config`) and the
stages' own functions, the converted model (`results/models/smollm2`, made by rule gguf_convert)
is loaded through `load_model` as the registry entry says (float32) and with `dtype: bfloat16`;
a third variant runs the float32 model under `torch.autocast("cpu", bfloat16)`. For each:

1. in context: the first N rows of the default's data files (chars, length 10, seed 0) of a few
   tasks, through `icl.predict.predict_files` (greedy completions, teacher-forced measures);
2. realistic lorem: the first N paragraphs of each default length, through `realistic.predict.lorem_rows`;
3. mechanism: the first N of the default's copy prompts per direction, through `mechanism.analyse`
   (head scores, clean copy accuracy, the patching conditions' losses).

Prints, per stage and variant, the time and its ratio to float32 (variants alternated, the order
reversed in each repeat) and the agreement with float32: identical completions, exact-match
accuracy, largest difference of the teacher-forced log-probabilities / losses / head scores, and
whether the top heads (the ones the patching ablates) are the same.
Run: `.venv/bin/python bench/bf16_lm.py` (defaults: 1 thread, about 10 minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import yaml

from lengthgen.config import job_model_entry, validate_config
from lengthgen.config.sections import icl_variants
from lengthgen.icl.predict import predict_files
from lengthgen.inference.cached import CachedModel
from lengthgen.inference.text import symbol_separator
from lengthgen.mechanism.analyse import DIRECTIONS, analyse
from lengthgen.mechanism.patching import top_heads
from lengthgen.mechanism.prompts import few_shot_prompts
from lengthgen.models.loading import load_model, load_tokenizer
from lengthgen.realistic.predict import lorem_rows
from lengthgen.runtime import configure
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generate import make_dataset

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("fp32", "bf16 weights", "fp32 + bf16 autocast")


def icl_files(config: dict, tasks: list[str], count: int) -> tuple[list[dict], dict]:
    """The files the icl_predict job of each family reads (first `count` rows of each data file), and
    the generator settings per task: what `icl_predict_params` and the data rule give it."""
    files, settings = [], {}
    section = config["icl"]
    for name in tasks:
        task = get_task(name)
        chars = config["data"]["chars"]
        settings[name] = chars[task.generator]
        for length in section["lengths"][task.family]:
            for seed in config["seeds"]:
                rows = make_dataset(task, "chars", chars[task.generator], LengthBin.parse(str(length)),
                                    chars["examples"], seed).to_pylist()[:count]
                for variant in icl_variants(section, task.family, "completion"):
                    files.append({"task": name, "bin": str(length), "seed": seed, "variant": variant, "rows": rows})
    return files, settings


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a, axis=None)), np.argsort(np.argsort(b, axis=None))
    return float(np.corrcoef(ra, rb)[0, 1])


def _same(got, ref) -> int:
    return sum(a == b for a, b in zip(got["completion"], ref["completion"]))


def icl_note(got, ref, _k) -> str:
    per_task = ", ".join(f"{t} {_same(got.filter(got['task'] == t), ref.filter(ref['task'] == t))}"
                         for t in dict.fromkeys(ref["task"]))
    logprob = (got["target_logprob"] - ref["target_logprob"]).abs().max()
    lost = int((ref["correct"] & ~got["correct"]).sum())
    gained = int((~ref["correct"] & got["correct"]).sum())
    return (f"completions {_same(got, ref)}/{len(ref)} ({per_task}); accuracy {got['correct'].mean():.3f} "
            f"(fp32 {ref['correct'].mean():.3f}; {lost} right->wrong, {gained} wrong->right); tf_exact equal "
            f"{(got['tf_exact'] == ref['tf_exact']).sum()}/{len(ref)}; max |d target_logprob| {logprob:.3f}")


def lorem_note(got, ref, _k) -> str:
    shared = np.mean([len(os.path.commonprefix([a, b])) / max(len(b), 1)
                      for a, b in zip(got["completion"], ref["completion"])])
    return (f"completions {_same(got, ref)}/{len(ref)} (shared prefix {shared:.2f} of fp32's); exact "
            f"{got['exact'].mean():.3f} (fp32 {ref['exact'].mean():.3f}); tf_unambiguous "
            f"{got['tf_unambiguous'].mean():.3f} (fp32 {ref['tf_unambiguous'].mean():.3f}); tf_ambiguous "
            f"{got['tf_ambiguous'].mean():.3f} (fp32 {ref['tf_ambiguous'].mean():.3f})")


def mechanism_note(got, ref, k: int) -> str:
    (heads, patch), (rheads, rpatch) = got, ref
    parts = []
    for score in ("induction", "anti_induction"):
        for direction in DIRECTIONS:
            a, b = (frame.filter(frame["direction"] == direction).sort("layer", "head")[score].to_numpy()
                    for frame in (heads, rheads))
            parts.append(f"{score}/{direction[0]}: max|d| {np.abs(a - b).max():.4f} (fp32 max {b.max():.3f}) "
                         f"rho {spearman(a, b):.4f} top{k} {len(top_heads(a, k) & top_heads(b, k))}/{k}")
    copy, rcopy = ([round(f.filter(f["direction"] == d)["copy_accuracy"][0], 4) for d in DIRECTIONS]
                   for f in (heads, rheads))
    return ("; ".join(parts) + f"; patching max|d loss| {(patch['loss'] - rpatch['loss']).abs().max():.4f} (fp32 "
            f"losses {rpatch['loss'].min():.3f}-{rpatch['loss'].max():.3f}), max|d accuracy| "
            f"{(patch['accuracy'] - rpatch['accuracy']).abs().max():.3f}; copy accuracy f/b {copy} (fp32 {rcopy})")


NOTES = {"in context": icl_note, "realistic lorem": lorem_note, "mechanism": mechanism_note}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--model", default=None, help="registry name (default: the config's first in-context model)")
    parser.add_argument("--path", type=Path, default=None, help="converted directory (default results/models/NAME)")
    parser.add_argument("--tasks", nargs="+", default=["UR", "NLFirst", "UF", "UB"])
    parser.add_argument("--icl-examples", type=int, default=24, help="rows per data file")
    parser.add_argument("--lorem-samples", type=int, default=6, help="paragraphs per length")
    parser.add_argument("--mechanism-instances", type=int, default=12, help="copy prompts per direction")
    parser.add_argument("--repeats", type=int, default=2, help="timed rounds, variant order reversed each round")
    parser.add_argument("--no-autocast", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    device = configure(args.threads)

    with open(REPO / args.config) as handle:
        config = validate_config(yaml.safe_load(handle), check_availability=False)
    name = args.model or config["icl"]["models"][0]
    path = args.path or REPO / "results" / "models" / name
    entry = replace(job_model_entry(name, config["models"][name], str(path)), device="cpu")
    tokenizer = load_tokenizer(entry)
    fp32 = load_model(replace(entry, dtype="float32"), check=False)
    bf16 = load_model(replace(entry, dtype="bfloat16"), check=False)
    print(f"{name}: {path}, registry dtype {entry.dtype}; loaded {next(fp32.parameters()).dtype} and "
          f"{next(bf16.parameters()).dtype}; device {device}, {args.threads} thread(s)", flush=True)
    variants = {"fp32": (fp32, contextlib.nullcontext), "bf16 weights": (bf16, contextlib.nullcontext)}
    if not args.no_autocast:
        variants["fp32 + bf16 autocast"] = (fp32, lambda: torch.autocast("cpu", dtype=torch.bfloat16))

    # -- the stages, each a function of the model -------------------------------------------------
    icl, realistic, mech = config["icl"], config["realistic"], config["mechanism"]
    files, settings = icl_files(config, args.tasks, args.icl_examples)
    separator = symbol_separator(tokenizer, entry.separator)

    def run_icl(model):
        return predict_files(lambda: model, tokenizer, files, settings=settings, chat=False, separator=separator,
                             shots=icl["shots"], batch_size=icl["batch_size"])

    lorem = realistic["lorem"]

    def run_lorem(model):
        import polars as pl

        return pl.concat([lorem_rows(CachedModel(model), tokenizer, n, seed, args.lorem_samples, lorem["variant"],
                                     False, realistic["batch_size"])
                          for n in lorem["lengths"] for seed in config["seeds"]])

    def make(length, direction, seed):
        return few_shot_prompts(tokenizer, length, direction, args.mechanism_instances, mech["shots"], seed, separator)

    def run_mechanism(model):
        return analyse(model, make, mech["lengths"], config["seeds"], mech["ablate_top"], mech["batch_size"])

    stages = {"in context": run_icl, "realistic lorem": run_lorem, "mechanism": run_mechanism}

    # warm-up: one small forward per variant (oneDNN builds its bf16 kernels on first use)
    warm = torch.tensor([tokenizer("a b c d e f g h", add_special_tokens=False).input_ids] * 2)
    for model, context in variants.values():
        with torch.no_grad(), context():
            model(input_ids=warm)

    outputs = {s: {} for s in stages}
    seconds = {s: dict.fromkeys(variants, 0.0) for s in stages}
    failed = {s: {} for s in stages}
    for stage, run in stages.items():
        for round_ in range(args.repeats):
            order = list(variants) if round_ % 2 == 0 else list(variants)[::-1]
            for label in order:
                if label in failed[stage]:
                    continue
                model, context = variants[label]
                start = time.perf_counter()
                try:
                    with context():
                        result = run(model)
                except RuntimeError as error:  # autocast: the mechanism's attention mixes float32 and bf16
                    print(f"  {stage:16s} round {round_ + 1} {label:22s} fails: {str(error).splitlines()[0]}")
                    failed[stage][label] = str(error).splitlines()[0]
                    continue
                elapsed = time.perf_counter() - start
                seconds[stage][label] += elapsed
                print(f"  {stage:16s} round {round_ + 1} {label:22s} {elapsed:7.1f} s", flush=True)
                if label not in outputs[stage]:
                    outputs[stage][label] = result
                elif stage != "mechanism":
                    assert result["completion"].to_list() == outputs[stage][label]["completion"].to_list(), \
                        f"{stage}, {label}: a repeat changed the completions"

    # -- agreement with float32 -------------------------------------------------------------------
    print(f"\n{name}; {len(files)} in-context files x {args.icl_examples} rows ({', '.join(args.tasks)}, length "
          f"{'/'.join(str(n) for n in icl['lengths'].values())}), lorem {args.lorem_samples} paragraphs x "
          f"{lorem['lengths']} tokens, mechanism {args.mechanism_instances} prompts x 2 directions (L = "
          f"{mech['lengths']}); {args.repeats} rounds; {args.threads} thread(s)")
    reference = {s: outputs[s]["fp32"] for s in stages}
    header = f"{'stage':16s} {'variant':22s} {'time':>7s} {'fp32/it':>8s}  agreement with fp32"
    print(header + "\n" + "-" * len(header))
    for stage in stages:
        for label in variants:
            if label in failed[stage]:
                print(f"{stage:16s} {label:22s} {'fails':>7s} {'':8s}  {failed[stage][label]}")
                continue
            ratio = seconds[stage]["fp32"] / seconds[stage][label]
            got, ref = outputs[stage][label], reference[stage]
            note = NOTES[stage](got, ref, mech["ablate_top"])
            print(f"{stage:16s} {label:22s} {seconds[stage][label] / args.repeats:6.1f}s {ratio:7.2f}x  {note}")


if __name__ == "__main__":
    main()
