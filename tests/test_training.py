"""The training engine: labels aligned with the model's own shift, exact resume after SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from lengthgen.config import train_settings
from lengthgen.engine.sequences import IGNORE, collate, encode_example
from lengthgen.models.builders import build_model
from lengthgen.models.vocab import BOS, EOS, SEP, symbol_id, vocab_size
from lengthgen.settings import ScratchRunSettings
from lengthgen.tasks import LengthBin, get_task
from tiny_models import tiny_training_section

SECTION = tiny_training_section()
JOB = """
import json, sys, torch
torch.set_num_threads(1)
from lengthgen.runtime import configure
from lengthgen.settings import FinetuneTaskSettings, ScratchRunSettings
from lengthgen.tasks import get_task
configure(1)
section, kind = json.loads(sys.argv[1]), sys.argv[4]
if kind == "scratch":
    from lengthgen.scratch.train import train_scratch_model
    settings = ScratchRunSettings.from_config(section)
    summary = train_scratch_model(get_task("NF"), "ape", 3, settings, sys.argv[2], sys.argv[3], progress=False)
else:  # fine-tuning a (tiny) pretrained model through accelerate
    from lengthgen.config import model_entry
    from lengthgen.finetune.train import finetune_model, finetune_run
    entry = model_entry("tiny", {"path": section["model"]["path"]})
    settings = FinetuneTaskSettings.from_config(section)
    run, tokenizer = finetune_run(entry, get_task("NF"), 3, settings, sys.argv[3])
    summary = finetune_model(run, tokenizer, sys.argv[2], progress=False)
print(json.dumps(summary))
"""


def run_job(tmp_path, name, kind="scratch", section=SECTION):
    return subprocess.Popen([sys.executable, "-c", JOB, json.dumps(section), str(tmp_path / name / "model"),
                             str(tmp_path / name / "ckpt"), kind], stdout=subprocess.PIPE, text=True)


def finetune_section(tmp_path) -> dict:
    """SECTION for fine-tuning a tiny GPT-2 with the character tokenizer, saved under tmp_path."""
    from tiny_models import save_tiny_model

    save_tiny_model(tmp_path / "pretrained", positions=64)
    section = {k: v for k, v in SECTION.items() if k not in ("model", "eos")}
    # Length buckets here, one batch in the scratch variant: the resume test covers both step paths.
    section["training"] = {**section["training"], "length_buckets": 2}
    return {**section, "model": {"path": str(tmp_path / "pretrained")}, "data": {"alphabet_size": 52, "pool_fraction": None},
            "format": "lengthgen", "train_examples": None}


def typed(section):
    return ScratchRunSettings.from_config(section)


def weights(path):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(path).state_dict()


def test_labels_sit_on_the_answer_and_the_model_shifts_them():
    example = encode_example(get_task("UR"), [0, 1, 2], 1, [2])
    assert example.ids == [BOS, symbol_id(0), symbol_id(1), symbol_id(2), SEP, symbol_id(1), symbol_id(2), EOS]
    batch = collate([example])
    assert batch["labels"].tolist() == [[IGNORE] * 6 + [symbol_id(2), EOS]]
    # The model's loss with these labels equals cross-entropy of logits[t-1] against token t.
    model = build_model("ape", 10, 16, layers=1, heads=2, d_model=16)
    out = model(**batch)
    manual = torch.nn.functional.cross_entropy(out.logits[0, 5:7], torch.tensor([symbol_id(2), EOS]))
    assert torch.allclose(out.loss, manual)
    # A label shifted by one more (the authors' bug) would score the query token instead.
    wrong = torch.nn.functional.cross_entropy(out.logits[0, 4:6], torch.tensor([symbol_id(2), EOS]))
    assert not torch.allclose(out.loss, wrong)


def test_position_offsets_shift_position_ids_and_stay_in_the_table():
    uf = get_task("UF")
    a, b = encode_example(uf, [0, 1], None, [0, 1]), encode_example(uf, [0, 1, 2, 3], None, [0, 1, 2, 3])
    batch = collate([a, b], offsets=[3, 0], max_position=11)
    assert batch["position_ids"][0].tolist() == [3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]  # padding clamped
    assert batch["position_ids"][1].tolist() == list(range(11))


def copy_batch(rows=12, seed=0):
    from lengthgen.engine.sequences import TrainingStream

    return TrainingStream(get_task("UF"), {"alphabet_size": 10}, LengthBin(1, 9), rows, seed, 24)(0)


def _ends(labels):
    """Each row's length: one past its last labelled token."""
    return [int((row != IGNORE).nonzero().max()) + 1 for row in labels]


