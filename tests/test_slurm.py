"""`snakemake --profile slurm` on a real one-node SLURM cluster (installed and started by the test):
every job runs as a SLURM job, the results equal a local run's, GPU rules get the (fake) GPUs, the
data rule's jobs run as one job array, a failed array element is retried alone, and the efficiency
report is asked for (it needs accounting, which the test cluster lacks)."""

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
import yaml

from lengthgen.records.tables import read_provenance
from slurm_cluster import LocalCluster, ensure_packages
from snakemake_runner import REPO, SNAKEFILE, smoke_config, snakemake

pytestmark = pytest.mark.slow

PROFILE = yaml.safe_load((REPO / "slurm" / "config.yaml").read_text())
ARRAY_RULES = PROFILE["slurm-array-jobs"].split(",")

# Imported by every Python process of the SLURM run (PYTHONPATH): the data script of array element 2
# fails once, leaving a marker with its SLURM_JOB_ID; the retry (and every other job) runs untouched.
PLANTED_FAILURE = """
import os, sys
if os.environ.get("SLURM_ARRAY_TASK_ID") == "2" and sys.argv[0].endswith("make_data.py"):
    try:
        fd = os.open(os.environ["LENGTHGEN_PLANTED_FAILURE"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        pass
    else:
        os.write(fd, os.environ["SLURM_JOB_ID"].encode())
        os.close(fd)
        sys.exit("planted failure: the data job of array element 2, first attempt")
"""


def small_config() -> dict:
    config = smoke_config()
    config["tasks"] = ["UR", "UF"]
    return config


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    ensure_packages()  # fails loudly (never skips): CI must exercise a real SLURM
    with LocalCluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


@dataclass
class SlurmRun:
    workdir: Path
    log: str  # Snakemake's and the plugin's messages
    jobs: list[dict]  # every SLURM job of the run (LocalCluster.jobs), read after it ended
    planted: Path  # the marker of the planted failure


@pytest.fixture(scope="module")
def slurm_submission(cluster, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("on_slurm")
    hooks = tmp_path_factory.mktemp("hooks")
    (hooks / "sitecustomize.py").write_text(PLANTED_FAILURE)
    config_path = workdir / "config.yaml"
    config_path.write_text(yaml.safe_dump(small_config()))
    planted = workdir / "planted_failure"
    env = {**cluster.env, "LENGTHGEN_PLANTED_FAILURE": str(planted),
           "PYTHONPATH": ":".join(p for p in (str(hooks), cluster.env.get("PYTHONPATH")) if p)}
    command = ["timeout", "-k", "15", "-s", "INT", "900", sys.executable, "-m", "snakemake",
               "--snakefile", str(SNAKEFILE), "--directory", str(workdir), "--configfile", str(config_path),
               "--profile", str(REPO / "slurm"), "--slurm-init-seconds-before-status-checks", "2",
               "--slurm-no-account", "--retries", "1"]
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=960)
    log = run.stdout + run.stderr
    (workdir / "run.log").write_text(log)  # kept with the pytest temp dir, for a look after a failure
    assert run.returncode == 0, log[-8000:] + cluster.logs()
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    return SlurmRun(workdir, log, cluster.jobs(run_id), planted)


@pytest.fixture(scope="module")
def slurm_run(slurm_submission):
    return slurm_submission.workdir


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


def data_outputs(workdir):
    return sorted((workdir / "results" / "data").rglob("*.parquet"))


