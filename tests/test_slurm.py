"""`snakemake --profile slurm` on a real one-node SLURM cluster (installed and started by the test):
every job runs as a SLURM job, the results equal a local run's, GPU rules get the (fake) GPUs."""

import subprocess
import sys

import polars as pl
import pytest
import yaml

from lengthgen.records.tables import read_provenance
from slurm_cluster import LocalCluster, ensure_packages
from snakemake_runner import REPO, SNAKEFILE, smoke_config, snakemake

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
               "--snakefile", str(SNAKEFILE), "--directory", str(workdir), "--configfile", str(config_path),
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


def test_every_job_ran_as_a_slurm_job_and_tables_on_the_submitting_machine(slurm_run):
    outputs = parquet_outputs(slurm_run)
    assert len(outputs) >= 12  # data, training histories, evaluations, tables
    tables = [p for p in outputs if p.parts[1] == "tables"]
    jobs = {read_provenance(slurm_run / p)["scheduler"].get("slurm_job_id") for p in outputs if p not in tables}
    assert None not in jobs, "an output was made outside SLURM"
    assert len(jobs) == len(outputs) - len(tables)  # one job per output
    assert tables and all("slurm_job_id" not in read_provenance(slurm_run / p)["scheduler"] for p in tables)


def test_gpu_rules_get_the_gpus_the_workflow_profile_requests(slurm_run):
    for name in ("training.parquet", "eval.parquet"):
        record = read_provenance(slurm_run / "results" / "scratch" / "UR" / "ape" / "seed0" / name)
        assert record["scheduler"]["cuda_visible_devices"] in {"0", "1"}
    data = read_provenance(slurm_run / "results" / "data" / "tokens" / "UR" / "1-8" / "seed0.parquet")
    assert "cuda_visible_devices" not in data["scheduler"]  # no GPU asked for data


def test_a_successful_job_keeps_its_log(slurm_run):
    log = (slurm_run / "results" / "logs" / "scratch_train" / "UF" / "ape" / "seed0.log").read_text()
    assert "UF/ape/seed0" in log  # the training progress, kept after the SLURM job succeeded


def test_results_equal_a_local_run(slurm_run, local_run):
    outputs = parquet_outputs(slurm_run)
    assert outputs == parquet_outputs(local_run)
    for path in outputs:
        assert pl.read_parquet(slurm_run / path).equals(pl.read_parquet(local_run / path)), path
