"""`snakemake --profile slurm` on a real one-node SLURM cluster (installed and started by the test):
every job runs as a SLURM job, the results equal a local run's, GPU rules get the (fake) GPUs."""

import subprocess
import sys

import polars as pl
import pytest
import yaml

from lengthgen.results.tables import read_provenance
from slurm_cluster import LocalCluster, ensure_packages
from snakemake_runner import REPO, smoke_config, snakemake

pytestmark = pytest.mark.slow


def small_config() -> dict:
    config = smoke_config()
    config["tasks"] = ["UR", "UF"]
    return config


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    ensure_packages()  # fails loudly (never skips): CI must exercise a real SLURM
    with LocalCluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("on_slurm")
    config_path = workdir / "config.yaml"
    config_path.write_text(yaml.safe_dump(small_config()))
    command = ["timeout", "-k", "15", "-s", "INT", "900", sys.executable, "-m", "snakemake",
               "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--configfile", str(config_path),
               "--profile", str(REPO / "slurm"), "--slurm-init-seconds-before-status-checks", "2",
               "--slurm-no-account", "--retries", "0"]
    run = subprocess.run(command, capture_output=True, text=True, env=cluster.env, timeout=960)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:] + cluster.logs()
    return workdir


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("local")
    run = snakemake(workdir, small_config())
    assert run.returncode == 0, run.stderr[-3000:]
    return workdir


def parquet_outputs(workdir):
    return sorted(p.relative_to(workdir) for p in (workdir / "results").rglob("*.parquet")
                  if "checkpoints" not in p.parts)


def test_every_job_ran_as_a_slurm_job(slurm_run):
    outputs = parquet_outputs(slurm_run)
    assert len(outputs) >= 15  # data, training histories, evaluations, tables
    jobs = {read_provenance(slurm_run / p)["scheduler"].get("slurm_job_id") for p in outputs}
    assert None not in jobs, "an output was made outside SLURM"
    assert len(jobs) >= len(outputs) - 1  # one job per output (a table rule writes two parquets)


def test_gpu_rules_get_the_gpus_the_profile_requests(slurm_run):
    history = read_provenance(slurm_run / "results" / "scratch" / "UR" / "ape" / "seed0" / "training.parquet")
    assert history["scheduler"]["cuda_visible_devices"] in {"0", "1"}
    evaluation = read_provenance(slurm_run / "results" / "scratch" / "UR" / "ape" / "seed0" / "eval" / "1-8.parquet")
    assert "cuda_visible_devices" not in evaluation["scheduler"]  # no GPU asked for evaluation


def test_results_equal_a_local_run(slurm_run, local_run):
    outputs = parquet_outputs(slurm_run)
    assert outputs == parquet_outputs(local_run)
    for path in outputs:
        assert pl.read_parquet(slurm_run / path).equals(pl.read_parquet(local_run / path)), path
