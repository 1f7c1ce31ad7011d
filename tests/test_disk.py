"""Nothing on disk is trusted: damaged files are named with what to do, cache shards and models are
verified, results are readable by the group, and `lengthgen verify` finds each fault."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import warnings
from base64 import urlsafe_b64encode

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from lengthgen.config import ConfigError, model_entry, validate_config
from lengthgen.icl.predict import predict_files
from lengthgen.inference.cache import DamagedShardWarning, PredictionCache
from lengthgen.lengthbins.evaluate import evaluate_bins
from lengthgen.lengthbins.table import read_evals
from lengthgen.mechanism.probe import induction_probe
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.models.loading import load, load_model, load_trained, load_trained_tokenizer
from lengthgen.models.registry import project_path
from lengthgen.models.storage import MANIFEST, directory_fingerprint, read_manifest, save_hf_directory
from lengthgen.models.unavailable import ModelUnavailable
from lengthgen.records.files import DamagedFile, read_frame
from lengthgen.records.tables import read_provenance, write_parquet
from lengthgen.settings import DataFileSettings
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import make_dataset, write_data_file
from lengthgen.tasks.summary import summarise_file
from lengthgen.tasks.theory_check import data_set
from tiny_models import tiny_model

DATA = {"task": "UF", "encoding": "tokens", "bin": "1-8", "seed": 0, "examples": 5, "generator": "unique_copy",
        "settings": {"alphabet_size": 12, "style": "controlled"}}


def truncate(path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def data_file(root):
    path = root / "results" / "data" / "tokens" / "UF" / "1-8" / "seed0.parquet"
    write_data_file(DataFileSettings.from_config(DATA), path)
    return path


@pytest.mark.parametrize("sidecar", [True, False], ids=["with its sha256", "written before sidecars"])
def test_a_truncated_data_file_is_named_with_the_target_that_remakes_it(tmp_path, sidecar):
    path = data_file(tmp_path)
    truncate(path)
    if not sidecar:
        (path.parent / (path.name + ".sha256")).unlink()
    problem = "differs from the sha256 in seed0.parquet.sha256, written with it" if sidecar else "cannot be read ("
    readers = [summarise_file, lambda p: data_set(p, {"data": {"tokens": {"unique_copy": DATA["settings"]}}}),
               lambda p: evaluate_bins(None, TASKS["UF"], {"1-8": p}), read_evals, read_frame]
    for reader in readers:
        with pytest.raises(DamagedFile) as failure:
            reader(path if reader is not read_evals else [path])
        message = str(failure.value)
        assert message.startswith(f"{path}: {problem}")
        assert message.endswith(": delete it and rerun the target: snakemake results/data/tokens/UF/1-8/seed0.parquet")
        assert "\n" not in message


def test_a_job_reports_a_damaged_file_in_one_line_without_a_traceback(tmp_path):
    path = data_file(tmp_path)
    truncate(path)
    script = ("from types import SimpleNamespace\n"
              "from lengthgen.runtime import start_job\n"
              "from lengthgen.tasks.summary import summarise_file\n"
              "start_job(SimpleNamespace(log=[], output=[], threads=1))\n"
              f"summarise_file({str(path)!r})\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"lengthgen: {path}: differs from the sha256 in seed0.parquet.sha256")


# -- the prediction cache ------------------------------------------------------------------------

TOKENIZER = build_char_tokenizer()
IDENTITY = {"model": "tiny", "revision": None, "dtype": "float32"}
UB = {"alphabet_size": 52}


def tiny_gpt2():
    return tiny_model(width=32, positions=256)


def predictions(cache_root):
    rows = make_dataset(TASKS["UB"], "chars", UB, LengthBin(8, 8), 4, 0).to_pylist()
    files = [{"task": "UB", "bin": "8", "seed": 0, "variant": "bare", "rows": rows}]
    cache = PredictionCache(cache_root, IDENTITY)
    return predict_files(tiny_gpt2(), TOKENIZER, files, settings={"UB": UB}, chat=False, separator="", shots=5, batch_size=4,
                         cache=cache)


def rewrite_with_wrong_rows(shard):
    """Valid parquet, its metadata kept, every completion replaced."""
    table = pq.read_table(shard)
    wrong = table.set_column(table.schema.get_field_index("completion"), "completion",
                             pa.array(["GARBAGE"] * table.num_rows))
    pq.write_table(wrong, shard)


def rewrite_with_wrong_rows_and_no_sidecar(shard):
    """As a shard written before sidecars: its own checksum of its rows still catches it."""
    rewrite_with_wrong_rows(shard)
    (shard.parent / (shard.name + ".sha256")).unlink()


@pytest.mark.parametrize("damage", [rewrite_with_wrong_rows, rewrite_with_wrong_rows_and_no_sidecar, truncate],
                         ids=["wrong rows", "wrong rows, no sidecar", "unreadable"])
def test_a_damaged_cache_shard_is_set_aside_named_once_and_recomputed(tmp_path, damage):
    clean = predictions(tmp_path / "clean")
    predictions(tmp_path / "cache")
    (shard,) = (tmp_path / "cache").rglob("*.parquet")
    damage(shard)
    with pytest.warns(DamagedShardWarning) as caught:
        again = predictions(tmp_path / "cache")
    assert len(caught) == 1 and str(shard) in str(caught[0].message)
    assert again.equals(clean)  # every entry decoded again: the output of a clean run
    assert (shard.parent / (shard.name + ".damaged")).exists()  # set aside, not deleted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert predictions(tmp_path / "cache").get_column("from_cache").all()  # the new shard verifies


def test_a_shard_moved_into_another_models_folder_does_not_answer_for_it(tmp_path):
    predictions(tmp_path / "cache")
    (shard,) = (tmp_path / "cache").rglob("*.parquet")
    other = PredictionCache(tmp_path / "cache", {**IDENTITY, "dtype": "bfloat16"}).folder
    other.mkdir()
    shard.rename(other / shard.name)
    with pytest.warns(DamagedShardWarning, match="written for identity"):
        assert PredictionCache(tmp_path / "cache", {**IDENTITY, "dtype": "bfloat16"}).entries == {}


# -- models ------------------------------------------------------------------------------------------
MODEL = "results/scratch/UF/ape/seed0/model"


def trained_model(root):
    save_hf_directory(tiny_gpt2(), TOKENIZER, root / MODEL)
    return root / MODEL


def overwrite_4kb(path):
    with open(path, "r+b") as handle:
        handle.seek(path.stat().st_size // 2)
        handle.write(bytes(4096))


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_model_is_saved_with_the_sha256_of_each_file_and_readable_by_the_group(tmp_path):
    model_dir = trained_model(tmp_path)
    manifest = read_manifest(model_dir)
    assert set(manifest) == {p.name for p in model_dir.iterdir()} - {MANIFEST}
    assert manifest["model.safetensors"] == hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    for file in model_dir.iterdir():  # safetensors writes its weights 0600
        assert stat.S_IMODE(file.stat().st_mode) == 0o666 & ~umask(), file.name


LOADERS = {"load_trained": load_trained, "tokenizer": load_trained_tokenizer,
           "registry": lambda d: load_model(model_entry("m", {"path": str(d)})),
           "registry tokenizer": lambda d: load(model_entry("m", {"path": str(d)})),
           "induction probe": induction_probe}


@pytest.mark.parametrize("damage", [overwrite_4kb, truncate], ids=["4 KB overwritten", "truncated"])
def test_a_damaged_model_stops_every_load_with_one_message_naming_the_file(tmp_path, damage):
    model_dir = trained_model(tmp_path)
    load_trained(model_dir)  # verified once: a later change is still seen
    damage(model_dir / "model.safetensors")
    for name, loader in LOADERS.items():
        with pytest.raises(DamagedFile) as failure:
            loader(model_dir)
        assert str(failure.value) == (
            f"{model_dir / 'model.safetensors'}: differs from the sha256 in {MANIFEST}, written with the model: "
            f"delete {MODEL} and rerun the target: snakemake {MODEL}"), name


def test_a_model_without_a_manifest_that_fails_to_load_is_named(tmp_path):
    """A user's own directory (or one written before manifests): no manifest to check, but a
    truncated file is named instead of safetensors' error without a path."""
    model_dir = tmp_path / "mine"
    tiny_gpt2().save_pretrained(model_dir)
    TOKENIZER.save_pretrained(model_dir)
    truncate(model_dir / "model.safetensors")
    with pytest.raises(ModelUnavailable, match=r"^model 'm': \S+/mine: model.safetensors is \d+ bytes, but its header "
                                               r"declares \d+ \(truncated or damaged\)$"):
        load_model(model_entry("m", {"path": str(model_dir)}))
    old = trained_model(tmp_path)
    (old / MANIFEST).unlink()
    truncate(old / "config.json")
    with pytest.raises(DamagedFile, match=f"config.json: cannot be read .*: delete {MODEL} and rerun the target"):
        load_trained(old)


