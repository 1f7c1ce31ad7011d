"""Reading a task data file for what it is read for.

A data file's path names its (encoding, task, bin, seed) and its rows carry them as columns. A file
copied over another's path reads without error, so every reader of data files checks the two
agree: UB's examples under UF's path would otherwise score UF on UB's targets.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..records.files import DamagedFile, read_table

# results/data/{encoding}/{task}/{bin}/seed{seed}.parquet, as the workflow's `data_path` writes it
DATA_PATH = re.compile(r"(?:^|/)data/(?P<encoding>[^/]+)/(?P<task>[^/]+)/(?P<bin>[^/]+)/seed(?P<seed>-?\d+)\.parquet$")
IDENTITY = ("encoding", "task", "bin", "seed")


def identity_of_path(path) -> dict | None:
    """The (encoding, task, bin, seed) a data file's path stands for; None for a path elsewhere."""
    match = DATA_PATH.search(Path(path).as_posix())
    if match is None:
        return None
    found = match.groupdict()
    return {**found, "seed": int(found["seed"])}


def _spell(identity: dict) -> str:
    return "{task} {encoding}/{bin} seed {seed}".format(**identity)


def check_identity(path, columns: dict[str, list], expected: dict | None = None) -> None:
    """Stop, naming the file, when its rows are not all of the (encoding, task, bin, seed) it is read
    for: `expected`, or what its path says."""
    expected = expected if expected is not None else identity_of_path(path)
    if expected is None:
        return
    for key in IDENTITY:
        if key not in expected:
            continue
        found = set(columns.get(key, ()))
        if found != {expected[key]}:
            held = ", ".join(sorted(map(str, found))) or "nothing"
            raise DamagedFile(path, f"holds data of {key} {held}, but is read as {_spell(expected)} data")


def read_examples(path, columns: list[str] | None = None, expected: dict | None = None):
    """A data file as a pyarrow Table, after checking it holds the examples it is read for."""
    wanted = None if columns is None else list(dict.fromkeys([*columns, *IDENTITY]))
    table = read_table(path, columns=wanted)
    check_identity(path, {key: table.column(key).unique().to_pylist() for key in IDENTITY}, expected)
    return table if columns is None else table.select(columns)
