"""Copying scored place by place (`lengthgen.lengthbins.places`): each output symbol is counted at the
source place it copies, forward and backward, and the markdown groups places by the test bins."""

import polars as pl
import pytest

from lengthgen.lengthbins.places import place_accuracy, places_markdown, read_copying_evals, source_place


def evals(rows) -> pl.DataFrame:
    """(task, target, teacher-forced prediction) rows of one model and seed."""
    return pl.DataFrame([{"system": "tiny", "task": t, "seed": 0, "bin": "2-4", "target": target,
                          "teacher_forced_prediction": predicted} for t, target, predicted in rows])


def test_forward_copies_place_for_place_and_backward_mirrors_it():
    assert [source_place("UF", i, 4) for i in range(4)] == [1, 2, 3, 4]
    assert [source_place("UB", i, 4) for i in range(4)] == [4, 3, 2, 1]


def test_each_symbol_counts_at_the_place_it_copies():
    # UB's source (5, 6, 7, 8): output (8, 7, 6, 5); only the symbol from source place 1 (the last
    # output, 5) is wrong. UF: the first output symbol (place 1) is wrong, an <eos> slot beyond is ignored.
    table = place_accuracy(evals([("UB", [8, 7, 6, 5], [8, 7, 6, 0]), ("UF", [1, 2, 3], [9, 2, 3, -1]),
                                  ("UR", [4], [4])]), train_lengths="2-3")
    ub = table.filter(pl.col("task") == "UB")
    assert ub["place"].to_list() == [1, 2, 3, 4] and ub["accuracy"].to_list() == [0.0, 1.0, 1.0, 1.0]
    uf = table.filter(pl.col("task") == "UF")
    assert uf["accuracy"].to_list() == [0.0, 1.0, 1.0]
    assert set(table["task"]) == {"UB", "UF"}  # retrieval has no places
    assert ub["beyond_training"].to_list() == [False, False, False, True]


def test_a_short_prediction_is_wrong_at_the_places_it_does_not_reach():
    table = place_accuracy(evals([("UF", [1, 2, 3], [1])]), train_lengths="2-3")
    assert table["right"].to_list() == [1, 0, 0] and table["symbols"].to_list() == [1, 1, 1]


def test_the_markdown_groups_places_by_the_test_bins():
    table = place_accuracy(evals([("UB", [4, 3, 2, 1], [4, 3, 0, 0]), ("UB", [2, 1], [2, 1])]), train_lengths="2-2")
    markdown = places_markdown(table, ["2-2", "3-4"], "2-2", {"config_hash": "h", "code_version": "v"})
    header, _, row = markdown.split("\n\n")[2].splitlines()[:3]
    assert "places 1-2" in header and "places 3-4" in header
    # places 1-2: the second string's two symbols and the first's places 1, 2 (wrong): 2 of 4; places 3-4: 2 of 2
    assert "| 0.50 [" in row and "| 1.00 [" in row
    assert pytest.approx(table.filter(pl.col("place") == 1)["accuracy"].item()) == 0.5


def test_only_copying_files_are_read_a_retrieval_target_being_one_symbol(tmp_path):
    copy, retrieval = tmp_path / "uf.parquet", tmp_path / "ur.parquet"
    evals([("UF", [1, 2], [1, 2])]).write_parquet(copy)
    pl.DataFrame({"system": ["tiny"], "task": ["UR"], "seed": [0], "bin": ["2-4"], "target": [4],
                  "teacher_forced_prediction": [[4]]}).write_parquet(retrieval)
    frame = read_copying_evals([retrieval, copy])
    assert frame["task"].to_list() == ["UF"]
    assert place_accuracy(frame, "2-2")["accuracy"].to_list() == [1.0, 1.0]
    assert place_accuracy(read_copying_evals([retrieval]), "2-2").is_empty()