def test_the_manifest_changes_no_identity_and_the_shipped_model_loads(tmp_path, repo):
    model_dir = trained_model(tmp_path)
    bare = shutil.copytree(model_dir, tmp_path / "bare")
    (bare / MANIFEST).unlink()
    assert directory_fingerprint(model_dir) == directory_fingerprint(bare)  # the prediction cache's key
    shipped = repo / "resources" / "embedded" / "gpt2"
    assert directory_fingerprint(shipped) == "5a97f6b11fc4d5b4"  # the shipped files alone: no manifest among them
    model, tokenizer = load(model_entry("embedded", {"path": str(shipped)}))
    assert model.config.n_positions == 256 and len(tokenizer("ab", add_special_tokens=False).input_ids) == 2


# -- limits known before any job -------------------------------------------------------------------

@pytest.mark.parametrize("section,key", [
    ({"tasks": ["NF", "UR"], "icl": {"models": ["embedded"], "lengths": {"copying": [5, 3000]}}},
     "icl.lengths.copying[1]: 3000 needs at least 6040 positions"),
    ({"realistic": {"models": ["embedded"], "lorem": {"lengths": [100, 500]}}},
     "realistic.lorem.lengths[1]: 500 needs at least 360 positions"),
    ({"mechanism": {"models": ["embedded"], "lengths": [9], "shots": 20}},
     "mechanism.lengths[0]: 9 needs at least 420 positions"),
    ({"tasks": ["NF", "UR"], "finetune": {"models": ["embedded"], "test_bins": {"copying": ["2-12", "13-200"]}}},
     "finetune.test_bins.copying[1]: 13-200 needs at least 401 positions"),
])
def test_lengths_beyond_a_local_models_positions_stop_the_run_at_start(repo, section, key):
    with pytest.raises(ConfigError) as failure:
        validate_config(section, check_availability=False, search=(repo,))
    message = str(failure.value)
    assert message.startswith(f"config key {key}")
    shipped = project_path(repo / "resources" / "embedded" / "gpt2")  # as the workflow records it
    assert f"more than model 'embedded' has (256, learned absolute positions, {shipped}/config.json)" in message


