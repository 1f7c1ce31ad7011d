"""The command line, `python -m lengthgen` (the `lengthgen` script): what each subcommand prints, and
on bad input a one-line message and return code 2 instead of a traceback. `findings` and `verify`
have their own tests (test_findings.py, test_disk.py)."""

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lengthgen.cli import main
from lengthgen.records.tables import write_parquet

BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def lengthgen(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lengthgen", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_provenance_prints_the_record_as_indented_json(tmp_path):
    record = {"seed": 3, "config_hash": "abc", "config": {"task": "UF", "bin": "9-12"}}
    write_parquet(pa.table({"x": [1, 2]}), tmp_path / "t.parquet", record)
    run = lengthgen("provenance", str(tmp_path / "t.parquet"))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == record
    assert run.stdout == json.dumps(record, indent=2, sort_keys=True) + "\n"


def test_provenance_of_a_file_without_one_or_of_no_file_is_a_message_not_a_traceback(tmp_path, capsys):
    pq.write_table(pa.table({"x": [1]}), tmp_path / "plain.parquet")  # written by something else
    assert main(["provenance", str(tmp_path / "plain.parquet")]) == 2
    assert capsys.readouterr().err == f"lengthgen: {tmp_path / 'plain.parquet'} carries no lengthgen provenance\n"
    assert main(["provenance", str(tmp_path / "missing.parquet")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("lengthgen: ") and "missing.parquet" in error and "Traceback" not in error


def write_benchmark(folder, job: str, seconds: float, cpu: float, rss: float) -> None:
    path = folder / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BENCHMARK_HEADER + f"{seconds}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")


def test_runtimes_prints_per_rule_totals_longest_first(tmp_path, capsys, monkeypatch):
    """Per rule: jobs, total and longest wall seconds, CPU seconds, peak memory; the rule with the
    most time first (Snakemake's benchmark files, one per job, under a folder per rule). The work
    columns stay empty without training histories (test_runtimes.py fills them)."""
    monkeypatch.setattr("lengthgen.results.runtimes.matmul_peak", lambda: 50e9)
    benchmarks = tmp_path / "benchmarks"
    write_benchmark(benchmarks, "scratch_train/UF/ape/seed0", 10.0, 8.0, 500.0)
    write_benchmark(benchmarks, "scratch_train/UR/ape/seed0", 30.0, 25.0, 700.0)
    write_benchmark(benchmarks, "data/tokens/UF/9-12/seed0", 2.5, 1.0, 100.0)
    assert main(["runtimes", str(benchmarks), "--workdir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| rule | jobs | total_seconds | longest_seconds | cpu_seconds | peak_rss_mb | gflop | gflop_per_cpu_s "
        "| gflop_per_s | peak_pct | padded_pct |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        "| scratch_train | 2 | 40.0 | 30.0 | 33.0 | 700.0 |  |  |  |  |  |",
        "| data | 1 | 2.5 | 2.5 | 1.0 | 100.0 |  |  |  |  |  |",
        "total: 42 job-seconds in 3 benchmarked jobs; fp32 matmul peak 50.0 GFLOP/s on one thread (measured now); "
        "no Snakemake log, so no wall time",
    ]


SNAKEMAKE_LOG = """Building DAG of jobs...
[Wed Dec  2 18:12:29 2026]
localrule data:
[Wed Dec  2 18:16:38 2026]
Finished jobid: 46 (Rule: scratch_train)
[Wed Dec  2 18:47:07 2026]
Finished jobid: 0 (Rule: all)
{done}
"""


@pytest.mark.parametrize(("done", "state"), [("132 of 132 steps (100%) done", ""), ("7 of 132 steps (5%) done",
                                                                                   ", unfinished")])
def test_runtimes_ends_with_the_wall_time_of_the_last_run(tmp_path, capsys, monkeypatch, done, state):
    """From the first to the last job event of the newest Snakemake log (an older one is not read)."""
    monkeypatch.setattr("lengthgen.results.runtimes.matmul_peak", lambda: 50e9)
    write_benchmark(tmp_path / "benchmarks", "scratch_train/UF/ape/seed0", 10.0, 8.0, 500.0)
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    (logs / "2026-12-01T100000.000000.snakemake.log").write_text("[Tue Dec  1 10:00:00 2026]\n[Tue Dec  1 12:00:00 2026]\n")
    (logs / "2026-12-02T181226.375915.snakemake.log").write_text(SNAKEMAKE_LOG.format(done=done))
    assert main(["runtimes", str(tmp_path / "benchmarks"), "--workdir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "total: 10 job-seconds in 1 benchmarked jobs; fp32 matmul peak 50.0 GFLOP/s on one thread (measured now); "
        "wall time of the last run 34 min 38 s "
        f"(2026-12-02T181226.375915.snakemake.log{state})")


def test_runtimes_of_a_folder_without_benchmarks_says_so(tmp_path):
    run = lengthgen("runtimes", str(tmp_path))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"lengthgen: no benchmark files under {tmp_path} and no timed pretraining beside it\n"


def test_verify_outside_a_workflow_directory_says_where_to_run_it(tmp_path):
    run = lengthgen("verify", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "lengthgen: . holds no results/ (run verify in the workflow directory)\n"


def test_a_missing_or_unknown_subcommand_is_a_usage_error():
    for args in ((), ("report",)):
        run = lengthgen(*args)
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.startswith("usage: lengthgen ")
        assert "{provenance,runtimes,eta,verify,findings,robustness,interaction,config-reference}" in run.stderr
