"""Fine-tuning: one token per symbol, labels on the model's own shift, the saved model, its evaluation."""

import json
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import torch
import yaml
from transformers import AutoModelForCausalLM, AutoTokenizer

from lengthgen.config import model_entry
from lengthgen.engine.sequences import IGNORE, collate, encode_example, tokenizer_layout
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.settings import FinetuneTaskSettings
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generate import make_dataset
from test_training import finetune_section

TOKENIZER = build_char_tokenizer()


def entry_of(section):
    return model_entry("tiny", section["model"])


def typed(section):
    return FinetuneTaskSettings.from_config(section)


def test_every_symbol_must_be_one_token():
    layout = tokenizer_layout(TOKENIZER, 62)
    assert layout.to_id(0) == TOKENIZER.convert_tokens_to_ids("A")
    assert layout.after_context["retrieval"] == (TOKENIZER.convert_tokens_to_ids(":"),)
    small = build_char_tokenizer("ABC:")
    with pytest.raises(ValueError, match=r"the tokenizer of 'gpt-x' has no single token for 'D'"):
        tokenizer_layout(small, 5, model_name="'gpt-x'")


def test_labels_follow_the_models_own_shift(tmp_path):
    """The target token is predicted at the position before it: the loss the model computes from our
    labels equals cross-entropy of the logits one position earlier (the authors shifted twice)."""
    section = finetune_section(tmp_path)
    model = AutoModelForCausalLM.from_pretrained(section["model"]["path"]).eval()
    layout = tokenizer_layout(TOKENIZER, 52)
    example = encode_example(get_task("UB"), [0, 1, 2], None, [2, 1, 0], layout)  # UB: A B C -> C B A
    assert TOKENIZER.decode(example.ids[example.answer_start:-1]) == "CBA"
    batch = collate([example], pad_id=layout.pad)
    labels = batch["labels"][0].tolist()
    assert labels[:example.answer_start] == [IGNORE] * example.answer_start
    assert labels[example.answer_start:] == example.ids[example.answer_start:]
    logits = model(input_ids=batch["input_ids"]).logits[0]
    start, end = example.answer_start, len(example.ids)
    answer = torch.tensor(example.ids[start:end])
    right = torch.nn.functional.cross_entropy(logits[start - 1:end - 1], answer)
    shifted_twice = torch.nn.functional.cross_entropy(logits[start - 2:end - 2], answer)
    loss = model(**batch).loss
    assert torch.allclose(loss, right) and not torch.allclose(loss, shifted_twice)


class TrainedWhereTheLossIs(torch.nn.Module):
    """A fake causal LM that knows the answers of `batch` only where the Hugging Face loss trains
    them: at position p of a prefix seen in `batch` its logits put 30 on the label at p + 1 (the
    model's own shift), and at every other position on `wrong`."""

    def __init__(self, batch, vocab: int, wrong: int):
        super().__init__()
        self.vocab, self.wrong, self.anchor = vocab, wrong, torch.nn.Parameter(torch.zeros(1))
        self.known = {tuple(ids[:p + 1]): labels[p + 1]
                      for ids, labels in zip(batch["input_ids"].tolist(), batch["labels"].tolist())
                      for p in range(len(ids) - 1) if labels[p + 1] != IGNORE}

    @property
    def device(self):
        return torch.device("cpu")

    def forward(self, input_ids, **_):
        logits = torch.zeros(*input_ids.shape, self.vocab)
        for r, row in enumerate(input_ids.tolist()):
            for p in range(len(row)):
                logits[r, p, self.known.get(tuple(row[:p + 1]), self.wrong)] = 30.0
        return SimpleNamespace(logits=logits)


RETRIEVAL_CONTEXTS = [[26, 52, 27, 53, 26, 54], [30, 55, 31, 56, 32, 57, 31, 58]]  # a0b1a2, e3f4g5f6 (pairs)


