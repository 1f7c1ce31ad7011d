"""The corpora experiment through Snakemake, with tiny local models as the corpora's models (two
pretraining seeds for the natural arm): its own manipulation, mechanism, in-context and fine-tuning
files, the repeat statistics and finding 7."""

import polars as pl
import pytest

from snakemake_runner import smoke_config, snakemake
from tiny_models import save_tiny_model

pytestmark = pytest.mark.slow

CORPORA = ("natural", "balanced", "reversed")


def test_the_corpora_experiment_end_to_end(tmp_path):
    config = smoke_config()
    config["scratch"]["enabled"] = False
    config["models"] = {f"tiny_{c}": {"path": str(save_tiny_model(tmp_path / c, initializer_range=0.02 * (i + 1)))}
                        for i, c in enumerate(CORPORA)}
    config["tasks"] = ["UF", "UB"]
    config["icl"] = {"models": [], "lengths": {"retrieval": [8], "copying": [6]}, "batch_size": 4}
    config["finetune"] = {"models": [], "train_lengths": {"retrieval": "5-8", "copying": "2-5"},
                          "test_bins": {"retrieval": ["5-8", "9-10"], "copying": ["2-5", "6-7"]},
                          "training": {"lr": 1e-3, "batch_size": 4, "max_steps": 50, "eval_every": 2,
                                       "checkpoint_every": 2, "eval_examples": 8}}
    config["mechanism"] = {"models": [], "lengths": [3], "instances": 4, "shots": 2}
    config["pretrain"] = {"corpus_chars": 20_000}
    config["models"]["tiny_natural_1"] = {"path": str(save_tiny_model(tmp_path / "natural_1", initializer_range=0.05))}
    config["corpora"] = {**{c: [f"tiny_{c}"] for c in CORPORA}, "finetune": {"max_steps": 2, "tasks": ["UF", "UB"]},
                         "statistics": {"ns": [2, 3], "window": 32}, "manipulation": {"examples": 4, "context": 96}}
    config["corpora"]["natural"].append("tiny_natural_1")
    run = snakemake(tmp_path, config)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = tmp_path / "results"
    # in files of their own: the paper's stages ran no model
    assert not (results / "icl").exists() and not (results / "mechanism").exists()
    models = {f"tiny_{c}" for c in CORPORA} | {"tiny_natural_1"}
    assert {p.name for p in (results / "corpora" / "mechanism").iterdir()} == models
    assert {p.stem for p in (results / "corpora" / "manipulation").glob("*.parquet")} == models
    history = pl.read_parquet(results / "corpora" / "finetune" / "tiny_balanced" / "UB" / "seed0" / "training.parquet")
    assert history["step"].max() == 2  # the short fine-tuning's steps, not the stage's 50
    statistics = pl.read_parquet(results / "tables" / "corpus_statistics.parquet")
    assert statistics["corpus"].to_list() == ["natural"] * 4 + ["balanced"] * 4 + ["reversed"] * 4  # 2 ns x 16, 32
    assert set(statistics["seed"]) == {0} and len(set(statistics["chars"])) == 1  # one pretraining seed, one size
    assert statistics["window"].to_list() == [16, 32] * 6
    pairs = pl.read_parquet(results / "tables" / "corpus_pairs.parquet")
    assert {"balanced vs natural", "natural vs balanced", "reversed"} <= set(pairs["model"])
    assert "Welch t over 1 and 2 pretraining seeds" in set(pairs["test"])  # the natural arm's two models
    findings = pl.read_parquet(results / "tables" / "findings.parquet").filter(pl.col("finding") == 7)
    assert findings.height > 0 and "not run" not in set(findings["verdict"])
    # Every model job of the experiment is benchmarked: `lengthgen runtimes` sees them.
    from lengthgen.results.runtimes import runtimes

    timed = set(runtimes(results / "benchmarks")["rule"])
    assert {"corpus_manipulation", "corpus_mechanism", "corpus_icl", "corpus_finetune_train",
            "corpus_finetune_eval"} <= timed
    # no pretraining summary beside these models: no curves to draw, and no error
    assert not (results / "figures" / "corpora_history.png").exists()
