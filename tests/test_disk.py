"""Nothing on disk is trusted: damaged files are named with what to do, cache shards and models are
verified, results are readable by the group, and `lengthgen verify` finds each fault."""

import subprocess
import sys

import pytest

from lengthgen.lengthbins.evaluate import evaluate_bins
from lengthgen.lengthbins.table import read_evals
from lengthgen.results.files import DamagedFile, read_frame
from lengthgen.tasks import TASKS
from lengthgen.tasks.generate import write_data_file
from lengthgen.tasks.summary import summarise_file
from lengthgen.tasks.theory_check import data_set

DATA = {"task": "UF", "encoding": "tokens", "bin": "1-8", "seed": 0, "examples": 5, "generator": "unique_copy",
        "settings": {"alphabet_size": 12, "style": "controlled"}}


def truncate(path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def data_file(root):
    path = root / "results" / "data" / "tokens" / "UF" / "1-8" / "seed0.parquet"
    write_data_file(DATA, path)
    return path


def test_a_truncated_data_file_is_named_with_the_target_that_remakes_it(tmp_path):
    path = data_file(tmp_path)
    truncate(path)
    readers = [summarise_file, lambda p: data_set(p, {"data": {"tokens": {"unique_copy": DATA["settings"]}}}),
               lambda p: evaluate_bins(None, TASKS["UF"], {"1-8": p}), read_evals, read_frame]
    for reader in readers:
        with pytest.raises(DamagedFile) as failure:
            reader(path if reader is not read_evals else [path])
        message = str(failure.value)
        assert message.startswith(f"{path}: cannot be read (")
        assert message.endswith(": delete it and rerun the target: snakemake results/data/tokens/UF/1-8/seed0.parquet")
        assert "\n" not in message


def test_a_job_reports_a_damaged_file_in_one_line_without_a_traceback(tmp_path):
    path = data_file(tmp_path)
    truncate(path)
    script = ("from types import SimpleNamespace\n"
              "from lengthgen.runtime import start_job\n"
              "from lengthgen.tasks.summary import summarise_file\n"
              "start_job(SimpleNamespace(log=[], threads=1))\n"
              f"summarise_file({str(path)!r})\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"lengthgen: {path}: cannot be read (")
