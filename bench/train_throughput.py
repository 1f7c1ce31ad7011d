"""Training tokens/s of lengthgen's engine against Hugging Face `Trainer`, same model, same batches.

Both train the same freshly initialised model (same seed) on the same pre-built batches with the
same optimiser settings, in this one process, one after the other; the printed ratio is
engine tokens/s divided by Trainer tokens/s. Then K runs (seeds) of the same model: interleaved
one step each versus stacked into one vmapped step (`train(..., stack=True)`), same batches.
Run: `.venv/bin/python bench/train_throughput.py`.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from lengthgen.config import train_settings
from lengthgen.engine.loop import train
from lengthgen.engine.run import TrainingRun
from lengthgen.engine.sequences import SCRATCH_LAYOUT, TrainingStream
from lengthgen.models.builders import build_model
from lengthgen.models.vocab import vocab_size
from lengthgen.runtime import configure
from lengthgen.tasks import LengthBin, get_task


def batches(task: str, steps: int, batch_size: int, max_position: int):
    stream = TrainingStream(get_task(task), {"alphabet_size": 40}, LengthBin(1, 20), batch_size, 0, max_position)
    return [stream(step) for step in range(steps)]


def fresh_model(args, positions):
    return build_model("ape", vocab_size(40), positions, layers=args.layers, heads=args.heads,
                       d_model=args.d_model, seed=0)


def time_engine(args, data, positions, runs: int = 1, stack: bool = False) -> float:
    settings = train_settings(lr=1e-3, weight_decay=0.01, batch_size=args.batch_size, max_steps=len(data),
                              eval_every=10**9, checkpoint_every=10**9, early_stop=False)
    models = [fresh_model(args, positions) for _ in range(runs)]
    training = [TrainingRun(model, settings, lambda step: data[step], lambda m: 0.0, None, fingerprint={},
                            device=torch.device("cpu")) for model in models]
    start = time.perf_counter()
    train(training, progress=False, stack=stack)
    return time.perf_counter() - start


class _PreBatched(torch.utils.data.Dataset):
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i]


def time_trainer(args, data, positions) -> float:
    from transformers import Trainer, TrainingArguments

    with tempfile.TemporaryDirectory() as out:
        arguments = TrainingArguments(
            output_dir=out, per_device_train_batch_size=1, max_steps=len(data), learning_rate=1e-3,
            weight_decay=0.01, lr_scheduler_type="constant", warmup_steps=0, logging_strategy="no",
            save_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0, disable_tqdm=True,
            seed=0, data_seed=0)
        trainer = Trainer(model=fresh_model(args, positions), args=arguments, train_dataset=_PreBatched(data),
                          data_collator=lambda items: items[0])
        start = time.perf_counter()
        trainer.train()
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=4, help="K for interleaved versus stacked runs")
    args = parser.parse_args()
    configure(args.threads)
    positions = SCRATCH_LAYOUT.sequence_length(get_task("UF"), 40)
    data = batches("UF", args.steps, args.batch_size, positions)
    tokens = sum(int(b["input_ids"].numel()) for b in data)
    time_engine(args, data[:10], positions)  # warm both code paths once
    time_trainer(args, data[:10], positions)
    engine = time_engine(args, data, positions)
    trainer = time_trainer(args, data, positions)
    print(f"model: GPT-2 {args.layers}L/{args.heads}H/d{args.d_model}, batch {args.batch_size}, "
          f"{args.steps} steps, {tokens} tokens, {args.threads} threads, CPU")
    print(f"lengthgen engine : {tokens / engine:10.0f} tokens/s ({engine:.2f} s)")
    print(f"HF Trainer       : {tokens / trainer:10.0f} tokens/s ({trainer:.2f} s)")
    print(f"ratio engine/Trainer: {trainer / engine:.2f}x")
    k, few = args.runs, data[: max(10, args.steps // 4)]
    time_engine(args, few[:5], positions, k, stack=True)  # warm the vmapped path once
    interleaved = time_engine(args, few, positions, k)
    stacked = time_engine(args, few, positions, k, stack=True)
    print(f"{k} runs x {len(few)} steps: interleaved {interleaved:.2f} s, stacked {stacked:.2f} s, "
          f"ratio stacked/interleaved: {interleaved / stacked:.2f}x")


if __name__ == "__main__":
    main()
