"""Adding a task is one record: a toy pair of tasks, registered before the workflow plans, is in the
config's schema, the mirror pairs and every stage's jobs, with no other file edited."""

import json
import subprocess
import sys

import pytest
import yaml

from conftest import REPO

# In its own process: the stages bind the task names and mirror pairs when they are imported.
SCRIPT = """
import dataclasses, json, sys
from pathlib import Path
from lengthgen.tasks import TASKS, register_task
register_task(dataclasses.replace(TASKS["UF"], name="XF", mirror="XB"))
register_task(dataclasses.replace(TASKS["UB"], name="XB", mirror="XF"))
sys.path.insert(0, sys.argv[3])
from planned_jobs import _dump
from lengthgen.tasks import MIRROR_PAIRS
from lengthgen.config import validate_config
from lengthgen.plan import finetune
config = validate_config(json.loads(Path(sys.argv[1]).read_text()), check_availability=False)
print(json.dumps({"pairs": MIRROR_PAIRS, "lengths": [finetune.train_params(config, "embedded", "XB").train_lengths,
                                                     str(config["finetune"]["train_lengths"]["copying"])],
                  "jobs": list(_dump(Path(sys.argv[1]), Path(sys.argv[2])))}))
"""


def test_a_toy_task_record_goes_through_the_schema_the_mirror_pairs_and_the_plan(tmp_path):
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["tasks"] = ["XF", "XB", "UF"]
    config.setdefault("finetune", {})["models"] = ["embedded"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(path), str(tmp_path), str(REPO / "tests")],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    assert ["XB", "XF"] in seen["pairs"] and ["UB", "UF"] in seen["pairs"]
    assert seen["lengths"][0] == seen["lengths"][1]  # the copying family's settings, from its record
    planned = {job.split()[0] for job in seen["jobs"] if "task=XB" in job.split()}
    assert {"data", "scratch_train", "scratch_eval", "finetune_train", "finetune_eval"} <= planned


def test_a_task_is_refused_a_second_record():
    from lengthgen.tasks import TASKS, register_task

    with pytest.raises(ValueError, match="already a record"):
        register_task(TASKS["UF"])


EXTENSION = REPO / "tests" / "data" / "extension_ascending_copy.py"
STAGE_TABLES = ("theory_check", "scratch", "icl", "finetune")


@pytest.fixture(scope="module")
def extension_run(tmp_path_factory):
    """The smoke stages (data, theory check, from scratch, in context, fine-tuned) on a new task pair
    with a new generator, both from one extension file (tests/data), no file of the package edited."""
    from snakemake_runner import snakemake

    workdir = tmp_path_factory.mktemp("extension")
    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config.update(extensions=[str(EXTENSION.relative_to(REPO))], tasks=["AF", "AB"])
    config["data"]["tokens"].pop("unique_copy")
    run = snakemake(workdir, config, *(f"results/tables/{name}.parquet" for name in STAGE_TABLES))
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    return workdir / "results"


def test_a_task_with_a_new_generator_runs_the_smoke_stages_from_one_extension_file(extension_run):
    import hashlib

    import polars as pl

    from lengthgen.records.tables import read_provenance

    forward, backward = (pl.read_parquet(extension_run / "data" / "tokens" / task / "9-12" / "seed0.parquet")
                         for task in ("AF", "AB"))
    contexts = forward["context"].to_list()
    assert contexts == backward["context"].to_list()  # one generator: the mirror pair shares its inputs
    assert all(c == sorted(set(c)) and 9 <= len(c) <= 12 for c in contexts)  # the extension's draws
    assert backward["target"].to_list() == [c[::-1] for c in contexts]
    checked = pl.read_parquet(extension_run / "tables" / "theory_check.parquet")
    assert set(checked["task"]) == {"AF", "AB"} and (checked["share"] == 1.0).all()
    for name in STAGE_TABLES[1:]:
        assert set(pl.read_parquet(extension_run / "tables" / f"{name}.parquet")["task"]) == {"AF", "AB"}, name
    recorded = read_provenance(extension_run / "data" / "tokens" / "AF" / "9-12" / "seed0.parquet")["extensions"]
    assert recorded == {str(EXTENSION): hashlib.sha256(EXTENSION.read_bytes()).hexdigest()}


def test_a_missing_extension_file_is_named_before_any_job(tmp_path):
    from snakemake_runner import snakemake

    config = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    config["extensions"] = ["no/such/tasks.py"]
    run = snakemake(tmp_path, config, "--dry-run")
    assert run.returncode != 0
    assert "config key extensions: file no/such/tasks.py not found" in run.stdout + run.stderr
