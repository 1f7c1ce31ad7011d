"""Planning from a config, without Snakemake: which files the grid needs, what each job depends on
(and nothing else, so other settings never rerun it), and targets checked against the config."""

import pytest
import yaml

from conftest import REPO
from lengthgen.config import validate_config
from lengthgen.plan import data, finetune, icl, mechanism, realistic, scratch
from lengthgen.plan.grid import UnknownTarget, stage_model
from shipped import SHIPPED_CORPORA


def config_of(path="config.yaml", **changes):
    raw = yaml.safe_load((REPO / path).read_text()) or {}
    raw.update(changes)
    return validate_config(raw, check_availability=False, search=(".", str(REPO)))


@pytest.fixture(scope="module")
def default():
    return config_of()


def test_the_default_grid_needs_each_stage_s_data_once(default):
    files = data.data_files(default)
    assert len(files) == len(set(files))
    # from scratch: 3 retrieval and 2 copying bins; in context: one length per family; fine-tuning 3 bins each
    assert sum("/tokens/" in f for f in files) == 6 * 3 + 4 * 2
    assert sum("/chars/" in f for f in files) == 10
    assert sum("/finetune/" in f for f in files) == 10 * 3
    assert "results/data/tokens/UB/26-32/seed0.parquet" in files


def test_a_data_file_depends_on_its_generator_s_settings_only(default):
    params = data.data_params(default, "chars", "UF", "10", "0").as_config()
    assert params == {"task": "UF", "encoding": "chars", "bin": "10", "seed": 0,
                      "examples": default["data"]["chars"]["examples"], "generator": "unique_copy",
                      "settings": default["data"]["chars"]["unique_copy"]}
    changed = config_of(data={**default["data"], "chars": {**default["data"]["chars"],
                                                           "nonunique_copy": {"alphabet_size": 7}}})
    assert data.data_params(changed, "chars", "UF", "10", "0").as_config() == params


def test_a_from_scratch_model_reads_only_its_positional_encoding_s_settings():
    config = config_of(scratch={**config_of()["scratch"], "positional_encodings": ["ape", "rope"]})
    ape, rope = scratch.train_params(config, "UF", "ape").as_config(), scratch.train_params(config, "UF", "rope").as_config()
    assert "max_positions" in ape["model"] and "rope_theta" not in ape["model"]
    assert "rope_theta" in rope["model"] and "max_positions" not in rope["model"]
    assert ape["training"]["schedule"] == "linear" and rope["training"]["schedule"] == "constant"
    # the family override of the default: copying has 4 layers and 2,000 steps, retrieval 4 layers and 6,000
    assert (ape["model"]["layers"], ape["training"]["max_steps"]) == (4, 2000)
    retrieval = scratch.train_params(config, "UR", "ape").as_config()
    assert (retrieval["model"]["layers"], retrieval["training"]["max_steps"]) == (4, 6000)


def test_from_scratch_outputs_and_stacks(default):
    assert scratch.evals(default)[:2] == ["results/scratch/UR/ape/seed0/eval.parquet",
                                          "results/scratch/UL/ape/seed0/eval.parquet"]
    assert len(scratch.eval_inputs(default)) == 6 * 3 + 4 * 2
    assert scratch.stacks(default) == []  # stacking is off by default
    stacked = config_of("configs/smoke.yaml", scratch={**config_of("configs/smoke.yaml")["scratch"], "stack": True})
    groups = scratch.stacks(stacked)
    assert all(len(group) <= 2 for group in groups)
    assert sorted(t for group in groups for t in group) == sorted(stacked["tasks"])
    members = scratch.stack_members(stacked, groups[0], "ape")
    assert {m["checkpoint_dir"] for m in members} == {f"results/checkpoints/scratch/{t}/ape/seed{s}"
                                                       for t in groups[0] for s in stacked["seeds"]}


def test_longer_training_jobs_start_first(default):
    assert scratch.train_cost(default, "UF", "ape") > scratch.train_cost(default, "UR", "ape")


def test_in_context_grid(default):
    assert icl.families(default) == ["retrieval", "copying"]
    assert icl.predictions(default) == ["results/icl/smollm2/retrieval.parquet", "results/icl/smollm2/copying.parquet"]
    files = icl.files(default, "copying", "smollm2")
    assert {f["task"] for f in files} == {"UF", "UB", "NF", "NB"} and {f["variant"] for f in files} == {"bare"}
    params = icl.predict_params(default, "smollm2", "copying").as_config()
    assert params["chat"] is None and set(params["settings"]) == {"UF", "UB", "NF", "NB"}


