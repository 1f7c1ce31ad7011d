"""Mechanism: the copy prompts, head scores that read the right positions, edge patching through one
attention function for every architecture (equal to the stock model when nothing is patched, to a
per-position reference when something is), and a clear error where attention cannot be patched."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from transformers import BloomConfig, BloomForCausalLM

from lengthgen.engine.sequences import SCRATCH_LAYOUT
from lengthgen.mechanism.analyse import analyse
from lengthgen.mechanism.attention import NotPatchable, Plan, edge_attention, patched
from lengthgen.mechanism.heads import score_edges
from lengthgen.mechanism.patching import anti_induction_edges, corruption_edges, induction_edges, patching, top_heads
from lengthgen.mechanism.prompts import few_shot_prompts, trained_prompts
from lengthgen.mechanism.reference import per_position_attention
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.settings import ScratchRunSettings
from tiny_models import tiny_model

TOKENIZER = build_char_tokenizer()


def tiny(kind):
    """Two layers of 4 heads, 32 wide: GPT-2 with large initial weights (sharp attention), Gemma 3
    with a sliding window shorter than the prompts."""
    extra = {"gpt2": {"initializer_range": 0.5}, "gemma3": {"head_dim": 8, "sliding_window": 16}}.get(kind, {})
    return tiny_model(kind, layers=2, heads=4, width=32, positions=256, **extra)


def test_the_authors_copy_prompts():
    prompts = few_shot_prompts(TOKENIZER, 3, "backward", count=4, shots=2, seed=0, separator="")
    text = TOKENIZER.decode(prompts.ids[0])
    segments = text.removeprefix(TOKENIZER.bos_token).removesuffix(TOKENIZER.eos_token).split(".")
    assert len(segments) == 3
    for segment in segments:
        source, copy = segment.split(",")
        assert len(set(source)) == 3 and copy == source[::-1] and source.islower()
    assert prompts.input_start == 1 + 2 * 8 and prompts.copy_start == prompts.input_start + 4
    forward = few_shot_prompts(TOKENIZER, 3, "forward", count=4, shots=2, seed=0, separator="")
    test_input = slice(prompts.input_start, prompts.input_start + 3)  # the same letters in both directions
    assert torch.equal(forward.ids[:, test_input], prompts.ids[:, test_input])
    # The k-th copied token stands at its occurrence in the test input.
    for k in range(3):
        assert prompts.ids[0, prompts.copy_start + k] == prompts.ids[0, prompts.occurrence(k)]
        assert forward.ids[0, forward.copy_start + k] == forward.ids[0, forward.occurrence(k)]


def test_edges_point_where_each_circuit_reads():
    forward = few_shot_prompts(TOKENIZER, 4, "forward", count=1, shots=1, seed=0, separator="")
    ids = forward.ids[0].tolist()
    for dst, src in induction_edges(forward):  # the key whose previous token is the current one
        assert ids[src - 1] == ids[dst]
    for dst, src in anti_induction_edges(forward):  # the value of the earlier occurrence itself
        assert ids[src] == ids[dst] and src < forward.copy_start
    assert corruption_edges(forward)[-1] == (forward.copy_start - 1, forward.copy_start - 2)
    for prompts in (forward, few_shot_prompts(TOKENIZER, 4, "backward", count=1, shots=1, seed=0, separator="")):
        edges = score_edges(prompts)
        assert edges["induction"] == [(d, s + 1) for d, s in edges["duplicate"]]
        assert edges["before_occurrence"] == [(d, s - 1) for d, s in edges["duplicate"]]
        # The headline anti-induction score reads the very edges remove_anti_induction patches (docs/spec.md §6).
        assert edges["anti_induction"] == edges["duplicate"]
        assert set(edges["anti_induction"]) <= set(anti_induction_edges(prompts))
        assert set(edges["induction"]) <= set(induction_edges(prompts))


@pytest.mark.parametrize("kind", ["gpt2", "llama", "qwen2", "gemma3"])
def test_no_patch_gives_the_stock_models_logits(kind):
    model = tiny(kind)
    ids = torch.randint(3, len(TOKENIZER), (2, 40))
    stock = model(input_ids=ids).logits
    with patched(model, Plan()):
        ours = model(input_ids=ids).logits
    assert torch.allclose(stock, ours, atol=1e-5)
    assert model.config._attn_implementation != "lengthgen_edges"  # restored



@pytest.mark.parametrize("function", [edge_attention, per_position_attention])
def test_a_pass_keeps_only_the_records_it_asks_for(function):
    """Head scores need the weights, patching the keys and values: each pass keeps one of them (a
    70B model's weights for one batch are gigabytes)."""
    model, ids = tiny("llama"), torch.randint(3, len(TOKENIZER), (2, 12))
    with patched(model, Plan(record_weights=True), function) as weights_only:
        model(input_ids=ids)
    with patched(model, Plan(record_states=True), function) as states_only:
        model(input_ids=ids)
    assert sorted(weights_only.weights) == [0, 1] and not weights_only.keys and not weights_only.values
    assert weights_only.weights[0].shape == (2, 4, 12, 12)
    assert sorted(states_only.keys) == sorted(states_only.values) == [0, 1] and not states_only.weights
    assert states_only.keys[0].shape == (2, 2, 12, 8)  # the model's own key heads (grouped query)

def test_hand_built_edges():
    """One head, three positions: only the patched entries change, by exactly the expected amount."""
    module = SimpleNamespace(layer_idx=0, training=False)
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]])
    k = torch.tensor([[[[1.0, 0.0], [0.0, 2.0], [1.0, -1.0]]]])
    v = torch.tensor([[[[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]]]])
    mask = torch.triu(torch.full((3, 3), float("-inf")), 1)[None, None]
    other_k, other_v = torch.full_like(k, 0.5), torch.full_like(v, -1.0)
    plan = Plan(key_edges=[(2, 0)], value_edges=[(2, 1)], replacement_keys={0: other_k}, replacement_values={0: other_v})
    from lengthgen.mechanism import attention
    attention._ACTIVE.append(plan)
    try:
        out, weights = edge_attention(module, q, k, v, mask, scaling=1.0)
    finally:
        attention._ACTIVE.pop()
    scores = torch.tensor([1.0 * 0.5 + 1.0 * 0.5, 0.0 + 2.0, 1.0 - 1.0])  # query 2; key 0 replaced by (0.5, 0.5)
    w = torch.softmax(scores, dim=0)
    expected = w[0] * v[0, 0, 0] + w[1] * other_v[0, 0, 1] + w[2] * v[0, 0, 2]
    assert torch.allclose(weights[0, 0, 2], w) and torch.allclose(out[0, 2, 0], expected)
    unpatched_row1 = torch.softmax(torch.tensor([0.0, 2.0]), dim=0)
    assert torch.allclose(out[0, 1, 0], unpatched_row1[0] * v[0, 0, 0] + unpatched_row1[1] * v[0, 0, 1])