@pytest.mark.parametrize("task, contexts, queries, targets", [
    ("NLFirst", RETRIEVAL_CONTEXTS, [c[2] for c in RETRIEVAL_CONTEXTS], [[c[1]] for c in RETRIEVAL_CONTEXTS]),
    ("UB", [[0, 1, 2], [3, 4, 5, 6]], [None, None], [[2, 1, 0], [6, 5, 4, 3]]),
])
def test_a_retrieval_answer_is_read_where_the_loss_trains_it(task, contexts, queries, targets):
    """The authors' retrieval evaluation (finetune_flipflop.py, finetune_inductionhead.py: the argmax
    at the position whose label is set) reads one position late: the model's loss trains the logits
    one position before each label. A model perfect on that loss and on nothing else (right only at
    the positions the loss trains, `wrong` everywhere after them) is right at every example under
    our reading and wrong at every one under theirs; a reading one position late (at the answer,
    checked against the token after it) would score it wrong too. Copying is read the same way."""
    from lengthgen.engine.scoring import score

    layout = tokenizer_layout(TOKENIZER, 62, style="authors")
    task = get_task(task)
    examples = [encode_example(task, c, q, t, layout) for c, q, t in zip(contexts, queries, targets)]
    if task.family == "retrieval":
        assert TOKENIZER.decode(examples[0].ids) == "a0b1a2||b>0" + TOKENIZER.eos_token
    batch = collate(examples, pad_id=layout.pad)
    wrong = TOKENIZER.convert_tokens_to_ids("|")
    model = TrainedWhereTheLossIs(batch, len(TOKENIZER), wrong)
    logits = model(batch["input_ids"]).logits
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), batch["labels"][:, 1:].flatten(),
                                             ignore_index=IGNORE)
    assert loss < 1e-6  # perfect on the loss the model computes from our labels
    scored = score(model, examples, [layout.scored_length(task, t) for t in targets])
    assert all(s.teacher_forced for s in scored)
    labelled = batch["labels"] != IGNORE
    theirs = logits.argmax(-1)[labelled]
    assert not (theirs == batch["labels"][labelled]).any()


def validation_in_turn(monkeypatch, accuracies: list[float]) -> list[dict]:
    """Fine-tuning's validation accuracy replaced by `accuracies`, one per evaluation; returns the
    weights each evaluation saw, in order."""
    import lengthgen.finetune.train

    seen = []

    def scripted(model, *args, **kwargs):
        seen.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return accuracies[len(seen) - 1]

    monkeypatch.setattr(lengthgen.finetune.train, "teacher_forced_accuracy", scripted)
    return seen


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_finetune_saves_the_weights_of_the_best_evaluation_and_evaluates_them(tmp_path, monkeypatch):
    """Validation accuracy rises, then falls: the saved model holds the weights of step 20 (the best),
    not those of step 30 (the last)."""
    from lengthgen.finetune.train import evaluate_finetuned, finetune_model, finetune_run

    section = json.loads(json.dumps(finetune_section(tmp_path)))
    section["training"].update(max_steps=30, eval_every=10, checkpoint_every=10, early_stop=False)
    seen = validation_in_turn(monkeypatch, [0.2, 0.9, 0.5])
    run, tokenizer = finetune_run(entry_of(section), get_task("UB"), 0, typed(section), tmp_path / "ck")
    summary = finetune_model(run, tokenizer, tmp_path / "ft", progress=False)
    assert summary["steps"] == 30 and summary["history"]["steps"] == [10, 20, 30]
    assert summary["best_accuracy"] == 0.9 and summary["history"]["accuracies"] == [0.2, 0.9, 0.5]
    saved = AutoModelForCausalLM.from_pretrained(tmp_path / "ft").state_dict()
    assert same_weights(saved, seen[1]) and not same_weights(saved, seen[2])
    assert AutoTokenizer.from_pretrained(tmp_path / "ft").convert_tokens_to_ids("A") == TOKENIZER.convert_tokens_to_ids("A")
    pq.write_table(make_dataset(get_task("UB"), "chars", {"alphabet_size": 52}, LengthBin(9, 9), 6, 0),
                   tmp_path / "d.parquet")
    frame = evaluate_finetuned(tmp_path / "ft", get_task("UB"), {"9": tmp_path / "d.parquet"},
                               data={"alphabet_size": 52}, style="lengthgen", batch_size=256, precision="fp32")
    assert frame.height == 6 and frame.get_column("length").to_list() == [9] * 6
    assert all(-1 <= s < 52 for row in frame.get_column("teacher_forced_prediction") for s in row)


