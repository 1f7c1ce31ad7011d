"""The planning layer's refactorings leave every job as it was: each preset's planned jobs and their
parameters are compared with the snapshot taken before (tests/planned_jobs.py remakes it)."""

import json

import pytest

from planned_jobs import PRESETS, SNAPSHOT, planned_jobs


@pytest.mark.parametrize("preset", PRESETS)
def test_every_planned_job_and_its_parameters_are_as_in_the_snapshot(preset):
    before, now = json.loads(SNAPSHOT.read_text())[preset], planned_jobs(preset)
    gone, new = sorted(set(before) - set(now)), sorted(set(now) - set(before))
    changed = sorted(job for job in set(before) & set(now) if before[job] != now[job])
    assert not (gone or new or changed), (
        f"{preset}: jobs gone {gone[:5]}, new {new[:5]}, parameters changed {changed[:5]} "
        f"(a change on purpose: python tests/planned_jobs.py --write, and say why)")


def test_the_smoke_preset_plans_every_stage():
    """configs/smoke.yaml says it runs every stage: its plan holds each stage's job rules, the
    pretrained-model stages' on the embedded model (the corpora experiment's models are its own)."""
    planned = planned_jobs("configs/smoke.yaml")
    rules = {job.split()[0] for job in planned}
    assert {"data", "scratch_train", "scratch_eval", "icl_predict", "finetune_train", "finetune_eval", "mechanism",
            "realistic_predict", "comparison_table", "findings"} <= rules
    on_a_model = [job for job in planned if job.split()[0] in ("icl_predict", "finetune_train", "realistic_predict")]
    assert on_a_model and all("model=embedded" in job.split() for job in on_a_model)