def test_lengths_a_model_holds_and_models_without_a_position_table_pass(repo, tmp_path):
    validate_config({"tasks": ["NF", "UR"], "icl": {"models": ["embedded"], "lengths": {"copying": [5, 20]}},
                     "realistic": {"models": ["embedded"], "lorem": {"lengths": [100]}}},
                    check_availability=False, search=(repo,))
    from transformers import LlamaConfig, LlamaForCausalLM  # rotary positions: no table to run past

    LlamaForCausalLM(LlamaConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                 num_attention_heads=2, max_position_embeddings=64)).save_pretrained(tmp_path / "rope")
    from tiny_models import TOKENIZER  # a model directory needs its tokenizer (checked at start)

    TOKENIZER.save_pretrained(tmp_path / "rope")
    validate_config({"models": {"rope": {"path": str(tmp_path / "rope")}},
                     "realistic": {"models": ["rope"], "lorem": {"lengths": [2000]}}}, check_availability=False)


def test_a_run_asking_for_too_many_positions_stops_before_any_job(tmp_path):
    from snakemake_runner import smoke_config, snakemake

    config = smoke_config()
    config["realistic"] = {"models": ["embedded"], "lorem": {"lengths": [500]}}
    run = snakemake(tmp_path, config)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "lengthgen: config key realistic.lorem.lengths[0]: 500 needs at least 360 positions" in run.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("key", ["seeds", "pretrain"])
