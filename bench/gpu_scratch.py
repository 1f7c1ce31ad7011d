"""GPU cost of the paper's Appendix B grid: ms/step at paper size, and the projected grid time.

Measures, on the current CUDA device (or the CPU with --size tiny, to check the script itself):
  1. one run per process: fp32, bf16, bf16 + torch.compile;
  2. K runs interleaved in one process through `lengthgen.training.train` (one model each);
  3. K runs stacked: one vmapped step for all (`train(..., stack=True)`, `lengthgen.stacked`);
  4. K processes at once on the same device (what a scheduler sharing one GPU gives).
Projection: 10 tasks x {APE, RoPE} x 3 seeds = 60 runs, each `--steps-per-run` steps (30,000 is the
paper's cap; early stopping shortens it), divided by the throughput of each mode.
Needs torch and transformers only (no snakemake, no polars): run on the GPU machine through
bench/gpu_scratch.sh.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time

import torch

from lengthgen.config import train_settings
from lengthgen.engine.loop import train
from lengthgen.engine.run import TrainingRun
from lengthgen.engine.sequences import SCRATCH_LAYOUT, TrainingStream
from lengthgen.models.builders import build_model
from lengthgen.models.positions import uses_absolute_positions
from lengthgen.models.vocab import vocab_size
from lengthgen.tasks import LengthBin, get_task

UF = get_task("UF")

SIZES = {"paper": dict(layers=4, heads=4, d_model=256), "tiny": dict(layers=1, heads=2, d_model=32)}
GRID_RUNS = 10 * 2 * 3


def make_run(pe: str, seed: int, size: str, precision: str, steps: int, device, compile_model=False, live=False):
    """One paper-size UF run; batches pre-built (the model alone is measured) unless `live`."""
    positions = SCRATCH_LAYOUT.sequence_length(UF, 150)
    model = build_model(pe, vocab_size(150), positions, seed=seed, **SIZES[size])
    stream = TrainingStream(UF, {"alphabet_size": 150}, LengthBin(1, 50), 64, seed,
                            positions if uses_absolute_positions(model) else None)
    data = [] if live else [stream(s) for s in range(min(steps, 50))]
    settings = train_settings(lr=1e-4, batch_size=64, max_steps=steps, eval_every=10**9, checkpoint_every=10**9,
                              early_stop=False, precision=precision)
    batch_for = stream if live else (lambda s: data[s % len(data)])
    run = TrainingRun(model, settings, batch_for, lambda m: 0.0, None, {}, device=device)
    if compile_model:
        run.model = torch.compile(run.model, dynamic=True)
    return run


def ms_per_step(runs, steps: int, device, stack: bool = False) -> float:
    """Wall ms per optimiser step of each run, all runs advancing together."""
    for run in runs:
        run.settings = dataclasses.replace(run.settings, max_steps=10)  # the settings are frozen
    train(runs, progress=False, stack=stack)  # warm-up (and compilation)
    for run in runs:
        run.settings, run.done = dataclasses.replace(run.settings, max_steps=10 + steps), False
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    train(runs, progress=False, stack=stack)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1000 / steps


def worker(args) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    run = make_run(args.pe, 0, args.size, args.precision, args.steps, device)
    print(json.dumps({"ms_per_step": ms_per_step([run], args.steps, device)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", choices=SIZES, default="paper")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=4, help="K for the interleaved and multi-process modes")
    parser.add_argument("--stack", type=int, default=20, help="a second, larger K for the stacked mode")
    parser.add_argument("--steps-per-run", type=int, default=30000)
    parser.add_argument("--pe", default="ape")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    results = {}
    for pe in ("ape", "rope"):
        for label, precision, compiled in (("fp32", "fp32", False), ("bf16", "bf16", False),
                                           ("bf16+compile", "bf16", True)):
            try:
                run = make_run(pe, 0, args.size, precision, args.steps, device, compiled)
                results[f"{pe} {label}"] = ms_per_step([run], args.steps, device)
            except Exception as error:  # compile can fail on some stacks; report, do not hide
                results[f"{pe} {label}"] = f"failed: {type(error).__name__}: {str(error)[:120]}"
        runs = [make_run(pe, s, args.size, "bf16", args.steps, device) for s in range(args.runs)]
        results[f"{pe} bf16 x{args.runs} interleaved"] = ms_per_step(runs, args.steps, device) / args.runs
        for precision in ("fp32", "bf16"):
            for k in sorted({args.runs, args.stack}):
                try:
                    runs = [make_run(pe, s, args.size, precision, args.steps, device) for s in range(k)]
                    results[f"{pe} {precision} x{k} stacked"] = ms_per_step(runs, args.steps, device, stack=True) / k
                except Exception as error:  # report, do not hide
                    results[f"{pe} {precision} x{k} stacked"] = f"failed: {type(error).__name__}: {str(error)[:120]}"
        # The same with each batch made by the engine's own data stream, in this process.
        runs = [make_run(pe, s, args.size, "bf16", args.steps, device, live=True) for s in range(args.stack)]
        label = f"{pe} bf16 x{args.stack} stacked, live data"
        results[label] = ms_per_step(runs, args.steps, device, stack=True) / args.stack
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", "--size", args.size, "--steps",
                                   str(args.steps), "--pe", pe, "--precision", "bf16"],
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ))
                 for _ in range(args.runs)]
        start = time.perf_counter()
        outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        per_process = max(o["ms_per_step"] for o in outs)
        results[f"{pe} bf16 x{args.runs} processes"] = per_process / args.runs
        results[f"{pe} bf16 x{args.runs} processes wall_s"] = time.perf_counter() - start
    print(f"device: {name}; size {args.size} {SIZES[args.size]}; batch 64; UF lengths 1-50 (longest sequences)")
    print(f"{'mode':38s} {'ms/step (per run)':>18s} {'grid hours':>11s}")
    for mode, value in results.items():
        if mode.endswith("wall_s"):
            continue
        if isinstance(value, str):
            print(f"{mode:38s} {value}")
            continue
        hours = value * args.steps_per_run * GRID_RUNS / 3.6e6
        print(f"{mode:38s} {value:18.2f} {hours:11.2f}")
    print(f"(grid = {GRID_RUNS} runs x {args.steps_per_run} steps; goal: <= 1 hour)")


if __name__ == "__main__":
    main()
