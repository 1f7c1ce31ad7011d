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
from lengthgen.tasks import LengthBin, get_task

SECTION = {
    "data": {"alphabet_size": 5, "pool_fraction": None}, "train_lengths": "1-6", "max_length": 10,
    "model": {"layers": 1, "heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1},
    "training": {"lr": 3e-3, "weight_decay": 0.01, "batch_size": 8, "max_steps": 120, "eval_every": 20,
                 "warmup_steps": 5, "schedule": "linear", "precision": "fp32", "checkpoint_every": 10,
                 "eval_examples": 32, "eval_batch_size": 64, "length_buckets": 1, "warmup_ratio": None,
                 "max_grad_norm": 1.0, "early_stop": True},
    "eos": {"train": True, "score": False},
}
JOB = """
import json, sys, torch
torch.set_num_threads(1)
from lengthgen.runtime import configure
from lengthgen.tasks import get_task
configure(1)
section, kind = json.loads(sys.argv[1]), sys.argv[4]
if kind == "scratch":
    from lengthgen.scratch.train import train_scratch_model
    summary = train_scratch_model(get_task("NF"), "ape", 3, section, sys.argv[2], sys.argv[3], progress=False)
else:  # fine-tuning a (tiny) pretrained model through accelerate
    from lengthgen.config import model_entry
    from lengthgen.finetune.train import finetune_model
    entry = model_entry("tiny", {"path": section["model_path"]})
    summary = finetune_model(entry, get_task("NF"), 3, section, sys.argv[2], sys.argv[3], progress=False)
print(json.dumps(summary))
"""


def run_job(tmp_path, name, kind="scratch", section=SECTION):
    return subprocess.Popen([sys.executable, "-c", JOB, json.dumps(section), str(tmp_path / name / "model"),
                             str(tmp_path / name / "ckpt"), kind], stdout=subprocess.PIPE, text=True)


def finetune_section(tmp_path) -> dict:
    """SECTION for fine-tuning a tiny GPT-2 with the character tokenizer, saved under tmp_path."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from lengthgen.models.char_tokenizer import build_char_tokenizer

    tokenizer = build_char_tokenizer()
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2, n_positions=64,
                               eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                               resid_pdrop=0.1)).save_pretrained(tmp_path / "pretrained")
    tokenizer.save_pretrained(tmp_path / "pretrained")
    section = {k: v for k, v in SECTION.items() if k != "model"}
    # Length buckets here, one batch in the scratch variant: the resume test covers both step paths.
    section["training"] = {**section["training"], "length_buckets": 2}
    return {**section, "model_path": str(tmp_path / "pretrained"), "data": {"alphabet_size": 52, "pool_fraction": None},
            "format": "lengthgen", "train_examples": None}


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
    a, b = weights(tmp_path / "straight" / "model"), weights(tmp_path / "killed" / "model")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_checkpoint_of_other_settings_is_not_resumed(tmp_path):
    from lengthgen.scratch.train import train_scratch_model

    section = json.loads(json.dumps(SECTION))
    section["training"]["max_steps"] = 10
    train_scratch_model(get_task("NB"), "nope", 0, section, tmp_path / "m", tmp_path / "ck", progress=False)
    section["training"]["lr"] = 1e-3
    summary = train_scratch_model(get_task("NB"), "nope", 0, section, tmp_path / "m", tmp_path / "ck", progress=False)
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
    train_scratch_model(get_task("UR"), pe, 0, section, tmp_path / "m", None, progress=False)
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
        train_scratch_model(get_task("NF"), "ape", 0, section, tmp_path / "m", None, progress=False)


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