def test_seeds_are_bounded_to_what_the_tables_hold(key):
    for seed in (10**22, 2**64 + 7, 2**31):
        config = {"seeds": [0, seed]} if key == "seeds" else {"pretrain": {"seeds": [seed]}}
        where = "seeds[1]" if key == "seeds" else "pretrain.seeds[0]"
        with pytest.raises(ConfigError) as failure:
            validate_config(config, check_availability=False)
        assert str(failure.value) == f"config key {where}: {seed} is greater than the maximum of {2**31 - 1}"


def test_the_largest_seed_is_generated_and_written(tmp_path):
    seed = 2**31 - 1
    validate_config({"seeds": [seed]}, check_availability=False)
    path = tmp_path / "data.parquet"
    write_data_file(DataFileSettings.from_config({**DATA, "seed": seed}), path)
    assert set(read_frame(path).get_column("seed")) == {seed} and read_provenance(path)["seed"] == seed
    torch.manual_seed(seed)


# -- lengthgen verify ----------------------------------------------------------------------------------
def finished_project(root):
    """A small tree as a run leaves it: data, a trained model, its evaluation, a cache shard, and
    Snakemake's record of which inputs the evaluation was made from."""
    data = {b: root / f"results/data/tokens/UF/{b}/seed0.parquet" for b in ("1-8", "9-12")}
    for length_bin, path in data.items():
        write_data_file(DataFileSettings.from_config({**DATA, "bin": length_bin}), path)
    model_dir = trained_model(root)
    evaluation = root / "results/scratch/UF/ape/seed0/eval.parquet"
    write_parquet(pa.table({"example": [0, 1], "teacher_forced": [True, False]}), evaluation, {"seed": 0})
    cache = PredictionCache(root / "results/cache/predictions", IDENTITY)
    cache.add({"k1": "a", "k2": "b"})
    record = {"rule": "scratch_eval", "input": [str(p.relative_to(root)) for p in (model_dir, *data.values())]}
    metadata = root / ".snakemake" / "metadata"
    metadata.mkdir(parents=True)
    (metadata / urlsafe_b64encode(b"results/scratch/UF/ape/seed0/eval.parquet").decode()).write_text(json.dumps(record))
    return data, model_dir, next(cache.folder.glob("*.parquet"))


def verify(root, *args):
    return subprocess.run([sys.executable, "-m", "lengthgen", "verify", *args], cwd=root, capture_output=True, text=True,
                          timeout=300)


def test_verify_finds_each_planted_fault_and_prints_the_command_that_rebuilds_it(tmp_path):
    data, model_dir, shard = finished_project(tmp_path)
    clean = verify(tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "every result, model, cache shard and checkpoint checks out" in clean.stdout

    rewrite_with_wrong_rows(shard)
    overwrite_4kb(model_dir / "model.safetensors")
    truncate(data["9-12"])
    data["1-8"].unlink()
    run = verify(tmp_path, "--configfile", "configs/smoke.yaml")
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    expected = [
        f"damaged    {MODEL}/model.safetensors: differs from the sha256 in {MANIFEST}, written with the model",
        "damaged    results/data/tokens/UF/9-12/seed0.parquet: differs from the sha256 in seed0.parquet.sha256",
        f"cache      {shard.relative_to(tmp_path)}: differs from the sha256 in {shard.name}.sha256, written with it",
        "missing    results/data/tokens/UF/1-8/seed0.parquet: read by results/scratch/UF/ape/seed0/eval.parquet",
    ]
    for start in expected:
        assert sum(line.startswith(start) for line in lines) == 1, (start, run.stdout)
    assert lines[-1] == ("rebuild: snakemake --configfile configs/smoke.yaml --forcerun "
                         f"{MODEL} results/data/tokens/UF/9-12/seed0.parquet icl_predict realistic_predict "
                         "results/data/tokens/UF/1-8/seed0.parquet")
    assert shard.exists()  # verify only reports: the next prediction job sets the shard aside
