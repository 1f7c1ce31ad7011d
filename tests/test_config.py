"""Config validation: each kind of bad config stops with one message naming the key."""

import copy
import subprocess
import sys

import pytest
import yaml

from lengthgen.config import ConfigError, load_schema, model_entry, validate_config
from lengthgen.config.models_check import shipped_models, used_models
from lengthgen.tasks import LengthBin
from snakemake_runner import SNAKEFILE

REPO = __import__("conftest").REPO
SMOKE = yaml.safe_load(open(REPO / "configs" / "smoke.yaml"))
PRESETS = [REPO / "config.yaml", *sorted((REPO / "configs").glob("*.yaml"))]


def with_change(path, value):
    config = copy.deepcopy(SMOKE)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return config


def test_defaults_filled_in():
    config = validate_config({})
    assert config["scratch"]["model"]["d_model"] == 256
    assert config["data"]["chars"]["unique_copy"]["alphabet_size"] == 52
    assert config["data"]["tokens"]["unique_copy"]["alphabet_size"] == 150
    assert config["scratch"]["training"]["schedule"] == {"ape": "linear", "rope": "constant", "nope": "constant"}


def test_validation_does_not_modify_its_input():
    config = copy.deepcopy(SMOKE)
    validate_config(config)
    assert config == SMOKE


@pytest.mark.parametrize("path,value,key,words", [
    ("scratch.modell", {}, "scratch", "'modell' was unexpected"),
    ("data.tokens.unique_copy.alphabet_sise", 3, "data.tokens.unique_copy", "'alphabet_sise' was unexpected"),
    ("scratch.model.layers", "four", "scratch.model.layers", "not of type 'integer'"),
    ("seeds", [0, "one"], "seeds[1]", "not of type 'integer'"),
    ("scratch.model", {"d_model": 30, "heads": 4}, "scratch.model.d_model", "not a multiple of heads"),
    ("tasks", ["UR", "UM"], "tasks[1]", "'UM' is not one of"),
    ("tasks", [], "tasks", "should be non-empty"),
    ("seeds", [], "seeds", "should be non-empty"),
    ("scratch.test_bins", [], "scratch.test_bins", "should be non-empty"),
    ("scratch.positional_encodings", ["alibi"], "scratch.positional_encodings[0]", "'alibi' is not one of"),
    ("scratch.test_bins", ["1-8", "9_12"], "scratch.test_bins[1]", "does not match"),
    ("data.tokens.unique_copy", {"alphabet_size": 10}, "scratch.test_bins[1]", "needs that many distinct symbols"),
    ("scratch.test_bins", ["1-8", "12-9"], "scratch.test_bins[1]", "bad length"),
    ("icl.lengths", {"retrieval": [4], "copying": [6]}, "icl.lengths.retrieval[0]", "too short for task NRLast"),
    ("icl.lengths", {"retrieval": [8], "copying": [60]}, "icl.lengths.copying[0]", "exceeds|distinct symbols"),
    ("data.chars.unique_retrieval", {"alphabet_size": 63}, "icl.lengths.retrieval[0]", "exceeds the 62 symbols"),
    ("scratch.family_overrides", {"retrieval": {"model": {"layerz": 4}}}, "scratch.family_overrides.retrieval.model",
     "'layerz' was unexpected"),
    ("scratch.family_overrides", {"copying": {"training": {"lr": 0}}},
     "scratch.family_overrides.copying.training.lr", "less than or equal to the minimum"),
    ("scratch.family_overrides", {"copying": {"optimizer": {}}}, "scratch.family_overrides.copying",
     "'optimizer' was unexpected"),
    ("finetune.models", ["gpt2"], "finetune.models[0]", "'gpt2' is not in the model registry"),
    # never silently fewer demonstrations than asked: the unique-query retrieval pool holds 100
    ("icl.shots", 100, "icl.shots", "task UR's pool \\(unique_retrieval\\) holds 100 examples, 99 besides"),
])
def test_bad_config_names_the_key(path, value, key, words):
    with pytest.raises(ConfigError, match=words) as error:
        validate_config(with_change(path, value))
    assert f"config key {key}" in str(error.value)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda path: path.relative_to(REPO).as_posix())
