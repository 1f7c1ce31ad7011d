"""A job's log holds its output: what a `run:` rule prints (warnings too), raises and writes."""

import sys

import polars as pl
import pytest

from lengthgen.runtime import job_log


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