@pytest.mark.parametrize("kind", ["gpt2", "llama", "gemma3"])
def test_one_pass_patching_equals_the_per_position_reference(kind):
    model = tiny(kind)
    prompts = few_shot_prompts(TOKENIZER, 3, "backward", count=3, shots=2, seed=1, separator="")
    scores = {"induction": np.random.default_rng(0).random((2, 4)), "anti_induction": np.ones((2, 4))}
    fast = patching(model, prompts, scores, ablate=2)
    slow = patching(model, prompts, scores, ablate=2, function=per_position_attention)
    for condition in fast:
        assert fast[condition]["loss"] == pytest.approx(slow[condition]["loss"], abs=1e-5)
        assert fast[condition]["accuracy"] == slow[condition]["accuracy"]
    assert fast["remove_induction"]["loss"] != fast["none"]["loss"]  # the patch does something


def test_a_model_whose_attention_cannot_be_patched_is_named():
    model = BloomForCausalLM(BloomConfig(vocab_size=50, hidden_size=16, n_layer=1, n_head=2))
    with pytest.raises(NotPatchable, match=r"BloomForCausalLM \(bloom\) does not route its attention"):
        with patched(model, Plan()):
            pass


def test_top_heads_and_a_whole_analysis_on_a_trained_layout():
    assert top_heads(np.array([[0.1, 0.9], [0.5, 0.2]]), 2) == {(0, 1), (1, 0)}
    from lengthgen.models.builders import build_model

    model = build_model("ape", 30, 64, layers=1, heads=2, d_model=16).eval()
    heads, conditions = analyse(model, lambda n, d, s: trained_prompts(SCRATCH_LAYOUT, n, d, 6, s, 25), [3, 4], [0], 1)
    assert heads.height == 2 * 2 * 2 and set(heads.get_column("direction")) == {"forward", "backward"}
    assert conditions.height == 2 * 2 * 5 and conditions.get_column("accuracy").is_between(0, 1).all()