def test_every_preset_validates_with_the_shipped_models(preset):
    """Every preset knows the shipped models (its own entry of a name wins), and every model it
    uses is an entry the schema accepts."""
    own = yaml.safe_load(preset.read_text()).get("models") or {}
    config = validate_config(yaml.safe_load(preset.read_text()), check_availability=False)
    for name, entry in shipped_models().items():
        assert name in own or config["models"][name] == entry
    for _, name in used_models(config):
        assert model_entry(name, config["models"][name]).name == name


def test_stacking_refuses_length_buckets():
    config = with_change("scratch.stack", True)
    config["scratch"]["family_overrides"] = {"copying": {"training": {"length_buckets": 3}}}
    with pytest.raises(ConfigError, match=r"config key scratch.family_overrides.copying.training.length_buckets: 3 "
                                          r"with scratch.stack"):
        validate_config(config)
    config["scratch"]["stack"] = False
    validate_config(config)


def test_workflow_stops_before_any_job(repo, tmp_path):
    """A bad config: non-zero exit, the message, and nothing written."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(with_change("data.tokens.unique_copy", {"alphabet_size": 10})))
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--directory", str(tmp_path),
         "--configfile", str(bad), "--cores", "1"], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "config key scratch.test_bins[1]" in run.stdout + run.stderr
    assert "unique copy of length 12 needs that many distinct symbols" in run.stdout + run.stderr
    assert not (tmp_path / "results").exists()


def test_lengths_per_family():
    config = with_change("scratch.train_lengths", {"retrieval": "1-8", "copying": "1-6"})
    config["scratch"]["test_bins"] = {"retrieval": ["1-8", "9-20"], "copying": ["1-6", "7-12"]}
    from lengthgen.config import scratch_lengths
    validated = validate_config(config)
    assert scratch_lengths(validated["scratch"], "retrieval") == ("1-8", ["1-8", "9-20"])
    assert scratch_lengths(validated["scratch"], "copying") == ("1-6", ["1-6", "7-12"])
    config["scratch"]["test_bins"]["copying"] = ["1-6", "7-13"]  # unique copy alphabet is 12
    with pytest.raises(ConfigError, match=r"config key scratch.test_bins.copying\[1\].*distinct symbols"):
        validate_config(config)
    config["scratch"]["test_bins"] = {"retrieval": ["1-8"]}
    with pytest.raises(ConfigError, match="config key scratch.test_bins"):
        validate_config(config)


def test_the_fine_tuning_preset_is_the_default_stage_alone():
    """configs/finetune_only.yaml measures the default's fine-tuning over more seeds: it must not
    drift from config.yaml's stage."""
    repo = __import__("conftest").REPO
    default = validate_config(yaml.safe_load(open(repo / "config.yaml")), check_availability=False)
    alone = validate_config(yaml.safe_load(open(repo / "configs" / "finetune_only.yaml")), check_availability=False)
    assert alone["tasks"] == default["tasks"] and alone["seeds"] == default["seeds"]
    assert alone["data"]["finetune"] == default["data"]["finetune"] and alone["models"] == default["models"]
    assert alone["finetune"] == default["finetune"]
    assert not alone["scratch"]["enabled"] and not alone["icl"]["models"] and not alone["mechanism"]["models"]


def test_the_default_fine_tunes_to_a_stopping_rule_and_tests_at_two_and_four_times():
    """Paper 4.3 as the default runs it: a patience and a step ceiling, out-of-distribution bins
    reaching 2x and 4x the longest training length, at least 300 examples per bin."""
    repo = __import__("conftest").REPO
    config = validate_config(yaml.safe_load(open(repo / "config.yaml")), check_availability=False)
    stage = config["finetune"]
    assert stage["training"]["patience"] and stage["training"]["max_steps"] >= 3000
    for family, bins in stage["test_bins"].items():
        longest = LengthBin.parse(stage["train_lengths"][family]).high
        assert bins[0] == stage["train_lengths"][family]
        assert [LengthBin.parse(b).high for b in bins[1:]] == [pytest.approx(2 * longest, abs=1),
                                                                pytest.approx(4 * longest, abs=2)]
    assert config["data"]["finetune"]["examples"] >= 300

