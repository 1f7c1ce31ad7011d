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
