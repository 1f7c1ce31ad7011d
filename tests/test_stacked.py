"""Stacked runs (several models in one vmapped step) train as the same runs would one by one."""

import dataclasses

import pytest
import torch

from lengthgen.config import train_settings
from lengthgen.engine.loop import train
from lengthgen.engine.run import TrainingRun
from lengthgen.engine.sequences import TrainingStream
from lengthgen.engine.stacked import StackedRuns
from lengthgen.models.builders import build_model
from lengthgen.models.vocab import vocab_size
from lengthgen.tasks import LengthBin, get_task

ALPHABET = 10


def make_runs(pe: str, tmp_path, stop_after: dict[int, int] | None = None, tag: str = "a", max_steps: int = 12):
    """Three runs of one architecture (seeds 0-2, different data); run i reports accuracy 1.0 once it
    has taken stop_after[i] steps, so it stops early there."""
    stop_after = stop_after or {}
    runs = []
    for seed in range(3):
        model = build_model(pe, vocab_size(ALPHABET), 24, layers=1, heads=2, d_model=16, seed=seed)
        stream = TrainingStream(get_task("UF"), {"alphabet_size": ALPHABET}, LengthBin(1, 9), 8, seed,
                                24 if pe == "ape" else None)
        settings = train_settings(lr=3e-3, batch_size=8, max_steps=max_steps, eval_every=4, checkpoint_every=4,
                                  warmup_steps=2, schedule="linear")

        def evaluate(model, run_index=seed):
            step = runs[run_index].step_count
            return {"accuracy": 1.0 if step >= stop_after.get(run_index, 10**9) else 0.5,
                    "weight_sum": float(sum(p.sum() for p in model.parameters()))}

        checkpoints = tmp_path / tag / f"seed{seed}" if tmp_path else None
        runs.append(TrainingRun(model, settings, stream, evaluate, checkpoints,
                                {"seed": seed}, device=torch.device("cpu"), name=f"seed{seed}"))
    return runs


def assert_close_runs(stacked, single):
    for a, b in zip(stacked, single):
        assert a.step_count == b.step_count and a.history.steps == b.history.steps
        assert a.history.losses == pytest.approx(b.history.losses, rel=1e-4)
        assert [m["weight_sum"] for m in a.history.metrics] == pytest.approx(
            [m["weight_sum"] for m in b.history.metrics], rel=1e-4)
        sa, sb = a.final_model().state_dict(), b.final_model().state_dict()
        assert all(torch.allclose(sa[k], sb[k], atol=1e-5) for k in sa)


@pytest.mark.parametrize("pe", ["ape", "rope"])
def test_stacked_runs_match_runs_trained_one_by_one(tmp_path, pe):
    single = train(make_runs(pe, tmp_path, tag="single"), progress=False)
    stacked = train(make_runs(pe, tmp_path, tag="stacked"), progress=False, stack=True)
    assert_close_runs(stacked, single)
    assert all(r.step_count == 12 for r in stacked)


def test_a_run_that_stops_early_leaves_the_stack_and_the_others_go_on(tmp_path):
    stops = {1: 4, 2: 8}
    single = train(make_runs("ape", tmp_path, stops, tag="single"), progress=False)
    stacked = train(make_runs("ape", tmp_path, stops, tag="stacked"), progress=False, stack=True)
    assert [r.step_count for r in stacked] == [12, 4, 8]
    assert_close_runs(stacked, single)


def test_a_killed_stack_resumes_from_the_runs_own_checkpoints_bit_for_bit(tmp_path):
    """The stack writes each run's own checkpoint (weights, optimiser, schedule, RNG); runs restarted
    from them and stacked again end exactly where an uninterrupted stack ends."""
    straight = train(make_runs("ape", tmp_path, tag="straight"), progress=False, stack=True)
    stack = StackedRuns(make_runs("ape", tmp_path, tag="killed"))
    for _ in range(10):  # killed after step 10: the last checkpoints are those of step 8
        stack.step()
    resumed = make_runs("ape", tmp_path, tag="killed")
    assert [r.resumed_from for r in resumed] == [8, 8, 8]
    train(resumed, progress=False, stack=True)
    for a, b in zip(straight, resumed):
        assert a.history.steps == b.history.steps and a.history.losses == b.history.losses
        sa, sb = a.model.state_dict(), b.model.state_dict()
        assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_incompatible_runs_are_refused():
    runs = make_runs("ape", None)
    runs[1].settings = dataclasses.replace(runs[1].settings, lr=1e-3)  # frozen settings: a run with others
    with pytest.raises(ValueError, match="same architecture, settings"):
        StackedRuns(runs)


