"""Workflow scripts forked from the warm server: each a process of its own, as a fresh one would be,
with its own benchmark, exit status and one-line failure."""

import subprocess
import sys
import threading
from types import SimpleNamespace

import polars as pl
import pytest

from lengthgen.jobserver import ScriptFailed, ScriptJob, run_script

WARM_CHECK = """
import atexit, os, sys, time
started_warm = "transformers.modeling_utils" in sys.modules  # before this script imports anything
import torch
from lengthgen.runtime import start_job
start_job(snakemake)
end = time.process_time() + float(snakemake.params.burn)
while time.process_time() < end:
    pass
out = snakemake.output[0]
with open(out, "w") as handle:
    handle.write(f"{started_warm} {os.environ['OMP_NUM_THREADS']} {torch.initial_seed()} {snakemake.wildcards.task}")
atexit.register(lambda: open(out + ".exit", "w").close())
"""

FAILING = """
import sys
from lengthgen.runtime import ExpectedFailure, start_job
start_job(snakemake)
if snakemake.params.code:
    sys.exit(snakemake.params.code)
raise ExpectedFailure("results/x.parquet is damaged: rebuild it")
"""


def job(tmp_path, name, **params) -> ScriptJob:
    return ScriptJob(rule=name, input=[], output=[str(tmp_path / f"{name}.txt")], params=SimpleNamespace(**params),
                     wildcards=SimpleNamespace(task="UF"), log=[str(tmp_path / f"{name}.log")], threads=3,
                     scriptdir=str(tmp_path))


def script(tmp_path, text) -> str:
    path = tmp_path / "script.py"
    path.write_text(text)
    return str(path)


def benchmark_cpu(path) -> float:
    return pl.read_csv(path, separator="\t", null_values=["NA"])["cpu_time"][0]


def test_a_script_runs_warm_in_a_process_of_its_own_and_benchmarks_only_itself(tmp_path):
    path = script(tmp_path, WARM_CHECK)
    jobs = [job(tmp_path, f"burn{i}", burn=0.6) for i in range(2)]
    threads = [threading.Thread(target=run_script, args=(path, j, str(tmp_path / f"{j.rule}.tsv"))) for j in jobs]
    for thread in threads:  # side by side, as Snakemake runs two jobs
        thread.start()
    for thread in threads:
        thread.join()
    seeds = set()
    for j in jobs:
        warm, threads_variable, seed, task = (tmp_path / f"{j.rule}.txt").read_text().split()
        assert warm == "True" and threads_variable == "3" and task == "UF"
        seeds.add(seed)
        assert (tmp_path / f"{j.rule}.txt.exit").exists()  # its exit handlers ran
        assert f"wrote {tmp_path / j.rule}.txt" in (tmp_path / f"{j.rule}.log").read_text()
        # its own CPU: the work it did, not the imports (done once, in the server), not its sibling's
        assert 0.5 <= benchmark_cpu(tmp_path / f"{j.rule}.tsv") < 1.1
    assert len(seeds) == 2  # torch's generator seeded afresh in each, as in a fresh interpreter


@pytest.mark.parametrize("code", [0, 3])
def test_a_failed_script_raises_and_logs_its_one_line_reason(tmp_path, code):
    failing = job(tmp_path, "fails", code=code)
    with pytest.raises(ScriptFailed, match=f"exited with {code or 1}; its log: {failing.log[0]}"):
        run_script(script(tmp_path, FAILING), failing, str(tmp_path / "fails.tsv"))
    if not code:
        assert "lengthgen: results/x.parquet is damaged: rebuild it" in (tmp_path / "fails.log").read_text()
    assert not (tmp_path / "fails.tsv").exists()  # no benchmark of a failed job, as Snakemake's


def test_a_job_pickled_for_another_interpreter_runs_there(tmp_path):
    """The side of a conda environment's job (`python -m lengthgen.jobserver FILE`)."""
    import pickle

    burn = job(tmp_path, "elsewhere", burn=0.0)
    (tmp_path / "job.pickle").write_bytes(pickle.dumps((script(tmp_path, WARM_CHECK), burn, str(tmp_path / "b.tsv"))))
    run = subprocess.run([sys.executable, "-m", "lengthgen.jobserver", str(tmp_path / "job.pickle")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "elsewhere.txt").read_text().split()[0] == "False"  # a fresh interpreter: nothing warm
    assert benchmark_cpu(tmp_path / "b.tsv") >= 0
