"""The pretrained-model stages (in context, fine-tuning, the comparison) through Snakemake with a
tiny local model; a hub id while offline fails first."""

import copy
import shutil

import polars as pl
import pytest

from snakemake_runner import planned_jobs, smoke_config, snakemake
from tiny_models import save_tiny_model

pytestmark = pytest.mark.slow


def icl_config(model_path) -> dict:
    config = smoke_config()
    config["scratch"]["enabled"] = False
    config["models"] = {"tiny": {"path": str(model_path)}}
    config["icl"] = {"models": ["tiny"], "lengths": {"retrieval": [8], "copying": [6]},
                     "variants": {"retrieval": ["bare", "formal"], "copying": ["hint"]}, "batch_size": 4}
    return config


def every_stage_config(model_path) -> dict:
    """`icl_config` with from scratch, fine-tuning and the mechanism on the tiny model too: the
    comparison's three experiments."""
    config = icl_config(model_path)
    config["scratch"]["enabled"] = True
    config["finetune"] = {"models": ["tiny"], "train_lengths": {"retrieval": "5-8", "copying": "2-5"},
                          "test_bins": {"retrieval": ["5-8", "9-10"], "copying": ["2-5", "6-7"]},
                          "training": {"lr": 1e-3, "batch_size": 4, "max_steps": 6, "eval_every": 3,
                                       "checkpoint_every": 3, "eval_examples": 8}}
    config["mechanism"] = {"models": ["tiny"], "trained": {"scratch": ["UF"], "finetune": ["UF"]}, "lengths": [3],
                           "instances": 4, "shots": 2}
    return config


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished project of every stage on a tiny model that lives inside it (at a path relative
    to the project, so a copy reads its own), run once for this file's tests; each test that
    changes it works on a copy (`project_copy`)."""
    project = tmp_path_factory.mktemp("every_stage")
    save_tiny_model(project / "tiny")
    config = every_stage_config("tiny")
    run = snakemake(project, config)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return project, config


def project_copy(finished, tmp_path):
    """A copy of the finished project, file times kept (as rsync -a), and of its config."""
    project, config = finished
    return shutil.copytree(project, tmp_path / "project", symlinks=True), copy.deepcopy(config)


def retrain_in_place(weights):
    from safetensors.torch import load_file, save_file

    tensors = load_file(weights)
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 0.01
    save_file(tensors, weights, metadata={"format": "pt"})


def test_icl_stage_end_to_end(finished, tmp_path):
    project, config = project_copy(finished, tmp_path)
    table = pl.read_parquet(project / "results" / "tables" / "icl.parquet")
    assert set(table.get_column("task")) == set(config["tasks"])
    assert set(table.get_column("variant")) == {"bare", "formal", "hint", "all"}
    assert table.get_column("accuracy").is_between(0, 1).all()
    ul = table.filter((pl.col("task") == "UL") & (pl.col("variant") == "all")).row(0, named=True)
    assert ul["mirror"] == "UR" and ul["bin"] == "8"
    family = pl.read_parquet(project / "results" / "icl" / "tiny" / "retrieval.parquet")  # one job per family
    assert set(family.get_column("task")) == {"UR", "UL", "NRLast"}
    predictions = family.filter((pl.col("task") == "UL") & (pl.col("variant") == "formal"))
    assert predictions.height == 10 and predictions.get_column("prompt")[0].startswith("Given x_1")
    assert "right_neighbour_share" in (project / "results" / "tables" / "icl.md").read_text()
    assert not predictions.get_column("from_cache").any()

    # The tasks are a set: listed in another order, nothing is planned (not the predictions, not a table).
    reordered = {**config, "tasks": config["tasks"][::-1]}
    assert planned_jobs(project, reordered) == []

    # Rewritten with the same bytes: Snakemake's checksum sees nothing changed.
    weights = project / "tiny" / "model.safetensors"
    weights.write_bytes(weights.read_bytes())
    assert planned_jobs(project, config) == []
    # Asking a cluster for more memory and time is not a change of the model.
    config["models"]["tiny"].update(mem_mb=123456, runtime=999)
    assert planned_jobs(project, config) == []
    # New weights in place (as `make embedded` writes them): everything that read the model is planned again.
    original = weights.read_bytes()
    retrain_in_place(weights)
    jobs = planned_jobs(project, config)
    assert {w["family"] for rule, w in jobs if rule == "icl_predict"} == {"retrieval", "copying"}
    weights.write_bytes(original)

    # Predictions lost (or a new workflow directory sharing the cache): nothing is decoded again.
    shutil.rmtree(project / "results" / "icl")
    predicted = [f"results/icl/tiny/{family}.parquet" for family in ("retrieval", "copying")]
    run = snakemake(project, config, *predicted)
    assert run.returncode == 0, run.stderr[-3000:]
    again = pl.read_parquet(project / "results" / "icl" / "tiny" / "retrieval.parquet")
    assert again.get_column("from_cache").all()
    assert again.get_column("prediction").to_list() == family.get_column("prediction").to_list()


def test_one_task_without_its_mirror_runs_through_and_says_there_is_nothing_to_compare(tmp_path):
    save_tiny_model(tmp_path / "tiny")
    config = icl_config(tmp_path / "tiny")
    config["tasks"] = ["UF"]
    config["icl"]["variants"] = {"copying": ["bare"]}
    run = snakemake(tmp_path, config)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tables = tmp_path / "results" / "tables"
    assert set(pl.read_parquet(tables / "icl.parquet")["task"]) == {"UF"}
    assert "nothing to compare: the config's tasks hold no mirror pair" in (tables / "icl.md").read_text()
    findings = pl.read_parquet(tables / "findings.parquet").filter(pl.col("finding") == 2)
    assert findings.height and set(findings["verdict"]) == {"not run"}
    assert set(findings["note"]) == {"the stage compared nothing: the config's tasks hold no pair"}


def test_hub_model_while_offline_fails_before_any_job(tmp_path):
    config = icl_config("meta-llama/Llama-3.1-8B")
    run = snakemake(tmp_path, config)
    assert run.returncode != 0
    assert "config key models.tiny: model 'tiny' (meta-llama/Llama-3.1-8B)" in run.stdout + run.stderr
    assert not (tmp_path / "results").exists()
    # A dry run only plans: it previews a cluster grid on a machine without the weights.
    assert snakemake(tmp_path, config, "--dry-run").returncode == 0


def test_unknown_model_name(tmp_path):
    config = icl_config("x")
    config["icl"]["models"] = ["tiny", "llama"]
    run = snakemake(tmp_path, config)
    assert run.returncode != 0
    assert "config key icl.models[1]: 'llama' is not in the model registry" in run.stdout + run.stderr
    assert not (tmp_path / "results").exists()  # refused before any job ran


def test_finetune_stage_and_the_comparison(finished, tmp_path):
    project, config = project_copy(finished, tmp_path)
    tables = project / "results" / "tables"
    finetune = pl.read_parquet(tables / "finetune.parquet")
    assert finetune.height == len(config["tasks"]) * 2 and set(finetune.get_column("system")) == {"tiny"}
    assert {"config_hash", "code_version", "device", "seed"} <= set(finetune.columns)
    assert "Fine-tuned: teacher-forced exact match" in (tables / "finetune.md").read_text()
    comparison = pl.read_parquet(tables / "comparison.parquet")
    assert set(comparison.get_column("experiment")) == {"from scratch", "in context", "in context, teacher-forced",
                                                        "fine-tuned"}
    assert set(comparison.filter(pl.col("experiment") == "fine-tuned").get_column("bin")) == {"9-10", "6-7"}
    assert "UL / UR" in (tables / "comparison.md").read_text()
    heads = pl.read_parquet(tables / "heads.parquet")
    assert set(heads.get_column("model")) == {"model-tiny", "scratch-UF-ape-seed0", "finetune-tiny-UF-seed0"}
    patching = pl.read_parquet(tables / "patching.parquet")
    assert set(patching.get_column("condition")) >= {"none", "remove_induction", "remove_anti_induction"}
    assert "induction" in (tables / "heads.md").read_text()
    # Every stage but the realistic tasks ran: each of their findings has a verdict.
    findings = pl.read_parquet(tables / "findings.parquet")
    judged = findings.filter(pl.col("verdict") != "not run")
    assert set(judged["finding"]) == {1, 2, 3, 6} and set(judged["system"]) == {"ape", "tiny"}
    assert set(findings.filter(pl.col("finding").is_in([4, 5]))["verdict"]) == {"not run"}
    from transformers import AutoModelForCausalLM
    tuned = project / "results" / "finetune" / "tiny" / "default" / "UF" / "seed0" / "model"
    assert AutoModelForCausalLM.from_pretrained(tuned).config.model_type == "gpt2"
    assert planned_jobs(project, config) == []
    # The report's captions show the settings that ran, the schema's defaults the config leaves out included
    # (Snakemake's own `config` is the one given, untouched): 5 demonstrations, the top 10 heads zeroed.
    report = snakemake(project, config, "--report", "results/report.html")
    assert report.returncode == 0, report.stderr[-2000:]
    html = (project / "results" / "report.html").read_text()
    assert "5 demonstrations" in html and "top 10 heads by each score zeroed" in html

    # A fine-tuned model made again (Snakemake stamps a directory output when its job ends): its own
    # evaluation is planned again, and the tables that follow from it; nothing else.
    (tuned / ".snakemake_timestamp").touch()
    jobs = planned_jobs(project, config)
    assert [w for rule, w in jobs if rule == "finetune_eval"] == [
        {"model": "tiny", "protocol": "default", "task": "UF", "seed": "0"}]
    assert [w for rule, w in jobs if rule == "mechanism"] == [{"subject": "finetune-tiny-UF-seed0"}]
    assert {rule for rule, _ in jobs} == {"finetune_eval", "finetune_table", "finetune_pairs", "finetune_places",
                                          "comparison_table", "figure_finetune", "figure_comparison", "mechanism",
                                          "heads_table", "patching_table", "mechanism_pairs", "findings", "figure_mechanism",
                                          "finetune_robustness",
                                          "tables_index", "all"}
    # A second protocol: its own models (a grid axis), none of the default's again.
    with_protocol = copy.deepcopy(config)
    with_protocol["finetune"]["protocols"] = {"default": {}, "from-random": {"init": "random"}}
    jobs = planned_jobs(project, with_protocol)
    trained = [w for rule, w in jobs if rule == "finetune_train"]
    assert {w["protocol"] for w in trained} == {"from-random"} and len(trained) == len(config["tasks"])
    assert not {rule for rule, _ in jobs} & {"scratch_train", "icl_predict", "data"}
    # Other fine-tuning settings: every fine-tuned model, and only what follows from them.
    config["finetune"]["training"]["lr"] = 2e-3
    rules = {rule for rule, _ in planned_jobs(project, config)}
    assert "finetune_train" in rules and not rules & {"scratch_train", "scratch_eval", "icl_predict", "data"}
