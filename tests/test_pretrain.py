"""The embedded-model pieces: a deterministic corpus, and a pretrain run that saves a loadable fp16
model with the induction probe in its history."""

import numpy as np
import pytest
import torch

from lengthgen.models.char_tokenizer import DEFAULT_CHARACTERS
from lengthgen.pretrain.corpus import build_corpus, corpus_hash
from lengthgen.settings import PretrainSettings


def test_the_corpus_is_the_help_topics_then_the_library_source_cut_at_the_limit():
    """The corpus a pretrained model learns from: the help topics in sorted order, then the standard
    library's source without its tests, only the tokenizer's characters, cut at exactly the limit
    (a shorter corpus is the start of a longer one); its hash is the sha256 the provenance records."""
    import sysconfig
    from pathlib import Path
    from pydoc_data.topics import topics

    from lengthgen.pretrain.corpus import stdlib_files

    text = build_corpus(200_000)
    assert len(text) == 200_000 and build_corpus(300_000).startswith(text)
    assert text.startswith(topics[sorted(topics)[0]].strip()[:200])
    assert set(text) <= set(DEFAULT_CHARACTERS)
    assert set(build_corpus(20_000, characters="abcde \n")) == set("abcde \n")  # every other character dropped
    assert "def " in build_corpus(None)[-2_000_000:]  # standard-library source follows the help topics
    library = Path(sysconfig.get_paths()["stdlib"])
    assert not any({"test", "tests", "idle_test"} & set(p.relative_to(library).parts) for p in stdlib_files())
    assert corpus_hash("abc") == "ba7816bf8f01cfea"  # sha256("abc"), first 16 hex digits


@pytest.mark.slow
def test_pretrain_saves_a_loadable_fp16_model(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lengthgen.mechanism.probe import induction_probe
    from lengthgen.pretrain.train import pretrain

    section = {"architecture": "gpt2", "corpus": "natural", "seed": 0, "corpus_chars": 60_000, "validation_fraction": 0.05,
               "context": 96, "save_fp16": True, "probe_length": 3, "model": {"layers": 1, "heads": 2, "d_model": 16},
               "training": {"lr": 1e-3, "batch_size": 4, "max_steps": 6, "warmup_steps": 1, "eval_every": 3,
                            "checkpoint_every": 3, "precision": "fp32", "schedule": "linear", "weight_decay": 0.01,
                            "eval_examples": 8, "eval_batch_size": 4, "length_buckets": 1,
                            "warmup_ratio": None, "max_grad_norm": 1.0, "early_stop": False, "patience": None}}
    summary = pretrain(PretrainSettings.from_config(section), tmp_path / "model", tmp_path / "ckpt", progress=False)
    assert summary["steps"] == 6 and summary["tokens_seen"] == 6 * 4 * 96 and len(summary["corpus_hash"]) == 16
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "model")
    assert model.dtype == torch.float16
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "model")
    assert tokenizer.decode(tokenizer("<bos> a b :", add_special_tokens=False).input_ids) == "<bos> a b :"
    assert [sorted(m) for m in summary["history"]["metrics"]] == [
        ["backward_copy_accuracy", "best_anti_induction", "best_induction", "forward_copy_accuracy"]] * 2
    probe, accuracy = induction_probe(tmp_path / "model", length=3, count=2)
    assert 0 <= accuracy["forward_copy_accuracy"] <= 1
    assert probe.height == 2 * 2 and np.all((probe["induction"].to_numpy() >= 0) & (probe["induction"].to_numpy() <= 1))


def test_the_probe_summary_is_the_best_head_of_the_probe_table():
    """The summary kept at every evaluation (computed without polars, as on the GPU machine) reads
    the same heads as the table the workflow writes."""
    from lengthgen.mechanism.probe import probe_heads, probe_summary
    from tiny_models import TOKENIZER as tokenizer
    from tiny_models import tiny_model

    model = tiny_model(layers=2, positions=128, initializer_range=0.5)
    table, accuracy = probe_heads(model, tokenizer, 3)
    summary = probe_summary(model, tokenizer, 3)
    forward, backward = (table.filter(table["direction"] == d) for d in ("forward", "backward"))
    assert table.height == 2 * 2 * 2
    assert summary["best_induction"] == forward["induction"].max()
    assert summary["best_anti_induction"] == backward["anti_induction"].max()
    assert summary["best_induction"] != backward["induction"].max()  # each score from its own direction
    assert {k: summary[k] for k in accuracy} == accuracy


def test_the_corpora_preset_plans_every_corpus_under_every_pretraining_seed(tmp_path):
    """configs/pretrain.yaml with configs/corpora.yaml or configs/dose.yaml: one pretrain job per corpus
    variant and pretraining seed, every variant in one of them, each in its own folder (a wildcard
    that knew only some corpora planned none of the others)."""
    import yaml

    from conftest import REPO
    from lengthgen.pretrain.variants import CORPORA
    from snakemake_runner import planned_jobs

    named = set()
    for preset in ("corpora.yaml", "dose.yaml"):  # the arms, and the dose-response's
        config = yaml.safe_load((REPO / "configs" / "pretrain.yaml").read_text())
        corpora = yaml.safe_load((REPO / "configs" / preset).read_text())
        config["pretrain"].update(corpora["pretrain"])
        (workdir := tmp_path / preset.removesuffix(".yaml")).mkdir()
        planned = {(w["corpus"], w["seed"]) for rule, w in planned_jobs(workdir, config) if rule == "pretrain"}
        assert planned == {(corpus, str(seed)) for corpus in corpora["pretrain"]["corpora"]
                           for seed in corpora["pretrain"]["seeds"]}
        named |= set(corpora["pretrain"]["corpora"])
    assert named == set(CORPORA)
