"""The model registry: local directories load through the Auto classes; unreachable ones fail clearly."""

import pytest
import torch

from lengthgen.registry import ModelEntry, ModelUnavailable, check_available, load
from lengthgen.models import build_model
from lengthgen.vocab import build_tokenizer


def test_local_directory_loads(tmp_path):
    model = build_model("rope", 12, 32, layers=1, heads=2, d_model=16)
    model.save_pretrained(tmp_path / "m")
    build_tokenizer(7).save_pretrained(tmp_path / "m")
    entry = ModelEntry.from_config("tiny", {"path": "m", "dtype": "bfloat16"}, base_dir=tmp_path)
    loaded, tokenizer = load(entry)
    assert loaded.dtype == torch.bfloat16 and tokenizer("s0 s6").input_ids == [5, 11]


def test_offline_hub_id_names_the_model():
    entry = ModelEntry.from_config("llama8b", {"path": "meta-llama/Llama-3.1-8B", "kind": "completion"})
    with pytest.raises(ModelUnavailable, match=r"model 'llama8b' \(meta-llama/Llama-3.1-8B\) .*offline"):
        check_available(entry)


@pytest.mark.parametrize("path", ["./missing/model", "/no/such/dir"])
def test_missing_local_path(path):
    with pytest.raises(ModelUnavailable, match="does not exist"):
        check_available(ModelEntry.from_config("x", {"path": path}))


def test_directory_without_config(tmp_path):
    with pytest.raises(ModelUnavailable, match="no config.json"):
        check_available(ModelEntry.from_config("x", {"path": str(tmp_path)}))