def test_the_heads_summary_keeps_the_models_in_order_with_their_best_heads():
    """The summary (the markdown's rows) lists models as the table does, every time, each with its
    best induction head on forward copies and best anti-induction head on backward copies."""
    import polars as pl

    from lengthgen.mechanism.tables import heads_summary

    models = [f"model-{name}" for name in "hgfedcba"]
    rows = [{"model": model, "direction": direction, "length": 3, "layer": layer, "head": head,
             "previous_token": 0.0, "duplicate": 0.0,
             "induction": 0.1 * (layer + head) + 0.01 * rank if direction == "forward" else 0.0,
             "anti_induction": 0.3 * (layer == 0 and head == 1) if direction == "backward" else 0.0,
             "before_occurrence": 0.4 * (layer == 1 and head == 0) if direction == "backward" else 0.0,
             "copy_accuracy": 0.5, "seeds": 1}
            for rank, model in enumerate(models) for direction in ("forward", "backward")
            for layer in range(2) for head in range(2)]
    table = pl.DataFrame(rows)
    for _ in range(3):
        summary = heads_summary(table)
        assert summary.get_column("model").to_list() == models
    first = summary.row(0, named=True)
    assert first["induction_head"] == "1.1" and first["best_induction"] == pytest.approx(0.2)
    assert first["anti_induction_head"] == "0.1" and first["best_anti_induction"] == pytest.approx(0.3)
    assert first["induction_heads"] == 0 and first["anti_induction_heads"] == 1
    assert first["before_occurrence_head"] == "1.0"  # the positional column, apart from the headline


@pytest.fixture(scope="module")
def backward_copier():
    """A from-scratch UB model small enough to train here (2 layers of 2 heads, about 20 s on a CPU
    core): it learns the textbook backward-copy circuit, a previous-token head in layer 0 and a head
    in layer 1 that attends from each copied token to its earlier occurrence and reads the previous
    token out of its value."""
    from lengthgen.engine.loop import train
    from lengthgen.scratch.train import scratch_run
    from lengthgen.tasks import get_task

    section = {"data": {"alphabet_size": 16}, "train_lengths": "3-10", "max_length": 10,
               "model": {"layers": 2, "heads": 2, "d_model": 64, "d_ff": 256, "dropout": 0.0},
               "training": {"lr": 2e-3, "weight_decay": 0.01, "batch_size": 32, "max_steps": 3000, "eval_every": 100,
                            "warmup_steps": 200, "schedule": "linear", "precision": "fp32", "checkpoint_every": 10**6,
                            "eval_examples": 200, "eval_batch_size": 256, "length_buckets": 1, "warmup_ratio": None,
                            "max_grad_norm": 1.0, "early_stop": True, "patience": None},
               "eos": {"train": True, "score": False}}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a few times faster for a model this small, and the same model every time
    try:
        run = scratch_run(get_task("UB"), "ape", 0, ScratchRunSettings.from_config(section), None)
        train([run], progress=False)
    finally:
        torch.set_num_threads(threads)
    assert run.best_accuracy == 1.0
    return run.final_model().eval()