def test_length_buckets_keep_every_row_and_cut_each_to_its_longest():
    from lengthgen.engine.sequences import length_buckets

    batch = copy_batch()
    parts = length_buckets(batch, 3)
    assert [len(p["input_ids"]) for p in parts] == [4, 4, 4]
    for part in parts:
        assert part["input_ids"].shape == part["labels"].shape == part["position_ids"].shape
        assert part["input_ids"].shape[1] == max(_ends(part["labels"]))
    # The same rows (tokens, labels, positions up to each row's end), shortest first.
    def rows(b):
        return sorted((tuple(b["input_ids"][i, :e].tolist()), tuple(b["labels"][i, :e].tolist()),
                       tuple(b["position_ids"][i, :e].tolist())) for i, e in enumerate(_ends(b["labels"])))
    assert rows(batch) == sorted(r for p in parts for r in rows(p))
    widths = [p["input_ids"].shape[1] for p in parts]
    assert widths == sorted(widths) and widths[-1] == batch["input_ids"].shape[1] > widths[0]


@pytest.mark.parametrize("pe", ["ape", "rope"])
def test_length_buckets_give_the_gradient_of_the_whole_batch(pe):
    from lengthgen.engine.run import TrainingRun

    batch = copy_batch()
    if pe != "ape":
        batch.pop("position_ids")
    grads = {}
    for buckets in (1, 3):
        model = build_model(pe, vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
        run = TrainingRun(model, train_settings(lr=0.0, length_buckets=buckets, max_steps=5, eval_every=100),
                          lambda step: batch, lambda m: 0.0, None, {}, device=torch.device("cpu"))
        run.optimizer.step = lambda: None  # keep the gradient for comparison
        run.optimizer.zero_grad = lambda set_to_none=True: None
        run.step()
        grads[buckets] = ({n: p.grad.clone() for n, p in model.named_parameters()}, float(run._loss_sum))
    (one, loss_one), (three, loss_three) = grads[1], grads[3]
    assert loss_three == pytest.approx(loss_one, rel=1e-5)
    assert all(torch.allclose(one[n], three[n], atol=1e-6) for n in one)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["scratch", "finetune"])
def test_killed_training_resumes_bit_for_bit(tmp_path, kind):
    section = SECTION if kind == "scratch" else finetune_section(tmp_path)
    straight = run_job(tmp_path, "straight", kind, section)
    reference = json.loads(straight.communicate(timeout=300)[0])
    assert reference["resumed_from"] is None

    victim = run_job(tmp_path, "killed", kind, section)
    checkpoint = tmp_path / "killed" / "ckpt" / "state.pt"
    deadline = time.time() + 120
    while not checkpoint.exists() and time.time() < deadline:
        time.sleep(0.005)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / "model").exists(), "killed before the end, so no model yet"

    resumed = json.loads(run_job(tmp_path, "killed", kind, section).communicate(timeout=300)[0])
    assert resumed["resumed_from"] and 0 < resumed["resumed_from"] < SECTION["training"]["max_steps"]
    assert resumed["history"] == reference["history"]
    assert resumed["steps"] == reference["steps"]
    counts = ("tokens", "padded_tokens", "attention_pairs")  # kept in the checkpoint: counted once each
    assert [resumed[k] for k in counts] == [reference[k] for k in counts] and reference["tokens"] > 0
    a, b = weights(tmp_path / "straight" / "model"), weights(tmp_path / "killed" / "model")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_checkpoint_of_other_settings_is_not_resumed(tmp_path):
    from lengthgen.scratch.train import train_scratch_model

    section = json.loads(json.dumps(SECTION))
    section["training"]["max_steps"] = 10
    train_scratch_model(get_task("NB"), "nope", 0, typed(section), tmp_path / "m", tmp_path / "ck", progress=False)
    section["training"]["lr"] = 1e-3
    summary = train_scratch_model(get_task("NB"), "nope", 0, typed(section), tmp_path / "m", tmp_path / "ck", progress=False)
    assert summary["resumed_from"] is None and summary["steps"] == 10


@pytest.mark.parametrize("pe", ["rope", "nope"])
def test_relative_and_no_position_models_need_no_test_length(tmp_path, pe):
    """The workflow passes max_length=None for RoPE/NoPE: they have no position table to size."""
    from transformers import AutoModelForCausalLM

    from lengthgen.scratch.train import train_scratch_model

    section = json.loads(json.dumps(SECTION))
    section.update(max_length=None)
    if pe == "rope":
        section["model"].update(rope_theta=500, rope_scaling=64)
    section["training"]["max_steps"] = 3
    section["data"] = {"alphabet_size": 5}
    train_scratch_model(get_task("UR"), pe, 0, typed(section), tmp_path / "m", None, progress=False)
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    if pe == "rope":  # the authors' RoPE model: a stock Llama, rope base 500, linear scaling by 64
        assert model.config.model_type == "llama"
        assert model.config.rope_parameters == {"rope_type": "linear", "factor": 64.0, "rope_theta": 500.0}
    else:
        assert model.config.model_type == "smollm3" and model.config.no_rope_layers == [0]


