"""The model registry: local directories load through the Auto classes; unreachable ones fail clearly."""

import pytest
import torch

from lengthgen.config import ConfigError, model_entry
from lengthgen.models.builders import build_model
from lengthgen.models.loading import load
from lengthgen.models.registry import ModelUnavailable, check_available
from lengthgen.models.vocab import build_tokenizer


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
