"""The command line, `python -m lengthgen` (the `lengthgen` script): what each subcommand prints, and
on bad input a one-line message and return code 2 instead of a traceback. `findings` and `verify`
have their own tests (test_findings.py, test_disk.py)."""

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

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


def test_runtimes_prints_per_rule_totals_longest_first(tmp_path, capsys):
    """Per rule: jobs, total and longest wall seconds, CPU seconds, peak memory; the rule with the
    most time first (Snakemake's benchmark files, one per job, under a folder per rule)."""
    benchmarks = tmp_path / "benchmarks"
    write_benchmark(benchmarks, "scratch_train/UF/ape/seed0", 10.0, 8.0, 500.0)
    write_benchmark(benchmarks, "scratch_train/UR/ape/seed0", 30.0, 25.0, 700.0)
    write_benchmark(benchmarks, "data/tokens/UF/9-12/seed0", 2.5, 1.0, 100.0)
    assert main(["runtimes", str(benchmarks)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| rule | jobs | total_seconds | longest_seconds | cpu_seconds | peak_rss_mb |",
        "|---|---|---|---|---|---|",
        "| scratch_train | 2 | 40.0 | 30.0 | 33.0 | 700.0 |",
        "| data | 1 | 2.5 | 2.5 | 1.0 | 100.0 |",
    ]


def test_runtimes_of_a_folder_without_benchmarks_says_so(tmp_path):
    run = lengthgen("runtimes", str(tmp_path))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == f"lengthgen: no benchmark files under {tmp_path}\n"


def test_verify_outside_a_workflow_directory_says_where_to_run_it(tmp_path):
    run = lengthgen("verify", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "lengthgen: . holds no results/ (run verify in the workflow directory)\n"


def test_a_missing_or_unknown_subcommand_is_a_usage_error():
    for args in ((), ("report",)):
        run = lengthgen(*args)
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.startswith("usage: lengthgen ") and "{provenance,runtimes,verify,findings}" in run.stderr