def test_position_table_too_small_is_an_error(tmp_path):
    from lengthgen.scratch.train import train_scratch_model

    section = json.loads(json.dumps(SECTION))
    section["model"]["max_positions"] = 8
    with pytest.raises(ValueError, match="max_positions 8 is shorter than the longest sequence"):
        train_scratch_model(get_task("NF"), "ape", 0, typed(section), tmp_path / "m", None, progress=False)


def test_gradients_are_clipped_to_max_grad_norm():
    from lengthgen.engine.run import TrainingRun

    batch = copy_batch()
    norms = {}
    for clip in (None, 1e-3):
        model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
        run = TrainingRun(model, train_settings(lr=0.0, max_steps=5, eval_every=100, max_grad_norm=clip),
                          lambda step: batch, lambda m: 0.0, None, {}, device=torch.device("cpu"))
        run.optimizer.step = lambda: None  # keep the gradient to measure it
        run.optimizer.zero_grad = lambda set_to_none=True: None
        run.step()
        norms[clip] = float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]))
    assert norms[None] > 1e-2 and norms[1e-3] == pytest.approx(1e-3, rel=1e-3)


def trainer_built(model, tmp_path, max_steps: int, warmup, schedule: str):
    """The optimiser and schedule Hugging Face Trainer builds for `model` (what the authors ran)."""
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(tmp_path / "trainer"), learning_rate=1e-3, weight_decay=0.01,
                             max_steps=max_steps, warmup_steps=warmup, use_cpu=True, report_to="none",
                             lr_scheduler_type="linear" if schedule == "linear" else "constant_with_warmup")
    trainer = Trainer(model=model, args=args)
    trainer.create_optimizer_and_scheduler(num_training_steps=max_steps)
    return trainer.optimizer, trainer.lr_scheduler


def learning_rates(optimizer, scheduler, steps: int) -> list[float]:
    rates = []
    for _ in range(steps):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()  # no gradients: nothing moves, the schedule advances
        scheduler.step()
    return rates


@pytest.mark.parametrize("pe", ["ape", "rope", "nope"])
def test_optimiser_groups_are_the_ones_trainer_builds(tmp_path, pe):
    """Weight decay on every weight but biases and norm weights, exactly as Trainer decides (the
    authors' runs); the engine used to decay every parameter."""
    from lengthgen.engine.settings import optimizer_and_schedule

    model = build_model(pe, vocab_size(10), 24, layers=2, heads=2, d_model=16, seed=1)
    ours, _ = optimizer_and_schedule(model, train_settings(lr=1e-3, weight_decay=0.01, max_steps=10),
                                     torch.device("cpu"))
    theirs, _ = trainer_built(model, tmp_path, 10, 0, "linear")
    names = {id(p): n for n, p in model.named_parameters()}
    groups = lambda optimizer: [(g["weight_decay"], sorted(names[id(p)] for p in g["params"]))
                                for g in optimizer.param_groups]
    assert groups(ours) == groups(theirs)
    undecayed = groups(ours)[1][1]
    assert undecayed and all("bias" in n or "norm" in n or "ln_" in n for n in undecayed)
    assert any(n.endswith("weight") for n in groups(ours)[0][1])


@pytest.mark.parametrize("schedule,warmup_steps,warmup_ratio", [("linear", 5, None), ("linear", 0, 0.15),
                                                                 ("constant", 4, None), ("constant", 0, None)])
def test_learning_rates_are_the_ones_trainer_schedules(tmp_path, schedule, warmup_steps, warmup_ratio):
    """transformers' own warm-up (lr 0 at the first step, the peak after `warmup` steps; a warm-up
    ratio rounded up), which the engine's hand-written one missed by a step."""
    from lengthgen.engine.settings import optimizer_and_schedule

    model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
    settings = train_settings(lr=1e-3, max_steps=33, warmup_steps=warmup_steps, warmup_ratio=warmup_ratio,
                              schedule=schedule)
    ours = learning_rates(*optimizer_and_schedule(model, settings, torch.device("cpu")), 33)
    theirs = learning_rates(*trainer_built(model, tmp_path, 33, warmup_ratio or warmup_steps, schedule), 33)
    assert ours == pytest.approx(theirs, abs=1e-12)
    if warmup_steps or warmup_ratio:
        assert ours[0] == 0.0 and max(ours) == pytest.approx(1e-3)


