"""Every job a preset plans, with a fingerprint of its parameters: what a refactoring of the planning
layer must leave unchanged (a job's params are what Snakemake reruns it for).

Snakemake's dry run prints rules and wildcards but not params, so this builds the DAG through its API
and reads each job's params. The snapshot `tests/data/planned_jobs.json` records them;
`python tests/planned_jobs.py --write` remakes it after a change that moves jobs on purpose (say
why in the commit).

    python tests/planned_jobs.py CONFIG WORKDIR   # one preset's jobs as JSON on stdout
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tests" / "data" / "planned_jobs.json"
PRESETS = ("config.yaml", "configs/smoke.yaml", "configs/paper.yaml")


def job_key(rule: str, wildcards: dict) -> str:
    return " ".join([rule, *(f"{k}={v}" for k, v in sorted(wildcards.items()))])


def fingerprint(params: dict) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _dump(config: Path, workdir: Path) -> dict[str, str]:
    """Build the preset's DAG in `workdir` and fingerprint each job's params (runs in its own process)."""
    from snakemake.api import SnakemakeApi  # noqa: I001  (the api first: snakemake.dag imports it back)
    import snakemake.dag
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings

    jobs: dict[str, str] = {}

    def record(dag):  # in place of the d3 printer: the DAG is built, nothing runs
        for job in dag.jobs:
            params = {name: job.params[name] for name in job.params.keys()}
            jobs[job_key(job.rule.name, dict(job.wildcards.items()))] = fingerprint(params)

    snakemake.dag.DAG.d3dag = record
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                                config_settings=ConfigSettings(configfiles=[config]),
                                snakefile=REPO / "workflow" / "Snakefile", workdir=workdir)
        workflow.dag(dag_settings=DAGSettings()).printd3dag()
    return dict(sorted(jobs.items()))


def planned_jobs(config: str) -> dict[str, str]:
    """job ("rule k=v ...") -> fingerprint of its params, for a preset (a path relative to the repo)."""
    with tempfile.TemporaryDirectory() as workdir:
        run = subprocess.run([sys.executable, __file__, str(REPO / config), workdir],
                             capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            raise RuntimeError(f"planning {config} failed:\n{run.stderr[-3000:]}")
        return json.loads(run.stdout.splitlines()[-1])


def main(argv: list[str]) -> None:
    if argv == ["--write"]:
        SNAPSHOT.write_text(json.dumps({preset: planned_jobs(preset) for preset in PRESETS}, indent=1) + "\n")
        print(f"wrote {SNAPSHOT}")
    else:
        config, workdir = map(Path, argv)
        print(json.dumps(_dump(config, workdir)))


if __name__ == "__main__":
    main(sys.argv[1:])