def test_the_data_rule_ran_as_one_job_array(slurm_submission):
    """Every data job was submitted in one sbatch call: squeue lists <array job>_<task> for each."""
    assert "data" in ARRAY_RULES
    n = len(data_outputs(slurm_submission.workdir))
    assert n == 4  # as small_config() plans them
    assert re.search(rf"Submitted array job with Snakemake IDs [\d,]+ and SLURM job ID \d+\. "
                     rf"The individual task IDs are 1-{n}\.", slurm_submission.log)
    elements = [j for j in slurm_submission.jobs if j["comment"].startswith("rule_data") and "_" in j["id"]]
    assert {j["id"].split("_")[0] for j in elements} == {elements[0]["id"].split("_")[0]}  # one array
    assert sorted(int(j["id"].split("_")[1]) for j in elements) == list(range(1, n + 1))
    assert {j["state"] for j in elements} == {"COMPLETED", "FAILED"}  # element 2 failed (planted)
    # The other rules' jobs were submitted one by one (no array ID).
    assert all("_" not in j["id"] for j in slurm_submission.jobs if not j["comment"].startswith("rule_data"))


def test_a_failed_array_element_is_retried_alone_and_the_run_succeeds(slurm_submission):
    by_job_id = {j["job_id"]: j for j in slurm_submission.jobs}
    failed = by_job_id[slurm_submission.planted.read_text()]
    assert failed["id"].endswith("_2") and failed["state"] == "FAILED"
    assert [j for j in slurm_submission.jobs if j["state"] != "COMPLETED"] == [failed]
    made_by = {path: by_job_id[read_provenance(path)["scheduler"]["slurm_job_id"]]
               for path in data_outputs(slurm_submission.workdir)}
    retried = [(path, job) for path, job in made_by.items() if "_" not in job["id"]]
    assert len(retried) == 1, made_by  # the other data outputs came from the array's elements
    (path, job), = retried
    assert job["state"] == "COMPLETED" and job["comment"].startswith("rule_data_wildcards_")
    assert int(job["job_id"]) > int(failed["job_id"])  # submitted after the array, on its own
    encoding, task, bin_, seed = *path.parts[-4:-1], path.stem.removeprefix("seed")
    assert job["comment"] == f"rule_data_wildcards_{encoding}_{task}_{bin_}_{seed}"  # its own wildcards
    assert len(re.findall("Submitted array job", slurm_submission.log)) == 1  # the retry was no array
    # The failed element's SLURM log is kept, named by its array task (the path the plugin prints, with
    # a wildcards folder, does not exist for array jobs).
    slurm_log = slurm_submission.workdir / ".snakemake" / "slurm_logs" / "rule_data" / f"{failed['id']}.log"
    assert "planted failure" in slurm_log.read_text()
    assert re.search(r"Trying to restart job", slurm_submission.log)


def test_the_efficiency_report_is_asked_for_and_needs_accounting(slurm_submission):
    """The profile asks for the plugin's efficiency report; it reads sacct, which needs slurmdbd
    accounting: this cluster has none, so the plugin says it got no data and the run still succeeds."""
    assert PROFILE["slurm-efficiency-report"] is True
    assert "Failed to retrieve job data for workflow" in slurm_submission.log
    assert not list((slurm_submission.workdir / "results" / "logs" / "slurm").glob("efficiency_report_*.csv"))


def test_the_profile_hands_every_job_of_an_array_rule_to_the_plugin_at_once(tmp_path):
    """Plugin 2.8 drops the jobs of an array rule when Snakemake selects only some of its ready jobs
    (the run then waits forever): `jobs` and `max-jobs-per-timespan` must exceed the paper preset's
    job count of every array rule (all its data jobs are ready at the start)."""
    run = snakemake(tmp_path, REPO / "configs" / "paper.yaml", "--dry-run", "--quiet", "rules")
    assert run.returncode == 0, run.stderr[-3000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", run.stdout + run.stderr, re.MULTILINE))
    per_timespan = int(PROFILE["max-jobs-per-timespan"].split("/")[0])
    assert PROFILE["max-jobs-per-timespan"].endswith("/1s")
    for rule in ARRAY_RULES:
        assert int(counts[rule]) > 100  # many jobs: what arrays are for
        assert PROFILE["jobs"] >= int(counts["total"]) and per_timespan >= int(counts[rule]), (rule, counts)
