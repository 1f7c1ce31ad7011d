"""The shipped embedded model: loads with the Auto classes, has its provenance, and has induction heads."""

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lengthgen.mechanism.probe import induction_probe

EMBEDDED = Path(__file__).resolve().parents[1] / "resources" / "embedded"


def test_shipped_model_loads_in_fp16_with_its_tokenizer():
    model = AutoModelForCausalLM.from_pretrained(EMBEDDED / "gpt2")
    tokenizer = AutoTokenizer.from_pretrained(EMBEDDED / "gpt2")
    assert model.dtype == torch.float16 and model.config.model_type == "gpt2"
    assert tokenizer.decode(tokenizer("<bos> a b : a b <eos>", add_special_tokens=False).input_ids) == \
        "<bos> a b : a b <eos>"


def test_provenance_names_the_corpus_and_the_command():
    record = json.loads((EMBEDDED / "gpt2.provenance.json").read_text())
    assert len(record["corpus_hash"]) == 16 and record["tokens_seen"] > 10**6
    assert record["config"]["architecture"] == "gpt2"
    assert "make embedded" in (EMBEDDED.parent / "README.md").read_text()


@pytest.fixture(scope="module")
def probe():
    return induction_probe(EMBEDDED / "gpt2")


def test_induction_heads_formed_from_natural_text(probe):
    """On the mechanism's copy prompts: the best induction head (forward copies) far above the best
    anti-induction head (backward copies), and forward copies predicted better than backward ones."""
    import polars as pl

    heads, accuracy = probe
    best_induction = heads.filter(pl.col("direction") == "forward").get_column("induction").max()
    best_anti_induction = heads.filter(pl.col("direction") == "backward").get_column("anti_induction").max()
    assert best_induction > 3 * best_anti_induction and best_induction > 0.1
    assert accuracy["forward_copy_accuracy"] > 2 * accuracy["backward_copy_accuracy"]
