"""Adding a task is one record: a toy pair of tasks, registered before the workflow plans, is in the
config's schema, the mirror pairs and every stage's jobs, with no other file edited."""

import json
import subprocess
import sys

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
    import pytest

    from lengthgen.tasks import TASKS, register_task

    with pytest.raises(ValueError, match="already a record"):
        register_task(TASKS["UF"])
