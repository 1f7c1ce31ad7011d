"""Fault injection: a valid data file in the wrong place. It reads without error, so every reader
of data files checks the file's own task, encoding, bin and seed against what it is read for."""

import shutil

import pytest

from lengthgen.lengthbins.evaluate import evaluate_bins
from lengthgen.lengthbins.table import read_inputs
from lengthgen.records.files import DamagedFile
from lengthgen.settings import DataFileSettings
from lengthgen.tasks import TASKS
from lengthgen.tasks.datafile import identity_of_path, read_examples
from lengthgen.tasks.generate import write_data_file
from lengthgen.tasks.summary import summarise_file
from lengthgen.tasks.theory_check import data_set

SETTINGS = {"alphabet_size": 12, "style": "controlled"}


def data_file(root, task="UF", bin_text="1-8", seed=0, encoding="tokens"):
    path = root / f"results/data/{encoding}/{task}/{bin_text}/seed{seed}.parquet"
    generator = TASKS[task].generator
    write_data_file(DataFileSettings.from_config({"task": task, "encoding": encoding, "bin": bin_text, "seed": seed,
                                                  "examples": 5, "generator": generator, "settings": SETTINGS}), path)
    return path


def test_the_path_names_what_the_file_is_read_for(tmp_path):
    assert identity_of_path("results/data/chars/NRLast/21-40/seed2.parquet") == {
        "encoding": "chars", "task": "NRLast", "bin": "21-40", "seed": 2}
    assert identity_of_path(tmp_path / "elsewhere.parquet") is None


def test_a_file_in_its_own_place_reads_whole(tmp_path):
    path = data_file(tmp_path)
    table = read_examples(path, columns=["example", "context"])
    assert table.column_names == ["example", "context"] and table.num_rows == 5


@pytest.mark.parametrize(("source", "expected"), [
    ({"task": "UB"}, "holds data of task UB, but is read as UF tokens/1-8 seed 0 data"),
    ({"bin": "9-12"}, "holds data of bin 9-12, but is read as UF tokens/1-8 seed 0 data"),
    ({"seed": 1}, "holds data of seed 1, but is read as UF tokens/1-8 seed 0 data"),
    ({"encoding": "chars"}, "holds data of encoding chars, but is read as UF tokens/1-8 seed 0 data"),
], ids=["task", "bin", "seed", "encoding"])
def test_a_file_copied_over_another_stops_naming_both(tmp_path, source, expected):
    wrong = data_file(tmp_path / "other", **{"task": "UF", "bin_text": "1-8", "seed": 0, "encoding": "tokens",
                                             **{("bin_text" if k == "bin" else k): v for k, v in source.items()}})
    target = tmp_path / "results/data/tokens/UF/1-8/seed0.parquet"
    target.parent.mkdir(parents=True)
    shutil.copy(wrong, target)
    with pytest.raises(DamagedFile) as caught:
        read_examples(target)
    message = str(caught.value)
    assert message.startswith(f"{target}: {expected}: delete it and rerun the target: snakemake ")
    assert message.endswith("results/data/tokens/UF/1-8/seed0.parquet")


def test_every_reader_of_data_files_checks_them(tmp_path):
    """UB's examples under UF's path: the evaluation, the pairs' inputs, the summary and the theory
    check each stop rather than score UF on UB's targets."""
    target = tmp_path / "results/data/tokens/UF/1-8/seed0.parquet"
    target.parent.mkdir(parents=True)
    shutil.copy(data_file(tmp_path / "other", task="UB"), target)
    readers = [lambda: evaluate_bins(None, TASKS["UF"], {"1-8": str(target)}), lambda: read_inputs([target]),
               lambda: summarise_file(target), lambda: data_set(target, {"data": {"tokens": {}}})]
    for read in readers:
        with pytest.raises(DamagedFile, match="holds data of task UB"):
            read()
