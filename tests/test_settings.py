"""Typed settings: every planner returns its stage's frozen settings, immutable all the way down,
which give back the same slice (so fingerprints and provenance do not change); an unknown or
missing key is an error naming it."""

import dataclasses
import json
import pickle
from itertools import product

import pytest
import yaml

from conftest import REPO
from lengthgen.config import ConfigError, pretrain_section, validate_config
from lengthgen.plan import corpora, data, finetune, icl, mechanism, realistic, scratch
from lengthgen.realistic import TASKS as REALISTIC_TASKS
from lengthgen.records.provenance import canonical_json
from lengthgen.settings import (
    CorpusStatisticsSettings,
    DataFileSettings,
    FinetuneEvalSettings,
    FinetuneTaskSettings,
    IclPredictSettings,
    ManipulationSettings,
    MechanismSettings,
    PretrainSettings,
    RealisticPredictSettings,
    ScratchEvalSettings,
    ScratchRunSettings,
    TrainSettings,
)

PRESETS = ("config.yaml", "configs/smoke.yaml", "configs/paper.yaml")


def load(path):
    raw = yaml.safe_load((REPO / path).read_text()) or {}
    return validate_config(raw, check_availability=False, search=(".", str(REPO)))


def planned_slices(config):
    """(settings class, slice) of every job of the config's grid."""
    for encoding, task, seed in product(("tokens", "chars", "finetune"), config["tasks"], config["seeds"]):
        yield DataFileSettings, data.data_params(config, encoding, task, "3-5", seed)
    if config["scratch"]["enabled"]:
        for task, pe in product(config["tasks"], config["scratch"]["positional_encodings"]):
            yield ScratchRunSettings, scratch.train_params(config, task, pe)
            yield ScratchEvalSettings, scratch.eval_params(config, task)
    for model, task in product(config["finetune"]["models"], config["tasks"]):
        yield FinetuneTaskSettings, finetune.train_params(config, model, task)
        yield FinetuneEvalSettings, finetune.eval_params(config, task)
    for model, family in product(config["icl"]["models"], ("retrieval", "copying")):
        yield IclPredictSettings, icl.predict_params(config, model, family)
    for model, task in product(config["realistic"]["models"], REALISTIC_TASKS):
        yield RealisticPredictSettings, realistic.params(config, model, task)
    for name in mechanism.subjects(config):
        yield MechanismSettings, mechanism.params(config, name)
    yield CorpusStatisticsSettings, corpora.statistics_params(config)
    for name in corpora.models(config):
        yield ManipulationSettings, corpora.manipulation_params(config, name)
    for corpus in ("natural", "reversed", "balanced", "forward-only"):
        yield PretrainSettings, pretrain_section(config, "gpt2", corpus, 1)


def test_every_planner_returns_its_stages_typed_settings_which_cross_to_the_script_unchanged():
    """A job's settings leave the planner typed, cross Snakemake as plain JSON (`as_config`, the
    rule's params) and are rebuilt by the script with one call: the same settings."""
    kinds = set()
    for preset in PRESETS:
        for cls, planned in planned_slices(load(preset)):
            assert isinstance(planned, cls), (preset, cls.__name__)
            params = json.loads(canonical_json(planned.as_config()))
            assert cls.from_config(params) == planned, (preset, cls.__name__)
            kinds.add(cls)
    assert kinds == {DataFileSettings, ScratchRunSettings, ScratchEvalSettings, FinetuneTaskSettings,
                     FinetuneEvalSettings, MechanismSettings, PretrainSettings, IclPredictSettings,
                     RealisticPredictSettings, CorpusStatisticsSettings, ManipulationSettings}


def test_settings_are_immutable_all_the_way_down_and_the_training_block_typed():
    config = load("config.yaml")
    settings = finetune.train_params(config, "embedded", "UF")
    assert isinstance(settings.training, TrainSettings)
    assert settings.training.lr == config["finetune"]["training"]["lr"]  # the config's key, same name, no dict between
    with pytest.raises(TypeError):
        settings.data["alphabet_size"] = 3  # a read-only mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.training.lr = 1.0
    shots = icl.predict_params(config, "smollm2", "copying")
    assert shots.shots == config["icl"]["shots"] and isinstance(shots.files, tuple)
    with pytest.raises(TypeError):
        shots.files[0]["data"] = "elsewhere"
    assert isinstance(shots.as_config()["files"], list) and isinstance(shots.as_config()["files"][0], dict)
    assert pickle.loads(pickle.dumps(shots)) == shots  # a job's settings cross to worker processes
    assert scratch.train_params(config, "UF", "rope").training.keep is None  # the stage chooses what is kept
    assert scratch.train_params(config, "UF", "rope").training.keeping("last").keep == "last"


def test_settings_are_frozen_and_nested_settings_typed():
    settings = pretrain_section(load("config.yaml"), "gpt2", "balanced")
    assert settings.insertion.share == 0.25 and settings.corpus == "balanced"
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 1
    assert pretrain_section(load("config.yaml"), "gpt2", "natural").insertion is None


def test_an_unknown_or_missing_key_is_an_error_naming_it():
    section = pretrain_section(load("config.yaml"), "gpt2", "natural").as_config()
    with pytest.raises(ConfigError, match=r"PretrainSettings: unknown key\(s\) \['contxt'\], missing \['context'\]"):
        PretrainSettings.from_config({**{k: v for k, v in section.items() if k != "context"}, "contxt": 256})
    scratch_slice = scratch.train_params(load("config.yaml"), "UF", "nope").as_config()
    with pytest.raises(ConfigError, match=r"EosRule: unknown key\(s\) none, missing \['score'\]"):
        ScratchRunSettings.from_config({**scratch_slice, "eos": {"train": True}})
