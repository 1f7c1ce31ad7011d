"""What a fine-tuning step budget buys: in- and out-of-distribution accuracy at every evaluation.

The default's fine-tuning stage stops at a fixed number of steps (10 minutes on 2 cores for all
ten tasks). This fine-tunes one registry model on one task through the stage's own
run (`finetune_run` with the config's job parameters, the overrides given here applied) and
prints the validation (in distribution) and out-of-distribution teacher-forced exact match at
every evaluation, so a reader can see where the left/backward tasks start to learn and
whether a longer stage would show the paper's finding. With --positions, a copying task also
prints the out-of-distribution accuracy by the output symbol's place in the source (where a
positional rule breaks). With --random-init, the same architecture starts from a fresh
initialisation instead of its pretrained weights (what pretraining adds or costs).
Run: `.venv/bin/python bench/finetune_curve.py UL --batch-size 64 --steps 800`.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import torch
import yaml

from lengthgen.config import model_entry, validate_config
from lengthgen.engine.loop import train
from lengthgen.engine.scoring import score, teacher_forced_accuracy
from lengthgen.engine.sequences import encoded_examples, tokenizer_layout
from lengthgen.finetune.train import finetune_run
from lengthgen.models.loading import load_tokenizer
from lengthgen.plan.finetune import train_params
from lengthgen.runtime import configure
from lengthgen.settings import FinetuneTaskSettings
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generators import symbols_used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--model", default=None, help="registry name (default: the config's first fine-tuned model)")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--steps", type=int, help="max_steps (the schedule decays to 0 there)")
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--examples", type=int, default=200, help="validation and out-of-distribution examples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--positions", action="store_true", help="copying: accuracy by source position at the end")
    parser.add_argument("--random-init", action="store_true",
                        help="the same architecture freshly initialised instead of pretrained: what pretraining adds")
    args = parser.parse_args()
    configure(threads=args.threads)

    with open(args.config) as handle:
        config = validate_config(yaml.safe_load(handle), check_availability=False)
    task = get_task(args.task)
    name = args.model or config["finetune"]["models"][0]
    entry = replace(model_entry(name, config["models"][name]), device="cpu")
    section = train_params(config, name, task.name).as_config()  # exactly the stage's job parameters
    overrides = {k: v for k, v in {"batch_size": args.batch_size, "lr": args.lr, "max_steps": args.steps}.items()
                 if v is not None}
    section["training"] = {**section["training"], **overrides, "eval_every": args.eval_every,
                           "eval_examples": args.examples, "checkpoint_every": 10**9, "early_stop": False}
    data = section["data"]
    train_bin = LengthBin.parse(section["train_lengths"])
    test_bin = LengthBin.parse(config["finetune"]["test_bins"][task.family][-1])
    layout = tokenizer_layout(load_tokenizer(entry), symbols_used(task.generator, data), style=section["format"])
    beyond = encoded_examples(task, data, test_bin, args.examples, args.seed, "test", layout)
    run, _ = finetune_run(entry, task, args.seed, FinetuneTaskSettings.from_config(section), None,
                          more_metrics=lambda m: {"out_of_distribution": teacher_forced_accuracy(m, *beyond, 256)})
    if args.random_init:
        from transformers import AutoModelForCausalLM

        torch.manual_seed(args.seed)
        fresh = AutoModelForCausalLM.from_config(run.model.config)
        run.model.load_state_dict(fresh.state_dict())  # in place: the optimiser keeps its parameters
    settings = run.settings
    started = time.perf_counter()
    train([run], progress=True)
    result = {"task": task.name, "model": name, "init": "random" if args.random_init else "pretrained",
              "batch_size": settings.batch_size, "lr": settings.lr,
              "steps": settings.max_steps, "seconds": round(time.perf_counter() - started),
              "train": str(train_bin), "test": str(test_bin),
              "evaluated_at": run.history.steps,
              "in_distribution": [round(a, 2) for a in run.history.accuracies],
              "out_of_distribution": [round(m["out_of_distribution"], 2) for m in run.history.metrics]}
    if args.positions and task.family == "copying":
        examples, target_lengths = beyond
        predictions = [s.teacher_forced_prediction for s in score(run.model, examples, target_lengths, 256)]
        targets = [e.ids[e.answer_start:e.answer_start + n] for e, n in zip(examples, target_lengths)]
        result["accuracy_by_source_position"] = accuracy_by_source_position(predictions, targets, task.induction)
    print(json.dumps(result))


def accuracy_by_source_position(predictions: list[list[int]], targets: list[list[int]], forward: bool) -> list[float]:
    """Share of output symbols right, by where the symbol sits in the source (0 = its first symbol).

    A content rule (match the last output symbol, copy its neighbour) is as right at the start of
    the source as at its end; a rule that counts positions is right only as far as training lengths reach."""
    right, seen = [], []
    for predicted, target in zip(predictions, targets):
        for i, (p, t) in enumerate(zip(predicted, target)):
            place = i if forward else len(target) - 1 - i
            while len(seen) <= place:
                right.append(0)
                seen.append(0)
            right[place] += p == t
            seen[place] += 1
    return [round(r / s, 2) for r, s in zip(right, seen)]


if __name__ == "__main__":
    main()
