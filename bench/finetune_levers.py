"""Two levers on the fine-tuning stage's cost, each timed against today's way in this one process.

The default's fine-tuning (config.yaml `finetune:`) trains the embedded model on each task as
its own job, one run after another; on 2 cores it is the largest part of a run. Both levers are
measured on runs built by the stage's own `finetune_run` from the config's job parameters
(`lengthgen.plan.finetune.train_params`), so model, batches and settings are the stage's; only max_steps is
cut to --steps (the schedule decays to 0 there), and evaluation and checkpoints are left out
of the timed steps (the same for every variant).

1. Stacked fine-tuning: K runs (by default a task and its mirror, UF and UB) advanced in one
   vmapped step (`train(runs, stack=True)`) against one after the other, as the stage runs them.
   `finetune_run` gives every run an `accelerate.Accelerator`, and `StackedRuns` refuses runs
   with one (its vmapped step is its own forward, backward and clipping; it cannot route them
   through accelerate); the script prints that refusal. What is stacked is therefore the closest
   faithful variant: the same runs with the accelerator detached, which on a CPU in fp32 does the
   same arithmetic (accelerate's autocast is off, its backward divides by 1 gradient-accumulation
   step, its clipping is torch's). Those runs are also timed one after the other, which separates
   what accelerate costs from what stacking saves. On a CPU, vmap has no batching rule for
   torch's fused attention and runs it per run (torch warns once); that is in the stacked time.
2. Length buckets for copying: `training.length_buckets` 3 against 1 (today's fine-tuning
   setting) on one copying task at the stage's training lengths.

Each lever prints one line: the ratio (today's seconds over the lever's), the steps timed, and
how far apart the two ways' losses are after those steps (each run's final weights scored on the
batch of its next step; the same up to rounding, about 1e-5).
Run: `nice -n 19 .venv/bin/python bench/finetune_levers.py --steps 60` (`--steps 3` as a smoke check).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch
import yaml

from lengthgen.config import model_entry, validate_config
from lengthgen.engine.loop import train
from lengthgen.engine.stacked import StackedRuns
from lengthgen.finetune.train import finetune_run
from lengthgen.plan.finetune import train_params
from lengthgen.runtime import configure
from lengthgen.settings import FinetuneTaskSettings
from lengthgen.tasks import get_task

SEED = 0


def stage_runs(config: dict, tasks: list[str], steps: int, *, accelerator: bool = True, length_buckets: int | None = None):
    """Fresh fine-tuning runs of the config's first fine-tuned model, one per task, built as the stage
    builds them, cut to `steps` steps with no evaluation or checkpoint before the last step."""
    name = config["finetune"]["models"][0]
    entry = replace(model_entry(name, config["models"][name]), device="cpu")
    runs = []
    for task_name in tasks:
        section = train_params(config, name, task_name).as_config()
        overrides = {"max_steps": steps, "eval_every": 10**9, "checkpoint_every": 10**9}
        if length_buckets is not None:
            overrides["length_buckets"] = length_buckets
        section["training"] = {**section["training"], **overrides}
        run, _ = finetune_run(entry, get_task(task_name), SEED, FinetuneTaskSettings.from_config(section), None)
        run.evaluate = lambda model: 0.0  # the run's one evaluation (at its end) is not what is timed
        if not accelerator:
            run.accelerator = None
        runs.append(run)
    return runs


def seconds_to_train(runs, one_after_another: bool) -> float:
    """Wall seconds to finish `runs`: each alone in turn, or all stacked into one vmapped step."""
    start = time.perf_counter()
    if one_after_another:
        for run in runs:
            train([run], progress=False)
    else:
        train(runs, progress=False, stack=True)
    return time.perf_counter() - start


@torch.no_grad()
def losses_after(runs) -> list[float]:
    """Each run's loss with its current weights on the batch of the step it would take next."""
    losses = []
    for run in runs:
        run.model.eval()
        batch = {k: v.to(run.device) for k, v in run.batch_for(run.step_count).items()}
        losses.append(float(run.model(**batch).loss))
    return losses


def largest_gap(first: list[float], second: list[float]) -> float:
    return max(abs(a - b) for a, b in zip(first, second))