def test_a_model_too_short_for_the_test_lengths_is_an_error(tmp_path):
    from lengthgen.finetune.train import finetune_run

    section = {**finetune_section(tmp_path), "max_length": 40}  # UF at 40 needs 83 tokens; the model has 64
    with pytest.raises(ValueError, match="'tiny' has 64 positions; task UF at length 40 needs 83 tokens"):
        finetune_run(entry_of(section), get_task("UF"), 0, typed(section), None)


def test_more_metrics_sit_beside_validation_in_the_history(tmp_path, monkeypatch):
    """What bench/finetune_curve.py adds (an out-of-distribution score) is kept at every evaluation,
    while the kept weights are still chosen by validation accuracy alone: validation falls while
    the probe rises, and the weights of the first evaluation are kept."""
    from lengthgen.engine.loop import train
    from lengthgen.finetune.train import finetune_run

    section = json.loads(json.dumps(finetune_section(tmp_path)))
    section["training"].update(max_steps=20, eval_every=10, checkpoint_every=10)
    calls = []

    def more(model):
        calls.append(model.training)
        return {"probe": 0.25 * len(calls)}

    seen = validation_in_turn(monkeypatch, [0.5, 0.25])
    run, tokenizer = finetune_run(entry_of(section), get_task("UF"), 0, typed(section),
                                  None, more_metrics=more)
    train([run], progress=False)
    assert run.history.steps == [10, 20] and run.history.metrics == [{"probe": 0.25}, {"probe": 0.5}]
    assert calls == [False, False]  # measured in evaluation mode
    assert run.history.accuracies == [0.5, 0.25] and run.best_accuracy == 0.5
    assert same_weights(run.final_model().state_dict(), seen[0]) and not same_weights(seen[0], seen[1])
    assert tokenizer.convert_tokens_to_ids("A") == TOKENIZER.convert_tokens_to_ids("A")


def test_the_first_bin_beyond_training_is_scored_at_every_evaluation(tmp_path):
    """`curve_lengths` (the planner's first test bin beyond training) makes the history a learning
    curve out of distribution too: a `beyond_accuracy` column beside validation, one per evaluation."""
    from lengthgen.engine.run import history_frame
    from lengthgen.finetune.train import finetune_model, finetune_run

    section = json.loads(json.dumps(finetune_section(tmp_path)))
    section["training"].update(max_steps=20, eval_every=10, checkpoint_every=10, early_stop=False)
    plain = history_frame(finetune_model(*finetune_run(entry_of(section), get_task("UB"), 0, typed(section), None),
                                         tmp_path / "a", progress=False))
    curve = history_frame(finetune_model(*finetune_run(entry_of(section), get_task("UB"), 0,
                                                       typed({**section, "curve_lengths": "13-15"}), None),
                                         tmp_path / "b", progress=False))
    assert plain.columns == ["step", "train_loss", "validation_accuracy"]
    assert curve.columns == ["step", "train_loss", "validation_accuracy", "beyond_accuracy"]
    assert curve.get_column("step").to_list() == [10, 20] and curve.get_column("beyond_accuracy").null_count() == 0
    assert all(0 <= a <= 1 for a in curve.get_column("beyond_accuracy"))
    # the probe does not move training: the same steps give the same validation
    assert curve.get_column("validation_accuracy").to_list() == plain.get_column("validation_accuracy").to_list()


def test_fine_tuning_in_bf16_runs_the_forward_pass_in_bf16_and_keeps_fp32_weights(tmp_path):
    """Fine-tuning's precision goes through accelerate: bf16 autocast on a CPU as on a GPU (the first
    step's loss moves by bfloat16's rounding only), whatever an accelerate config file says; the
    weights stay fp32."""
    from lengthgen.finetune.train import finetune_run

    losses = {}
    for precision in ("fp32", "bf16"):
        section = json.loads(json.dumps(finetune_section(tmp_path)))
        section["training"].update(max_steps=1, eval_every=1, precision=precision)
        run, _ = finetune_run(entry_of(section), get_task("UF"), 0, typed(section), None)
        run.step()
        losses[precision] = run.history.losses[0]
        assert run.accelerator.mixed_precision == {"fp32": "no", "bf16": "bf16"}[precision]
        assert {p.dtype for p in run.model.parameters()} == {torch.float32}
    assert losses["bf16"] != losses["fp32"] and losses["bf16"] == pytest.approx(losses["fp32"], rel=0.02)


