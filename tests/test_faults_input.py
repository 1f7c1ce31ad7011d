"""Fault injection for bad input and changed-but-equivalent input: each test plants one fault and
checks the outcome, one message naming the key at start, or nothing rerun."""

import copy

import pytest
import yaml

from snakemake_runner import smoke_config, snakemake

TRAINED = "results/scratch/NRLast/ape/seed0/training.parquet"


def one_task_config(**scratch):
    """The smoke grid cut to one task, with a fixed APE position table unless told otherwise."""
    config = smoke_config()
    config["tasks"] = ["NRLast"]
    config["scratch"]["model"]["max_positions"] = 40
    config["scratch"].update(scratch)
    return config


def reversed_keys(value):
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    return value


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A workdir where one from-scratch model has been trained (one job)."""
    workdir = tmp_path_factory.mktemp("trained")
    run = snakemake(workdir, one_task_config(), TRAINED)
    assert run.returncode == 0, run.stdout + run.stderr
    return workdir


def nothing_to_do(workdir, config) -> bool:
    path = workdir / "changed.yaml"  # in the given key order (snakemake_runner's dump sorts keys)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    run = snakemake(workdir, path, "--dry-run", TRAINED)
    assert run.returncode == 0, run.stdout + run.stderr
    return "Nothing to be done" in run.stdout


def test_a_bin_that_fits_the_fixed_table_retrains_nothing(trained):
    assert nothing_to_do(trained, one_task_config(test_bins=["1-8", "9-12", "13-16"]))


def test_key_order_and_a_restated_default_rerun_nothing(trained):
    config = reversed_keys(one_task_config())
    config["mechanism"] = {"instances": 100, **config.get("mechanism", {})}  # 100: the schema default
    config["scratch"]["greedy"] = True  # the default, restated
    assert nothing_to_do(trained, config)


def test_a_bin_longer_than_an_override_table_stops_at_start_naming_its_key(trained):
    config = one_task_config(family_overrides={"retrieval": {"model": {"max_positions": 12}}})
    model = trained / "results/scratch/NRLast/ape/seed0/model"
    before = sorted(p.name for p in model.iterdir())
    run = snakemake(trained, copy.deepcopy(config), TRAINED, "--forcerun", "scratch_train")
    assert run.returncode != 0
    assert "config key scratch.family_overrides.retrieval.model.max_positions: 12 positions" in run.stdout + run.stderr
    assert "scratch.model.max_positions" not in (run.stdout + run.stderr).replace("overrides.retrieval.model", "")
    assert sorted(p.name for p in model.iterdir()) == before


# -- local model directories, checked at start --------------------------------------------------
@pytest.fixture
def user_model(tmp_path):
    """A smoke config whose in-context stage uses a tiny local model directory (made here)."""
    from tiny_models import save_tiny_model

    directory = save_tiny_model(tmp_path / "tiny")
    config = smoke_config()
    config["models"] = {**config.get("models", {}), "tiny": {"path": str(directory)}}
    config["icl"]["models"] = ["tiny"]
    return directory, config


def test_a_complete_local_model_passes(user_model):
    from lengthgen.config import validate_config

    validate_config(user_model[1], check_availability=False)
    validate_config(user_model[1], check_availability=True)


@pytest.mark.parametrize("fault, words", [
    ("no tokenizer", "has no tokenizer files"),
    ("truncated weights", "model.safetensors is"),
    ("config not json", "config.json is not readable JSON"),
])
def test_a_damaged_local_model_stops_at_start_naming_the_file(user_model, fault, words):
    from lengthgen.config import ConfigError, validate_config

    directory, config = user_model
    if fault == "no tokenizer":
        for name in ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer.model", "vocab.txt"):
            (directory / name).unlink(missing_ok=True)
    elif fault == "truncated weights":
        weights = directory / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:-10])
    else:
        (directory / "config.json").write_text("{not json")
    with pytest.raises(ConfigError) as error:
        validate_config(config, check_availability=False)
    assert str(error.value).startswith("config key models.tiny: model 'tiny': ")
    assert str(directory) in str(error.value) and words in str(error.value)


def test_a_random_bytes_gguf_file_is_named(tmp_path):
    from lengthgen.models.registry import check_gguf_file
    from lengthgen.models.unavailable import ModelUnavailable

    fake = tmp_path / "model.gguf"
    fake.write_bytes(bytes(range(64)))
    with pytest.raises(ModelUnavailable, match=r"model\.gguf is not a GGUF file"):
        check_gguf_file("fake", fake)


# -- a failed job's reason on Snakemake's terminal ---------------------------------------------
JOB = """
import sys
from lengthgen import runtime
runtime.log_to(sys.argv[1])
sys.excepthook = runtime._one_line_for_expected
{raise_}
"""


@pytest.mark.parametrize("raise_, line", [
    ("raise runtime.ExpectedFailure('results/x.parquet is damaged')", "lengthgen: results/x.parquet is damaged"),
    ("raise ValueError('cannot reshape\\nmore')", "lengthgen: ValueError: cannot reshape"),
])
def test_a_failed_job_shows_its_one_line_reason_on_the_terminal(tmp_path, raise_, line):
    import subprocess
    import sys

    log = tmp_path / "job.log"
    run = subprocess.run([sys.executable, "-c", JOB.format(raise_=raise_), str(log)], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.strip() == f"{line} (details in {log})"
    assert line.removeprefix("lengthgen: ") in log.read_text()  # the log keeps the message (and any traceback)


def test_a_job_failing_on_damaged_weights_names_the_file_in_snakemakes_output(trained):
    """Last of the trained tests: it damages the trained model."""
    weights = trained / "results/scratch/NRLast/ape/seed0/model/model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-16])
    run = snakemake(trained, one_task_config(), "results/scratch/NRLast/ape/seed0/eval.parquet")
    assert run.returncode != 0
    reasons = [line for line in (run.stdout + run.stderr).splitlines() if line.startswith("lengthgen: ")]
    assert reasons and "model.safetensors" in reasons[0], run.stdout + run.stderr


# -- the last round's start-time faults, planted again (the workflow runs are in test_disk.py and
# test_config.py: a bad key stops the Snakefile at parse time, before any job) -----------------
@pytest.mark.parametrize("path, value, message", [
    ("seeds", [0, 0], "config key seeds: [0, 0] has non-unique elements"),
    ("seeds", [-1], "config key seeds[0]: -1 is less than the minimum of 0"),
    ("scratch.test_bins", ["9-3"], "config key scratch.test_bins[0]: bad length '9-3'"),
    ("icl.lengths", {"retrieval": [0], "copying": [6]}, "config key icl.lengths.retrieval[0]: 0 is less than"),
])
def test_bad_seeds_and_lengths_stop_at_start_naming_the_key(path, value, message):
    from lengthgen.config import ConfigError, validate_config

    config = smoke_config()
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[last] = value
    with pytest.raises(ConfigError) as error:
        validate_config(config, check_availability=False)
    assert str(error.value).startswith(message)


# -- two runs in one project -------------------------------------------------------------------
def test_a_second_run_in_the_same_project_is_refused_while_the_first_holds_the_lock(tmp_path):
    """The first run is paused (SIGSTOP) once it holds the lock, so the second always meets it; both
    would otherwise write the same outputs. The first then finishes untouched."""
    import signal
    import subprocess
    import sys
    import time

    import snakemake_runner

    (tmp_path / "config.yaml").write_text(yaml.safe_dump(one_task_config()))
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(snakemake_runner.SNAKEFILE), "--directory",
               str(tmp_path), "--configfile", str(tmp_path / "config.yaml"), "--cores", "1", TRAINED]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    locks = tmp_path / ".snakemake" / "locks"
    deadline = time.monotonic() + 300
    while not (locks.is_dir() and any(locks.iterdir())):
        assert first.poll() is None and time.monotonic() < deadline, "the first run ended before it took the lock"
        time.sleep(0.05)
    first.send_signal(signal.SIGSTOP)
    try:
        second = snakemake(tmp_path, tmp_path / "config.yaml", TRAINED)
    finally:
        first.send_signal(signal.SIGCONT)
    output, _ = first.communicate(timeout=600)
    # Refused either way: by the lock, or (when the first had already started its job before it was
    # paused) by the outputs that job marked incomplete, which Snakemake checks first.
    refusal = second.stdout + second.stderr
    assert second.returncode != 0 and ("Directory cannot be locked" in refusal or "Incomplete files:" in refusal)
    assert first.returncode == 0, output[-3000:]
    assert (tmp_path / TRAINED).is_file()