def stacking_refusal(config: dict, tasks: list[str]) -> str:
    """Why the runs as `finetune_run` builds them cannot be stacked: `StackedRuns`' own words."""
    try:
        StackedRuns(stage_runs(config, tasks, 1))
    except ValueError as refusal:
        return str(refusal)
    return "none: the runs as built stack"


def stacked_lever(config: dict, tasks: list[str], steps: int) -> None:
    refusal = stacking_refusal(config, tasks)
    print(f"stacking the runs as finetune_run builds them (each with an accelerate.Accelerator) is refused: "
          f"{refusal!r}; stacked below: the same runs with the accelerator detached (fp32 CPU: same arithmetic)")
    warm = min(3, steps)  # each code path once, before anything is timed
    seconds_to_train(stage_runs(config, tasks, warm), one_after_another=True)
    seconds_to_train(stage_runs(config, tasks, warm, accelerator=False), one_after_another=False)

    as_built = stage_runs(config, tasks, steps)
    today = seconds_to_train(as_built, one_after_another=True)
    plain = stage_runs(config, tasks, steps, accelerator=False)
    without_accelerate = seconds_to_train(plain, one_after_another=True)
    stack = stage_runs(config, tasks, steps, accelerator=False)
    stacked = seconds_to_train(stack, one_after_another=False)

    reference, stacked_losses = losses_after(as_built), losses_after(stack)
    print(f"lever stacked fine-tuning: {len(tasks)} runs ({', '.join(tasks)}) x {steps} steps: "
          f"one after another {today:.2f} s (as built; {without_accelerate:.2f} s without accelerate), "
          f"stacked {stacked:.2f} s, ratio {today / stacked:.2f}x "
          f"({without_accelerate / stacked:.2f}x against the runs without accelerate); "
          f"loss after {steps} steps {', '.join(f'{x:.6f}' for x in reference)} one after another, "
          f"{', '.join(f'{x:.6f}' for x in stacked_losses)} stacked, largest gap "
          f"{largest_gap(reference, stacked_losses):.1e} "
          f"({largest_gap(losses_after(plain), stacked_losses):.1e} against the runs without accelerate)")


def buckets_lever(config: dict, task: str, steps: int, buckets: int) -> None:
    warm = min(3, steps)
    for count in (1, buckets):
        seconds_to_train(stage_runs(config, [task], warm, length_buckets=count), one_after_another=True)
    one_batch = stage_runs(config, [task], steps, length_buckets=1)
    today = seconds_to_train(one_batch, one_after_another=True)
    bucketed = stage_runs(config, [task], steps, length_buckets=buckets)
    with_buckets = seconds_to_train(bucketed, one_after_another=True)
    reference, bucket_losses = losses_after(one_batch), losses_after(bucketed)
    train_lengths = config["finetune"]["train_lengths"][get_task(task).family]
    print(f"lever length buckets: {task} at train lengths {train_lengths}, {steps} steps: "
          f"1 bucket {steps / today:.2f} steps/s ({today:.2f} s), {buckets} buckets {steps / with_buckets:.2f} "
          f"steps/s ({with_buckets:.2f} s), ratio {today / with_buckets:.2f}x; loss after {steps} steps "
          f"{reference[0]:.6f} with 1, {bucket_losses[0]:.6f} with {buckets}, gap "
          f"{largest_gap(reference, bucket_losses):.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="steps timed per run")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--tasks", nargs="+", default=["UF", "UB"], help="the runs stacked (same task family)")
    parser.add_argument("--copy-task", default="UF", help="the copying task of the length-bucket lever")
    parser.add_argument("--buckets", type=int, default=3)
    args = parser.parse_args()
    configure(threads=args.threads)
    with open(args.config) as handle:
        config = validate_config(yaml.safe_load(handle), check_availability=False)
    print(f"model: {config['finetune']['models'][0]}, batch {config['finetune']['training']['batch_size']}, "
          f"{args.threads} threads, CPU")
    stacked_lever(config, args.tasks, args.steps)
    buckets_lever(config, args.copy_task, args.steps, args.buckets)


if __name__ == "__main__":
    main()
