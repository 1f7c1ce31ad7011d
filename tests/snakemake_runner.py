"""Run the real workflow from tests: in a temporary directory, on a given config."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "workflow" / "Snakefile"


def snakemake(workdir: Path, config: dict | Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    if isinstance(config, dict):
        path = workdir / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        config = path
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--directory", str(workdir),
         "--configfile", str(config), "--cores", "2", *args],
        capture_output=True, text=True, timeout=timeout)


def planned_jobs(workdir: Path, config) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job a dry run would execute."""
    run = snakemake(workdir, config, "--dry-run")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs, rule = [], None
    for line in run.stdout.splitlines():
        if match := re.match(r"^(?:local)?rule (\w+):", line):
            rule = match.group(1)
            jobs.append((rule, {}))
        elif match := re.match(r"^\s+wildcards: (.*)", line):
            jobs[-1] = (rule, dict(kv.split("=", 1) for kv in match.group(1).split(", ")))
    return jobs


def planned_resources(workdir: Path, config) -> list[tuple[str, dict, dict]]:
    """(rule, wildcards, resources) of every job a dry run would execute."""
    run = snakemake(workdir, config, "--dry-run")
    assert run.returncode == 0, run.stdout + run.stderr
    jobs = []
    for line in run.stdout.splitlines():
        if match := re.match(r"^(?:local)?rule (\w+):", line):
            jobs.append((match.group(1), {}, {}))
        elif match := re.match(r"^\s+(wildcards|resources): (.*)", line):
            jobs[-1][1 if match.group(1) == "wildcards" else 2].update(
                kv.split("=", 1) for kv in match.group(2).split(", "))
    return jobs


MODEL_STAGES = ("icl", "finetune", "mechanism", "realistic")  # the stages configs/smoke.yaml runs on the embedded model


def full_smoke_config() -> dict:
    """configs/smoke.yaml as it is: every stage."""
    return yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())


def smoke_config() -> dict:
    """configs/smoke.yaml with the pretrained-model stages off (their models none): data, from
    scratch and the tables, the base most workflow tests change one thing of."""
    config = full_smoke_config()
    for stage in MODEL_STAGES:
        config[stage]["models"] = []
    config["mechanism"].pop("trained")  # nor the mechanism stage on the models this run trains
    return config