@pytest.mark.slow
def test_the_anti_induction_head_is_the_one_backward_copying_uses(backward_copier, tmp_path):
    """On a model whose backward-copy circuit is known, the headline anti-induction head is the head
    the patching shows the copy depends on: zeroing it alone, or removing the anti-induction edges,
    breaks every copy; and the heads table's verdict agrees with the patching table's. (The old
    score, attention to the token before the occurrence, named a head of 0.10 there.)"""
    import polars as pl

    from lengthgen.mechanism.heads import head_scores
    from lengthgen.mechanism.tables import (
        heads_summary,
        heads_table,
        heads_verdicts,
        mechanism_pairs,
        patching_table,
        patching_verdicts,
    )

    model = backward_copier
    prompts = trained_prompts(SCRATCH_LAYOUT, 5, "backward", 50, 0, 16)
    scores = head_scores(model, prompts)
    (headline,) = top_heads(scores["anti_induction"], 1)
    assert scores["anti_induction"][headline] > 0.9
    assert scores["before_occurrence"][headline] < 0.05  # the old score did not see this head at all
    removed = patching(model, prompts, scores, ablate=1)
    assert removed["none"]["accuracy"] >= 0.95 and removed["remove_induction"]["accuracy"] >= 0.95
    assert removed["ablate_anti_induction_heads"]["accuracy"] <= 0.05
    assert removed["remove_anti_induction"]["accuracy"] <= 0.05

    heads, conditions = analyse(model, lambda n, d, s: trained_prompts(SCRATCH_LAYOUT, n, d, 50, s, 16), [5, 7], [0], 1)
    heads.with_columns(pl.lit("scratch-UB").alias("model")).write_parquet(tmp_path / "heads.parquet")
    conditions.with_columns(pl.lit("scratch-UB").alias("model")).write_parquet(tmp_path / "patching.parquet")
    summary = heads_summary(heads_table([tmp_path / "heads.parquet"]))
    assert summary.row(0, named=True)["anti_induction_head"] == f"{headline[0]}.{headline[1]}"
    shown = (patching_table([tmp_path / "patching.parquet"]).group_by(["model", "direction", "condition"])
             .agg(pl.col("accuracy").mean(), pl.col("loss_change").mean()))
    pairs = mechanism_pairs([tmp_path / "heads.parquet"], [tmp_path / "patching.parquet"])
    (heads_line,), (patching_line,) = heads_verdicts(summary, pairs), patching_verdicts(shown, pairs)
    assert ": backward copies by anti-induction; anti-induction above induction (p " in heads_line
    assert ": backward copies by anti-induction; removing anti-induction costs backward copies more (p " in patching_line
    backward = pairs.filter(pl.col("first") == "remove anti-induction, backward copies").row(0, named=True)
    assert backward["significant"] and backward["pairs"] == 100 and backward["first_low"] > backward["second_high"]


def test_both_verdicts_speak_of_what_carries_the_copies_a_model_makes():
    """A model that copies backward by position (attention before the occurrence, copies surviving
    the removal of the anti-induction edges) is called so by both tables; one that copies neither
    direction gets the paper's comparison, induction against anti-induction, in both."""
    import polars as pl

    from lengthgen.mechanism.tables import heads_verdicts, patching_verdicts

    summary = pl.DataFrame([
        {"model": "positional", "best_induction": 0.12, "induction_head": "3.1", "best_anti_induction": 0.25,
         "anti_induction_head": "3.2", "best_before_occurrence": 0.77, "forward_copy_accuracy": 0.18,
         "backward_copy_accuracy": 1.0},
        {"model": "small", "best_induction": 0.27, "induction_head": "2.3", "best_anti_induction": 0.05,
         "anti_induction_head": "2.2", "best_before_occurrence": 0.06, "forward_copy_accuracy": 0.11,
         "backward_copy_accuracy": 0.03}])
    shown = pl.DataFrame([{"model": m, "direction": d, "condition": c, "accuracy": a, "loss_change": cost}
                          for m, d, c, a, cost in [
                              ("positional", "forward", "none", 0.0, 0.0),
                              ("positional", "forward", "remove_induction", 0.0, 2.8),
                              ("positional", "backward", "none", 1.0, 0.0),
                              ("positional", "backward", "remove_anti_induction", 1.0, 0.001),
                              ("small", "forward", "none", 0.0, 0.0), ("small", "forward", "remove_induction", 0.0, 0.9),
                              ("small", "backward", "none", 0.0, 0.0),
                              ("small", "backward", "remove_anti_induction", 0.0, 0.04)]])
    def compared(model, measure, first, first_value, first_low, second_value, second_low, p, difference, verdict):
        return {"model": model, "measure": measure, "first": first, "first_value": first_value, "first_low": first_low,
                "first_high": first_value + 0.05, "second_value": second_value, "second_low": second_low,
                "second_high": second_value + 0.05, "p": p, "significant": p < 0.05, "difference": difference,
                "verdict": verdict}

    pairs = pl.DataFrame([
        compared("positional", "best head score", "induction head 3.1", 0.12, 0.10, 0.25, 0.21, 0.001, -0.13,
                 "anti-induction above induction (p = 0.001)"),
        compared("positional", "loss change", "remove induction, forward copies", 2.8, 2.5, 0.001, -0.01, 1e-6, 2.8,
                 "removing induction costs forward copies more (p = 1e-06)"),
        compared("positional", "loss", "remove induction, forward copies", 2.8, 2.5, 0.0, 0.0, 1e-6, 2.8,
                 "raises the loss (p = 1e-06)"),
        compared("positional", "loss", "remove anti-induction, backward copies", 0.001, -0.01, 0.0, 0.0, 0.6, 0.001,
                 "not distinguishable from noise (p = 0.6)"),
        compared("small", "best head score", "induction head 2.3", 0.27, 0.22, 0.05, 0.03, 1e-4, 0.22,
                 "induction above anti-induction (p = 0.0001)"),
        compared("small", "loss change", "remove induction, forward copies", 0.9, 0.7, 0.04, 0.0, 1e-4, 0.86,
                 "removing induction costs forward copies more (p = 0.0001)"),
        compared("small", "loss", "remove induction, forward copies", 0.9, 0.7, 0.0, 0.0, 1e-4, 0.9, "raises the loss"),
        compared("small", "loss", "remove anti-induction, backward copies", 0.04, 0.0, 0.0, 0.0, 0.01, 0.04,
                 "raises the loss")])
    heads, patching = heads_verdicts(summary, pairs), patching_verdicts(shown, pairs)
    assert heads[0].endswith("backward copies not by anti-induction; anti-induction above induction (p = 0.001) "
                             "(by position: before-occurrence 0.77)")
    assert patching[0].endswith(": backward copies not by anti-induction; removing induction costs forward copies "
                                "more (p = 1e-06)")
    assert heads[1].endswith(": induction above anti-induction (p = 0.0001)")
    assert patching[1].endswith(": removing induction costs forward copies more (p = 0.0001)")
    # The same comparison without the paired test's support is noise in both tables, never a finding.
    noise = pairs.with_columns(pl.when(pl.col("model") == "small").then(pl.lit("not distinguishable from noise (p = 0.3)"))
                               .otherwise(pl.col("verdict")).alias("verdict"))
    assert heads_verdicts(summary, noise)[1].endswith(": not distinguishable from noise (p = 0.3)")
    assert patching_verdicts(shown, noise)[1].endswith(": not distinguishable from noise (p = 0.3)")