def test_fine_tuning_is_tested_on_every_bin_of_its_family(default):
    assert finetune.eval_data(default, "UB", 0) == [f"results/data/finetune/UB/{b}/seed0.parquet"
                                                    for b in ("2-12", "13-25", "26-50")]
    assert finetune.eval_params(default, "UR").as_config()["bins"] == ["3-20", "21-40", "41-80"]
    assert len(finetune.evals(default)) == 10
    assert finetune.comparison_enabled(default)
    off = config_of(icl={**default["icl"], "models": []})
    assert finetune.enabled(off) and not finetune.comparison_enabled(off)


def test_mechanism_subjects_and_their_models(default):
    subjects = mechanism.subjects(default)
    assert subjects["model-smollm2"] == ("registry", "smollm2")
    assert subjects["scratch-UF-ape-seed0"] == ("scratch", "UF", "ape", 0)
    model = "results/finetune/embedded/default/UB/seed0/model"
    assert mechanism.trained_model(default, "finetune-embedded-UB-seed0") == model
    assert mechanism.trained_model(default, "model-smollm2") is None
    assert mechanism.registry_model(default, "model-smollm2") == "smollm2"
    assert mechanism.params(default, "scratch-UF-ape-seed0").as_config()["spelling"] == {
        "kind": "scratch", "alphabet": default["data"]["tokens"]["unique_copy"]["alphabet_size"]}
    # a trained subject only where its stage runs
    no_scratch = config_of(scratch={**default["scratch"], "enabled": False})
    assert not any(name.startswith("scratch-") for name in mechanism.subjects(no_scratch))


def test_realistic_jobs_read_only_their_own_task_s_settings(default):
    assert realistic.predictions(default) == [f"results/realistic/smollm2/{t}.parquet"
                                              for t in ("lorem", "revert", "cherrypick")]
    assert realistic.params(default, "smollm2", "revert").as_config()["settings"] == default["realistic"]["git"]
    assert realistic.params(default, "smollm2", "lorem").as_config()["settings"] == default["realistic"]["lorem"]


def test_a_target_the_config_does_not_make_stops_with_the_valid_names(default):
    with pytest.raises(UnknownTarget, match=r"no mechanism subject 'model-smol' in this config; valid: model-smollm2"):
        mechanism.subject(default, "model-smol")
    with pytest.raises(UnknownTarget, match=r"no icl model 'embedded' in this config; valid: smollm2$"):
        stage_model(default, "icl", "embedded")
    assert stage_model(default, "finetune", "embedded") == "embedded"


def test_every_table_a_config_makes_and_what_the_findings_read(default):
    from lengthgen.plan.tables import TABLE_RULES, findings_inputs, findings_params, tables_made

    dose = ["corpus_dose", "corpus_dose_models"]  # configs/dose.yaml's models, not the default's
    assert tables_made(default) == [t for t in TABLE_RULES if t not in dose]  # the default runs every stage
    with_dose = config_of(models={"r25": {"path": "example/r25"}},
                          corpora={**default["corpora"], "reversed-25": ["r25"]})
    assert tables_made(with_dose) == list(TABLE_RULES)
    assert list(findings_inputs(default)) == ["scratch_pairs", "icl_pairs", "finetune_pairs", "realistic_pairs",
                                              "mechanism_pairs", "corpus_pairs"]
    smoke = config_of("configs/smoke.yaml")  # every stage but the corpora experiment
    corpora = [t for t in TABLE_RULES if t.startswith("corpus_")]
    assert tables_made(smoke) == [t for t in TABLE_RULES if t not in corpora]
    off = config_of("configs/smoke.yaml", icl={"models": []}, finetune={"models": []})
    assert "icl" not in tables_made(off) and "comparison" not in tables_made(off)
    assert findings_params(off)["tables"] == list(findings_inputs(off))