# -- the schedule the engine applies, the fixed training set, the kept weights, bf16 ----------------
def lr_at_every_step(settings) -> list[float]:
    """The learning rate each optimiser step of a TrainingRun used, read when the step asks for its batch."""
    from lengthgen.engine.run import TrainingRun

    batch, rates, holder = copy_batch(), [], {}

    def batch_for(step):
        rates.append(holder["run"].optimizer.param_groups[0]["lr"])
        return batch

    model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
    holder["run"] = TrainingRun(model, settings, batch_for, lambda m: 0.0, None, {}, device=torch.device("cpu"))
    while holder["run"].step():
        pass
    return rates


@pytest.mark.parametrize("schedule, warmup_steps, warmup_ratio, expected", [
    # lr 1e-3, 12 steps: up by a quarter per step for 4 steps, then down by an eighth to 1/8 at the last step
    ("linear", 4, None, [0, 0.25, 0.5, 0.75, 1, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125]),
    ("linear", 0, 0.3, [0, 0.25, 0.5, 0.75, 1, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125]),  # ceil(3.6) = 4
    ("constant", 4, None, [0, 0.25, 0.5, 0.75] + [1] * 8),
    ("linear", 0, None, [1 - s / 12 for s in range(12)]),
])
def test_the_learning_rate_of_every_step(schedule, warmup_steps, warmup_ratio, expected):
    """Warm-up from 0 to the peak in `warmup` steps, then linear decay towards 0 at max_steps (or
    the peak kept): the rate each step of a run actually trains with, checked against numbers written out."""
    settings = train_settings(lr=1e-3, max_steps=12, eval_every=100, checkpoint_every=100, warmup_steps=warmup_steps,
                              warmup_ratio=warmup_ratio, schedule=schedule)
    assert lr_at_every_step(settings) == pytest.approx([1e-3 * r for r in expected], abs=1e-12)


def fixed_set_stream(seed=0, size=10, batch_size=4):
    from lengthgen.engine.sequences import TrainingStream

    return TrainingStream(get_task("UF"), {"alphabet_size": 10}, LengthBin(1, 9), batch_size, seed, 24,
                          dataset_size=size)


def drawn_indices(stream, steps: int) -> list[int]:
    """Which examples of the fixed training set each step's batch holds, in order."""
    index = {id(e): i for i, e in enumerate(stream.dataset)}
    return [index[id(e)] for step in range(steps) for e in stream.examples(step)]


def test_a_fixed_training_set_shows_every_example_once_per_epoch_in_a_seeded_order():
    """The authors' protocol (train_examples with epochs): each epoch is the whole set in its own
    order, a batch may straddle two epochs, and the order is a function of the seed alone, so a
    resumed run sees the same examples."""
    stream = fixed_set_stream()
    assert len(stream.dataset) == 10 and len({tuple(e.ids) for e in stream.dataset}) > 1
    drawn = drawn_indices(stream, 10)  # 10 batches of 4 = 4 epochs of 10; batches 2 and 7 straddle two
    epochs = [drawn[i:i + 10] for i in range(0, 40, 10)]
    assert all(sorted(epoch) == list(range(10)) for epoch in epochs)
    assert len({tuple(epoch) for epoch in epochs}) == 4  # a new order every epoch
    assert drawn_indices(fixed_set_stream(), 10) == drawn  # a new stream (a resumed run): the same order
    assert drawn_indices(fixed_set_stream(seed=1), 10) != drawn
    # A step's batch is its examples, collated: the same tokens whichever step came before.
    later = stream(7)["input_ids"]
    assert torch.equal(fixed_set_stream()(7)["input_ids"], later)


