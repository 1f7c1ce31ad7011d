"""Where one fine-tuning job of the default spends its CPU, beside an isolated optimiser step of the
same model and batch shape in the same run, and the FLOP formula checked against torch's counter.

1. The default's `finetune_train` job for the embedded model on one task (config.yaml, seed 0), run
   by Snakemake in a scratch project (its data jobs first, not counted), one thread: its benchmark's
   CPU-seconds split by the phases the run records (start-up, batches, optimiser steps, evaluations,
   checkpoints, the rest), and FLOPs per CPU-second of the job and of its steps alone.
2. The isolated step: the same model, AdamW, a batch of the job's mean shape (rows x positions per
   step), one thread, timed over a number of steps after a warm-up.
3. The FLOP count: `lengthgen.results.runtimes.training_flops` (6 N T + 6 n_layer d_model sum(L^2))
   against `torch.utils.flop_counter.FlopCounterMode` on one step of the same batch.
Run: `.venv/bin/python bench/finetune_split.py [--task UF] [--steps 30]` (about 10 CPU-minutes).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_job(workdir: Path, task: str) -> tuple[dict, dict]:
    """(the job's benchmark row, its history's provenance)."""
    import polars as pl

    from lengthgen.layout import FINETUNE
    from lengthgen.records.tables import read_provenance

    job = FINETUNE.format(model="embedded", protocol="default", task=task, seed=0)
    subprocess.run([sys.executable, "-m", "snakemake", f"{job}/training.parquet", "--snakefile",
                    str(REPO / "workflow" / "Snakefile"), "--directory", str(workdir), "--configfile",
                    str(REPO / "config.yaml"), "--cores", "1", "--quiet", "--config", f"tasks=[{task}]"], check=True)
    bench = pl.read_csv(workdir / "results" / "benchmarks" / "finetune_train" / "embedded" / "default" / task
                        / "seed0.tsv", separator="\t", null_values=["-", "NA"]).row(-1, named=True)
    return bench, read_provenance(workdir / job / "training.parquet")


def isolated_step(record: dict, steps: int) -> tuple[float, float, float]:
    """(CPU-seconds per step, formula FLOPs per step, profiler FLOPs per step) of the embedded model
    on a batch of the job's mean shape."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModelForCausalLM

    from lengthgen.results.runtimes import training_flops

    torch.set_num_threads(1)
    # float32 as the job trains it (the shipped weights are float16, which transformers would keep)
    model = AutoModelForCausalLM.from_pretrained(REPO / "resources" / "embedded" / "gpt2", dtype=torch.float32)
    rows = int(record["settings"]["training"]["batch_size"]) if "settings" in record else 64
    per_step = (record["tokens"] + record["padded_tokens"]) / record["steps"]
    width = max(2, round(per_step / rows))
    ids = torch.randint(0, model.config.vocab_size, (rows, width), generator=torch.Generator().manual_seed(0))
    batch = {"input_ids": ids, "labels": ids.clone()}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=False)
    model.train()

    def step():
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    started = time.process_time()
    for _ in range(steps):
        step()
    cpu = (time.process_time() - started) / steps
    with FlopCounterMode(display=False) as counter:
        step()
    formula = training_flops({"parameters": sum(p.numel() for p in model.parameters()), "tokens": rows * width,
                              "attention_pairs": rows * width * width, "n_layer": model.config.num_hidden_layers,
                              "d_model": model.config.hidden_size})
    return cpu, formula, float(counter.get_total_flops())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="UF")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    from lengthgen.results.runtimes import matmul_peak, training_flops

    with tempfile.TemporaryDirectory() as directory:
        bench, record = run_job(Path(directory), args.task)
    peak = matmul_peak()
    cpu = float(bench["cpu_time"])
    phases = {phase: float(record[f"cpu_{phase}"]) for phase in ("start_up", "data", "steps", "evaluation",
                                                                  "checkpoints")}
    phases["rest"] = cpu - sum(phases.values())
    flops = training_flops(record)
    print(f"finetune_train embedded/default/{args.task}/seed0: {record['steps']} steps, {cpu:.0f} CPU-s, "
          f"{bench['s']:.0f} s wall; one-thread fp32 matmul peak {peak / 1e9:.1f} GFLOP/s")
    print("| phase | CPU-s | share |\n|---|---|---|")
    for phase, seconds in phases.items():
        print(f"| {phase} | {seconds:.1f} | {100 * seconds / cpu:.1f}% |")
    positions = record["tokens"] + record["padded_tokens"]
    print(f"padding: {100 * record['padded_tokens'] / positions:.0f}% of the {positions / record['steps']:.0f} "
          "positions a step computes (the FLOP formula counts real tokens only)")
    print(f"job: {flops / cpu / 1e9:.1f} GFLOP per CPU-s ({100 * flops / cpu / peak:.0f}% of peak); "
          f"its steps alone: {flops / phases['steps'] / 1e9:.1f} ({100 * flops / phases['steps'] / peak:.0f}%)")
    step_cpu, formula, counted = isolated_step(record, args.steps)
    print(f"isolated step, same model and mean batch shape: {step_cpu * 1000:.0f} CPU-ms, "
          f"{formula / step_cpu / 1e9:.1f} GFLOP per CPU-s ({100 * formula / step_cpu / peak:.0f}% of peak) "
          f"by the formula; the job's steps took {1000 * phases['steps'] / record['steps']:.0f} CPU-ms each")
    print(f"FLOPs of one step: formula {formula / 1e9:.2f} G, torch's FlopCounterMode {counted / 1e9:.2f} G "
          f"(ratio {formula / counted:.3f}; the counter counts matmuls only, the formula also leaves out the "
          f"softmax and the optimiser)" if not math.isclose(counted, 0) else "FlopCounterMode counted nothing")


if __name__ == "__main__":
    main()