# -- stacked runs in the workflow (scratch.stack) -----------------------------------------------
def stacked_config(stack: bool, max_steps: int = 20) -> dict:
    from snakemake_runner import smoke_config

    config = smoke_config()
    config.update(tasks=["UR", "UL", "NB"], seeds=[0, 1])
    config["scratch"].update(stack=stack, positional_encodings=["rope"])
    config["scratch"]["training"].update(max_steps=max_steps, checkpoint_every=10, eval_every=10, early_stop=False)
    return config


def trained(workdir, tasks=("UR", "UL", "NB"), seeds=(0, 1)) -> dict:
    from safetensors.torch import load_file

    return {(t, s): load_file(workdir / "results" / "scratch" / t / "rope" / f"seed{s}" / "model" / "model.safetensors")
            for t in tasks for s in seeds}


TRAINED = [f"results/scratch/{t}/rope/seed{s}/training.parquet" for t in ("UR", "UL", "NB") for s in (0, 1)]


@pytest.mark.slow
def test_stacked_jobs_write_the_models_one_job_per_run_writes(tmp_path):
    import polars as pl

    from snakemake_runner import planned_jobs, snakemake

    for name in ("single", "stacked"):
        (tmp_path / name).mkdir()
    jobs = planned_jobs(tmp_path / "stacked", stacked_config(True))
    trains = sorted(rule for rule, _ in jobs if rule.startswith("scratch_"))
    # UR with its mirror UL (same settings), NB alone (its mirror NF is not in the grid); every seed.
    assert [r for r in trains if r != "scratch_eval"] == ["scratch_pairs", "scratch_stack_NB", "scratch_stack_UR_UL",
                                                          "scratch_table"]
    for name, stack in (("single", False), ("stacked", True)):
        run = snakemake(tmp_path / name, stacked_config(stack), *TRAINED)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    single, stacked = trained(tmp_path / "single"), trained(tmp_path / "stacked")
    for key, weights in single.items():
        assert all(torch.allclose(weights[n], stacked[key][n], atol=1e-5) for n in weights), key
    for path in TRAINED:
        a, b = (pl.read_parquet(tmp_path / name / path) for name in ("single", "stacked"))
        assert a.get_column("step").to_list() == b.get_column("step").to_list()
        assert a.get_column("train_loss").to_list() == pytest.approx(b.get_column("train_loss").to_list(), rel=1e-4)


@pytest.mark.slow
def test_a_killed_stacked_job_resumes_through_snakemake_bit_for_bit(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    import yaml

    from snakemake_runner import SNAKEFILE, snakemake

    config = stacked_config(True, max_steps=60)
    config["tasks"] = ["UR", "UL"]
    targets = [t for t in TRAINED if "/NB/" not in t]
    for name in ("straight", "killed"):
        (tmp_path / name).mkdir()
    run = snakemake(tmp_path / "straight", config, *targets)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    (tmp_path / "killed" / "config.yaml").write_text(yaml.safe_dump(config))
    victim = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--directory", str(tmp_path / "killed"),
         "--configfile", str(tmp_path / "killed" / "config.yaml"), "--cores", "1", *targets],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    last = tmp_path / "killed" / "results" / "checkpoints" / "scratch" / "UL" / "rope" / "seed1" / "state.pt"
    deadline = time.time() + 300
    while not last.exists() and time.time() < deadline:
        time.sleep(0.005)
    os.killpg(victim.pid, signal.SIGKILL)  # Snakemake and its job, mid-run
    victim.wait()
    assert not (tmp_path / "killed" / "results" / "scratch" / "UR" / "rope" / "seed0" / "training.parquet").exists()

    assert snakemake(tmp_path / "killed", config, "--unlock").returncode == 0  # what a user does after a kill
    run = snakemake(tmp_path / "killed", config, "--rerun-incomplete", *targets)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    from lengthgen.records.tables import read_provenance

    record = read_provenance(tmp_path / "killed" / targets[0])
    assert 0 < record["resumed_from"] < 60 and record["stacked_with"] == 4
    a, b = trained(tmp_path / "straight", ("UR", "UL")), trained(tmp_path / "killed", ("UR", "UL"))
    for key in a:
        assert all(torch.equal(a[key][n], b[key][n]) for n in a[key]), key


def test_a_stack_decays_the_parameters_each_run_decays():
    """One optimiser for the stack, with each run's groups: Trainer's (no decay on biases and norm
    weights), so a stacked run is the run trained alone."""
    runs = make_runs("ape", None)
    stack = StackedRuns(runs)
    stacked_names = {id(t): n for n, t in stack.params.items()}
    run_names = {id(p): n for n, p in runs[0].model.named_parameters()}
    groups = lambda optimizer, names: [(g["weight_decay"], sorted(names[id(p)] for p in g["params"]))
                                       for g in optimizer.param_groups]
    assert groups(stack.optimizer, stacked_names) == groups(runs[0].optimizer, run_names)
    assert groups(stack.optimizer, stacked_names)[1][0] == 0.0 and groups(stack.optimizer, stacked_names)[1][1]