def test_a_model_job_asks_for_at_least_its_rule_s_memory_and_time():
    from lengthgen.plan.models import MODEL_JOBS, model_job

    config = {"models": {"big": {"gpus": 4}, "small": {"gpus": 1}}}
    requests = {"big": {"mem_mb": 200_000, "runtime": None}, "small": {"mem_mb": None, "runtime": None}}
    assert model_job(config, requests, "icl_predict", "big", "mem_mb") == 200_000
    assert model_job(config, requests, "icl_predict", "big", "runtime") == MODEL_JOBS["icl_predict"]["runtime"]
    assert model_job(config, requests, "icl_predict", "big", "gpu") == 4
    assert model_job(config, requests, "gguf_convert", "big", "gpu") == 0  # dequantised on the CPU
    assert model_job(config, requests, "mechanism", None, "gpu") == 1  # a model this run trained


def corpora_config(**corpora):
    hub = {name: {"path": f"example/{name}"} for name in ("nat", "bal", "rev")}
    return config_of(models=hub, corpora={"natural": ["nat"], "balanced": ["bal"], "reversed": ["rev"], **corpora})


def test_the_corpora_experiment_plans_its_own_files_and_a_short_fine_tuning(default):
    from lengthgen.plan import corpora

    off = config_of(corpora={})
    assert not corpora.enabled(off) and corpora.heads(off) == [] and corpora.data_files(off) == []
    assert corpora.roles(default) == {
        corpus: tuple(f"corpus_{corpus}_seed{seed}" for c, seed in SHIPPED_CORPORA if c == corpus)
        for corpus in dict.fromkeys(c for c, _ in SHIPPED_CORPORA)}
    config = corpora_config()
    assert corpora.roles(config) == {"natural": ("nat",), "balanced": ("bal",), "reversed": ("rev",)}
    assert corpora.manipulations(config) == [f"results/corpora/manipulation/{m}.parquet" for m in ("nat", "bal", "rev")]
    assert corpora.heads(config) == [f"results/corpora/mechanism/{m}/heads.parquet" for m in ("nat", "bal", "rev")]
    assert corpora.icl_predictions(config) == [f"results/corpora/icl/{m}/copying.parquet" for m in ("nat", "bal", "rev")]
    assert len(corpora.finetune_evals(config)) == 3 * 4  # UR, UL, UF, UB for each model, one seed
    params = corpora.finetune_params(config, "bal", "UB").as_config()
    stage = finetune.train_params(config, "bal", "UB").as_config()
    # only the steps and the evaluations (the learning curve's points) differ
    assert params["training"] == {**stage["training"], "max_steps": 300, "eval_every": 50}
    assert corpora.finetune_histories(config)[0] == corpora.finetune_evals(config)[0].replace("eval.", "training.")
    assert {k: v for k, v in params.items() if k != "training"} == {k: v for k, v in stage.items() if k != "training"}
    mechanism_params = corpora.mechanism_params(config, "rev").as_config()
    assert mechanism_params["subject"] == "rev" and mechanism_params["spelling"] == {
        "kind": "registry", "model": config["models"]["rev"]}
    # its data files are in the grid even where no stage of the paper's needs them
    alone = corpora_config()
    alone = config_of(models=alone["models"], corpora=alone["corpora"], icl={**alone["icl"], "models": []},
                      finetune={**{k: v for k, v in alone["finetune"].items() if k != "protocols"}, "models": []})
    files = data.data_files(alone)
    assert "results/data/chars/UB/10/seed0.parquet" in files and "results/data/finetune/UL/41-80/seed0.parquet" in files
    assert "results/data/chars/UR/10/seed0.parquet" not in files  # in context, only copying is compared
    assert corpora.finetune_evals(corpora_config(finetune={"max_steps": 0, "tasks": ["UB"]})) == []


def test_a_corpora_target_of_another_model_or_one_model_for_two_corpora_is_refused():
    from lengthgen.config import ConfigError
    from lengthgen.plan import corpora

    with pytest.raises(UnknownTarget, match="no corpora model 'smollm2' in this config; valid: nat, bal, rev"):
        corpora.finetune_params(corpora_config(), "smollm2", "UR")
    with pytest.raises(ConfigError, match=r"corpora.reversed\[0\]: 'nat' is already corpora.natural\[0\]"):
        corpora_config(reversed=["nat"])
    with pytest.raises(ConfigError, match=r"corpora.balanced\[1\]: 'nat' is already corpora.natural\[0\]"):
        corpora_config(balanced=["bal", "nat"])  # a seed of one arm named as another's
    with pytest.raises(ConfigError, match="corpora.manipulation.context: 60 cannot hold a passage of 32 characters"):
        corpora_config(manipulation={"context": 60})