def test_a_fine_tuning_job_reads_its_own_task_and_epochs_become_steps():
    """The section a fine-tuning job (and bench/finetune_curve.py) gets: its task's data settings and
    family lengths, and with epochs over a fixed training set the steps they take (rounded up)."""
    from lengthgen.plan.finetune import train_params

    config = with_change("finetune.train_examples", 1000)
    config["finetune"]["epochs"] = 3
    config["finetune"]["training"] = {**config["finetune"].get("training", {}), "batch_size": 64}
    validated = validate_config(config)
    section = train_params(validated, "embedded", "NLLast")
    assert section.data == validated["data"]["finetune"]["nonunique_retrieval"]
    assert section.train_lengths == str(validated["finetune"]["train_lengths"]["retrieval"])
    assert section.training.max_steps == 3 * 16  # 1000 / 64 = 15.6 batches per epoch
    assert validated["finetune"]["training"]["max_steps"] != 48  # the config itself is untouched
    copying = train_params(validated, "embedded", "UB")
    assert copying.data == validated["data"]["finetune"]["unique_copy"]
    assert copying.max_length == max(int(b.split("-")[-1]) for b in validated["finetune"]["test_bins"]["copying"])


def reversed_keys(value):
    """`value` with every mapping's keys in reverse order (the same config written another way)."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    return value


def test_key_order_and_restated_defaults_give_the_same_params():
    """Snakemake compares params by repr: neither key order nor a restated default may change it."""
    plain = validate_config(SMOKE)
    assert repr(validate_config(reversed_keys(SMOKE))) == repr(plain)
    restated = with_change("mechanism.instances", plain["mechanism"]["instances"])
    restated["mechanism"] = {"instances": restated["mechanism"].pop("instances"), **restated["mechanism"]}
    assert repr(validate_config(restated)) == repr(plain)
    default = load_schema()["properties"]["scratch"]["properties"]["greedy"]
    assert "default" in default
    assert repr(validate_config(with_change("scratch.greedy", default["default"]))) == repr(plain)


def test_a_reordered_set_is_the_same_config():
    """Tasks, seeds and the corpora's fine-tuning tasks are sets: their order changes no param."""
    config = validate_config(SMOKE, check_availability=False)
    reordered = copy.deepcopy(SMOKE)
    reordered["tasks"] = list(reversed(config["tasks"]))
    reordered["seeds"] = [2, 0, 1]
    reordered.setdefault("corpora", {}).setdefault("finetune", {})["tasks"] = ["UB", "UF", "UL", "UR"]
    base = copy.deepcopy(SMOKE)
    base["seeds"] = [0, 1, 2]
    assert validate_config(reordered, check_availability=False) == validate_config(base, check_availability=False)
    assert validate_config(reordered, check_availability=False)["tasks"] == config["tasks"]


def test_the_corpora_overlay_turns_the_papers_stages_off_and_keeps_the_rest_of_the_default():
    """configs/corpora_alone.yaml over config.yaml: the corpora experiment alone, with the default's
    settings for what it shares with the paper's stages (in context, fine-tuning, mechanism)."""
    repo = __import__("conftest").REPO
    default = yaml.safe_load(open(repo / "config.yaml"))
    overlay = yaml.safe_load(open(repo / "configs" / "corpora_alone.yaml"))
    for section, values in overlay.items():  # Snakemake's merge of a second --configfile, one level deep
        default.setdefault(section, {}).update(values)
    config = validate_config(default, check_availability=False)
    assert not config["scratch"]["enabled"] and config["corpora"]["natural"]
    assert not any(config[stage]["models"] for stage in ("icl", "finetune", "mechanism", "realistic"))
    plain = validate_config(yaml.safe_load(open(repo / "config.yaml")), check_availability=False)
    for stage in ("icl", "finetune", "mechanism"):
        assert {k: v for k, v in config[stage].items() if k not in ("models", "trained")} == {
            k: v for k, v in plain[stage].items() if k not in ("models", "trained")}