def test_held_out_validation_is_a_disjoint_seeded_tenth_of_the_training_set():
    """The authors' scripts validate on 10% of their 50,000 training examples and train on the rest
    (`finetune.validation: holdout`): 45 + 5 of 50 here, disjoint, together the whole set, the same
    for the same seed."""
    from lengthgen.config.validate import train_settings
    from lengthgen.engine.sequences import encoded_examples
    from lengthgen.finetune.train import training_and_validation

    task, train_bin, layout = get_task("UR"), LengthBin(3, 10), tokenizer_layout(TOKENIZER, 52)
    section = {"data": {"alphabet_size": 52}, "format": "lengthgen", "train_lengths": "3-10", "max_length": 10,
               "train_examples": 50, "training": train_settings("finetune").as_config(), "holdout": 5}
    whole = {tuple(e.ids) for e in encoded_examples(task, section["data"], train_bin, 50, 0, "train-set", layout)[0]}
    assert len(whole) == 50

    def split(seed, **changes):
        settings = typed({**section, **changes})
        return training_and_validation(task, settings, train_bin, seed, layout, eval_examples=7)

    dataset, validation, targets = split(0)
    trained, held = {tuple(e.ids) for e in dataset}, {tuple(e.ids) for e in validation}
    assert (len(dataset), len(validation), len(targets)) == (45, 5, 5)
    assert not trained & held and trained | held == whole
    again = split(0)
    assert [e.ids for e in again[1]] == [e.ids for e in validation]
    other = split(1)
    assert {tuple(e.ids) for e in other[1]} != held
    stream = split(0, holdout=None)
    assert stream[0] is None and len(stream[1]) == 7 and not {tuple(e.ids) for e in stream[1]} <= whole


def test_held_out_validation_counts_epochs_and_warm_up_over_the_training_part():
    """The paper preset: 45,000 training examples, 30 epochs of ceil(45,000 / 64) = 704 batches, the
    15% warm-up of those 21,120 steps; the separate stream keeps 50,000 (782 batches)."""
    from lengthgen.config import validate_config
    from lengthgen.plan.finetune import train_params

    declared = yaml.safe_load(open("configs/paper.yaml"))
    paper = validate_config(declared, check_availability=False)
    section = train_params(paper, "embedded", "UR")
    assert section.holdout == 5000 and section.training.max_steps == 30 * 704 == 21120
    assert section.training.warmup == 3168  # ceil(0.15 * 21,120)
    declared["finetune"]["validation"] = "stream"
    section = train_params(validate_config(declared, check_availability=False), "embedded", "UR")
    assert section.holdout is None and section.training.max_steps == 30 * 782


def test_held_out_validation_needs_a_fixed_training_set():
    from lengthgen.config import ConfigError, validate_config

    with pytest.raises(ConfigError, match=r"finetune\.validation: holdout needs a fixed training set"):
        validate_config({"finetune": {"validation": "holdout"}}, check_availability=False)


def test_training_positions_start_anywhere_up_to_the_longest_test_sequence_unless_offsets_are_off(tmp_path):
    """Absolute-position models train every position a test bin uses (random start offsets); the
    `no-offsets` control starts every training sequence at 0, as the training strings alone reach."""
    from lengthgen.finetune.train import finetune_run

    section = json.loads(json.dumps(finetune_section(tmp_path)))
    batches = {}
    for offsets in (None, False):
        run, _ = finetune_run(entry_of(section), get_task("UF"), 0, typed({**section, "position_offsets": offsets}),
                              None)
        batches[offsets] = run.batch_for(0)
    assert max(batches[None]["position_ids"][:, 0].tolist()) > 0
    assert "position_ids" not in batches[False]  # the model's own positions: 0, 1, ... in every row
    assert typed(section).position_offsets is None  # the default: offsets on, and not in the job's parameters