def test_the_patching_tables_loss_change_is_each_conditions_loss_over_the_unpatched_one(tmp_path):
    """loss_change: a condition's loss (mean over seeds) minus the unpatched loss of the same model,
    direction and length; its interval over prompts pairs each prompt with its own unpatched loss."""
    import polars as pl

    from lengthgen.mechanism.tables import patching_table

    def measured(direction, seed, condition, losses, correct):
        return {"model": "m", "direction": direction, "length": 3, "seed": seed, "condition": condition,
                "accuracy": sum(correct) / len(correct), "loss": sum(losses) / len(losses), "correct": correct,
                "losses": losses}

    pl.DataFrame([
        measured("forward", 0, "none", [1.0, 1.5], [True, True]),
        measured("forward", 0, "remove_induction", [1.75, 2.25], [True, False]),
        measured("forward", 1, "none", [2.0, 0.5], [True, False]),
        measured("forward", 1, "remove_induction", [2.75, 1.25], [False, False]),
        measured("backward", 0, "none", [0.5, 0.5], [True, True]),  # another direction: its own baseline
        measured("backward", 0, "remove_induction", [0.25, 0.25], [True, True]),
    ]).write_parquet(tmp_path / "patching.parquet")
    table = patching_table([tmp_path / "patching.parquet"])
    rows = {(r["direction"], r["condition"]): r for r in table.iter_rows(named=True)}
    removed = rows[("forward", "remove_induction")]
    # losses: unpatched (1.25 + 1.25) / 2 = 1.25, removed (2.0 + 2.0) / 2 = 2.0; every prompt's own change is 0.75
    assert removed["loss"] == pytest.approx(2.0) and removed["loss_change"] == pytest.approx(0.75)
    assert (removed["loss_change_low"], removed["loss_change_high"]) == pytest.approx((0.75, 0.75))
    assert removed["accuracy_change"] == pytest.approx(0.25 - 0.75) and removed["seeds"] == 2
    assert rows[("forward", "none")]["loss_change"] == 0.0
    assert rows[("backward", "remove_induction")]["loss_change"] == pytest.approx(-0.25)
    assert (rows[("backward", "remove_induction")]["loss_change_low"],
            rows[("backward", "remove_induction")]["loss_change_high"]) == pytest.approx((-0.25, -0.25))
