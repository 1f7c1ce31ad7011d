"""A job's log holds its output: what a `run:` rule prints (warnings too), raises and writes."""

import sys

import polars as pl
import pytest

from lengthgen.runtime import job_log, run_writer


def test_a_run_rule_logs_what_it_prints_warns_and_writes(tmp_path, capsys):
    log, table = tmp_path / "job.log", tmp_path / "t.parquet"
    with job_log([str(log)], [str(table)]):
        print("reading 3 files")
        print("warning: a column is empty", file=sys.stderr)
        pl.DataFrame({"x": [1, 2, 3]}).write_parquet(table)
    text = log.read_text()
    assert "reading 3 files" in text and "a column is empty" in text
    assert f"wrote {table}: 3 rows" in text and "done in" in text
    assert capsys.readouterr().out == ""  # Snakemake's own terminal stays its own


def test_a_failing_run_rule_logs_its_error_and_still_fails(tmp_path):
    log = tmp_path / "job.log"
    with pytest.raises(KeyError, match="smol"), job_log([str(log)], [str(tmp_path / "never.parquet")]):
        raise KeyError("smol")
    text = log.read_text()
    assert "Traceback" in text and "KeyError: 'smol'" in text and "wrote" not in text


def test_a_run_rule_calls_its_writer_with_its_inputs_and_outputs_inside_its_log(tmp_path):
    log, table = tmp_path / "job.log", tmp_path / "t.parquet"

    class Outputs(list):
        parquet = str(table)

    def write(rows, outputs):
        print("writing")
        pl.DataFrame({"x": rows}).write_parquet(outputs.parquet)

    run_writer(write, [str(log)], Outputs([str(table)]), [1, 2, 3])
    assert pl.read_parquet(table)["x"].to_list() == [1, 2, 3]
    assert "writing" in log.read_text() and f"wrote {table}: 3 rows" in log.read_text()


def test_a_writer_that_fails_is_logged_and_named_on_the_terminal(tmp_path, capsys):
    """A writer's error once failed outside the log: Snakemake said "message: None"."""
    log = tmp_path / "job.log"

    def write(outputs):
        raise KeyError("no column 'bin'")

    with pytest.raises(KeyError):
        run_writer(write, [str(log)], [])
    assert "KeyError: \"no column 'bin'\"" in log.read_text()
    assert "(details in " + str(log) + ")" in capsys.readouterr().err


def test_every_run_rule_calls_a_writer_its_rule_file_imports(repo):
    """The rules name their writers by real imports, run when the workflow is parsed; a `run:` body
    is only run with its job, so a writer it names without importing would fail there: each name
    passed to run_writer is imported by its own rule file, and each import resolves."""
    import importlib
    import re

    for path in (repo / "workflow" / "rules").glob("*.smk"):
        text = path.read_text()
        imported = {name.strip(): module for module, names in re.findall(r"^from (lengthgen[\w.]*) import (.+)$", text, re.M)
                    for name in names.split(",")}
        for name in re.findall(r"run_writer\((\w+),", text):
            assert name in imported, f"{path.name}: run_writer({name}) without an import of it"
            assert callable(getattr(importlib.import_module(imported[name]), name))


def test_run_rules_side_by_side_each_log_only_their_own_lines(tmp_path, capsys):
    """Snakemake runs `run:` jobs in threads of one process: one job's prints never reach another's
    log, and the terminal stays usable when either ends first."""
    import threading

    both_inside = threading.Barrier(2)

    def job(name, log):
        with job_log([str(log)], []):
            print(f"{name} starts")
            both_inside.wait()
            print(f"{name} ends")

    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b")}
    threads = [threading.Thread(target=job, args=item) for item in logs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("snakemake goes on")
    for name, log in logs.items():
        lines = log.read_text().splitlines()
        assert lines[:2] == [f"{name} starts", f"{name} ends"] and lines[2].startswith("done in")
    assert capsys.readouterr().out == "snakemake goes on\n"
