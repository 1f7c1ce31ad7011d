"""The embedded-model pieces: a deterministic corpus, head scores that read the right positions,
and a pretrain run that saves a loadable fp16 model."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lengthgen.mechanism.heads import head_scores, repeated_sequences
from lengthgen.models.char_tokenizer import DEFAULT_CHARACTERS
from lengthgen.pretrain.corpus import build_corpus, corpus_hash


def test_corpus_is_deterministic_and_clean():
    a, b = build_corpus(200_000), build_corpus(200_000)
    assert a == b and len(a) == 200_000 and corpus_hash(a) == corpus_hash(b)
    assert set(a) <= set(DEFAULT_CHARACTERS)
    assert "def " in build_corpus(None)[-2_000_000:]  # standard-library source follows the help topics


class FixedAttention(torch.nn.Module):
    """Two layers, two heads; each head attends to one fixed offset back."""

    def __init__(self, offsets):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.offsets = offsets

    def forward(self, input_ids, output_attentions=True):
        batch, width = input_ids.shape
        layers = []
        for layer_offsets in self.offsets:
            heads = torch.zeros(batch, len(layer_offsets), width, width)
            for h, back in enumerate(layer_offsets):
                for t in range(width):
                    heads[:, h, t, max(0, t - back)] = 1.0
            layers.append(heads)
        return SimpleNamespace(attentions=tuple(layers))


def test_head_scores_read_the_right_positions():
    segment = 6
    model = FixedAttention([[segment - 1, segment + 1], [1, segment]])
    scores = head_scores(model, repeated_sequences(list(range(20)), segment, 3, prefix=[99]), segment, prefix=1)
    assert scores["induction"].tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert scores["anti_induction"].tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert scores["previous_token"].tolist() == [[0.0, 0.0], [1.0, 0.0]]
    assert scores["duplicate_token"].tolist() == [[0.0, 0.0], [0.0, 1.0]]


def test_repeated_sequences():
    rows = repeated_sequences(list(range(10, 40)), 8, 4, seed=1, prefix=[1])
    assert rows.shape == (4, 17)
    for row in rows.tolist():
        assert row[0] == 1 and row[1:9] == row[9:] and len(set(row[1:9])) == 8


@pytest.mark.slow
def test_pretrain_saves_a_loadable_fp16_model(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lengthgen.pretrain.train import induction_probe, pretrain

    section = {"architecture": "gpt2", "seed": 0, "corpus_chars": 60_000, "validation_fraction": 0.05,
               "context": 64, "save_fp16": True, "probe_segment": 10, "model": {"layers": 1, "heads": 2, "d_model": 16},
               "training": {"lr": 1e-3, "batch_size": 4, "max_steps": 6, "warmup_steps": 1, "eval_every": 3,
                            "checkpoint_every": 3, "precision": "fp32", "schedule": "linear", "weight_decay": 0.01,
                            "eval_examples": 8, "eval_batch_size": 4, "length_buckets": 1,
                            "warmup_ratio": None, "max_grad_norm": 1.0, "early_stop": False}}
    summary = pretrain(section, tmp_path / "model", tmp_path / "ckpt", progress=False)
    assert summary["steps"] == 6 and summary["tokens_seen"] == 6 * 4 * 64 and len(summary["corpus_hash"]) == 16
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "model")
    assert model.dtype == torch.float16
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "model")
    assert tokenizer.decode(tokenizer("<bos> a b :", add_special_tokens=False).input_ids) == "<bos> a b :"
    assert [sorted(m) for m in summary["history"]["metrics"]] == [
        ["best_anti_induction", "best_induction", "first_pass_accuracy", "repeat_accuracy"]] * 2
    probe, accuracy = induction_probe(tmp_path / "model", segment=10, count=2)
    assert 0 <= accuracy["repeat_accuracy"] <= 1
    assert probe.height == 2 and np.all((probe["induction"].to_numpy() >= 0) & (probe["induction"].to_numpy() <= 1))