def test_the_kept_weights_are_those_of_the_best_evaluation_even_after_a_resume(tmp_path):
    """keep="best" (fine-tuning): the weights at the evaluation with the highest validation accuracy
    (the first of equal ones), not the last; the best weights travel in the checkpoint, so a run
    killed after its best evaluation still keeps them. keep="last": the last weights."""
    from lengthgen.engine.run import TrainingRun

    batch, accuracies = copy_batch(), [0.3, 0.8, 0.8, 0.1]

    def new_run(keep, snapshots, checkpoint_dir=None):
        def evaluate(model):
            snapshots.append({k: v.clone() for k, v in model.state_dict().items()})
            return accuracies[len(snapshots) - 1]

        model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
        settings = train_settings(lr=1e-2, max_steps=4, eval_every=1, checkpoint_every=2, keep=keep)
        return TrainingRun(model, settings, lambda step: batch, evaluate, checkpoint_dir, {}, device=torch.device("cpu"))

    def same(a, b):
        return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)

    for keep, kept in (("best", 1), ("last", 3)):
        snapshots = []
        run = new_run(keep, snapshots)
        while run.step():
            pass
        final = run.final_model().state_dict()
        assert same(final, snapshots[kept]) and not same(snapshots[1], snapshots[3])
        assert run.best_accuracy == 0.8

    snapshots = []
    first = new_run("best", snapshots, tmp_path / "ckpt")
    first.step(), first.step()  # the checkpoint at step 2 holds the best weights (step 2's)
    resumed = new_run("best", snapshots, tmp_path / "ckpt")
    assert resumed.resumed_from == 2
    while resumed.step():
        pass
    assert same(resumed.final_model().state_dict(), snapshots[1]) and resumed.history.accuracies == accuracies


def test_bf16_trains_and_scores_close_to_fp32_with_fp32_weights():
    """precision "bf16": the forward pass runs in bfloat16 (autocast; on CPU too), the weights and
    their update stay fp32; the loss and the teacher-forced answers are those of fp32 up to
    bfloat16's rounding."""
    from lengthgen.engine.run import TrainingRun
    from lengthgen.engine.scoring import score
    from lengthgen.engine.sequences import encoded_examples

    batch, losses = copy_batch(), {}
    for precision in ("fp32", "bf16"):
        model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
        run = TrainingRun(model, train_settings(lr=1e-3, max_steps=5, eval_every=100, precision=precision),
                          lambda step: batch, lambda m: 0.0, None, {}, device=torch.device("cpu"))
        run.step()
        losses[precision] = float(run._loss_sum)
        assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert losses["bf16"] != losses["fp32"] and losses["bf16"] == pytest.approx(losses["fp32"], rel=0.02)

    model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
    examples, targets = encoded_examples(get_task("UF"), {"alphabet_size": 10}, LengthBin(1, 9), 64, 0, "validation")
    answers = {p: [s.teacher_forced_prediction for s in score(model, examples, targets, precision=p)]
               for p in ("fp32", "bf16")}
    assert answers["bf16"] != answers["fp32"]  # a random model has near ties; bfloat16 breaks a few
    clear = 0
    for example, n, fp32, bf16 in zip(examples, targets, answers["fp32"], answers["bf16"]):
        logits = model(input_ids=torch.tensor([example.ids])).logits[0, example.answer_start - 1:][:n]
        top_two = logits.topk(2).values
        assert fp32 == logits.argmax(-1).tolist()
        for margin, a, b in zip((top_two[:, 0] - top_two[:, 1]).tolist(), fp32, bf16):
            if margin > 0.05:  # well above bfloat16's rounding of these logits: the same answer
                clear += 1
                assert a == b
    assert clear > 150  # most of the 317 answer tokens


@pytest.mark.parametrize(("patience", "stopped_at"), [(2, 4), (3, 8), (None, 9)])
def test_a_run_stops_after_patience_evaluations_without_a_better_accuracy(tmp_path, patience, stopped_at):
    """Accuracies 0.3, 0.6, 0.6, 0.5, then 0.7 five times: an equal accuracy is no improvement, so
    with patience 2 the run stops at evaluation 4 (two since 0.6), with 3 it reaches 0.7 and stops
    at 8, without patience it runs to max_steps (9). A run resumed from a checkpoint stops at the same step."""
    from lengthgen.engine.run import TrainingRun

    batch, accuracies = copy_batch(), [0.3, 0.6, 0.6, 0.5, 0.7, 0.7, 0.7, 0.7, 0.7]

    def new_run(checkpoint_dir=None):
        model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=1)
        settings = train_settings(lr=1e-2, max_steps=9, eval_every=1, checkpoint_every=1, keep="best",
                                  patience=patience)
        run = TrainingRun(model, settings, lambda step: batch, lambda m: accuracies[len(run.history.accuracies)],
                          checkpoint_dir, {}, device=torch.device("cpu"))
        return run

    run = new_run()
    while run.step():
        pass
    assert run.step_count == stopped_at and run.history.accuracies == accuracies[:stopped_at]
    assert run.best_accuracy == max(accuracies[:stopped_at])

    first = new_run(tmp_path / "ckpt")
    for _ in range(3):
        first.step()
    resumed = new_run(tmp_path / "ckpt")
    assert resumed.resumed_from == 3
    while resumed.step():
        pass
    assert resumed.step_count == stopped_at and resumed.history.accuracies == accuracies[:stopped_at]
