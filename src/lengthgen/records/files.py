"""Reading files from disk: one that cannot be read stops with one line naming it and what to do.

Every reader of parquet tables, safetensors weights and JSON config files goes through here, so
a truncated or damaged file is reported as `DamagedFile` ("PATH: cannot be read (...): delete
it and rerun the target: snakemake TARGET") instead of a library's traceback without the path.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from ..runtime import ExpectedFailure

RESULTS = "results"  # the workflow's output folder: what lies under it, Snakemake can make again


class DamagedFile(ExpectedFailure, ValueError):
    """A file that is missing, cannot be read, or differs from what was written."""

    def __init__(self, path, problem: str, owner=None):
        """owner: the output that holds the file (a model directory), remade as a whole."""
        self.path, self.problem = Path(path), problem
        super().__init__(f"{path}: {problem}: {remedy_for(path, owner)}")


def rebuild_target(path, owner=None) -> str | None:
    """The Snakemake target that remakes `path`, relative to the workflow directory: the file itself,
    or the model directory it lies in (`owner`, or a parent with a config.json); None for a file
    this workflow does not make."""
    path = Path(path)
    if owner is None:
        owner = path.parent if not path.is_dir() and (path.parent / "config.json").is_file() else path
    parts = Path(owner).parts
    if RESULTS not in parts:
        return None
    start = len(parts) - 1 - parts[::-1].index(RESULTS)
    return Path(*parts[start:]).as_posix()


def remedy_for(path, owner=None) -> str:
    target = rebuild_target(path, owner)
    if target is None:
        return "replace it with a good copy (this workflow does not make it)"
    if not Path(path).exists():
        return f"make it again: snakemake {target}"
    what = "it" if Path(path).as_posix().endswith(target) else target
    return f"delete {what} and rerun the target: snakemake {target}"


def _problem(error: BaseException) -> str:
    if isinstance(error, FileNotFoundError):
        return "missing"
    text = (str(error).strip().splitlines() or [""])[0][:200]
    return f"cannot be read ({type(error).__name__}: {text})" if text else f"cannot be read ({type(error).__name__})"


def _read_errors() -> tuple[type[BaseException], ...]:
    """What the readers raise on a bad file (polars' Rust panics derive from BaseException)."""
    import polars as pl
    import pyarrow as pa

    errors = [OSError, ValueError, EOFError, pa.ArrowException, pl.exceptions.PolarsError]
    try:
        from safetensors import SafetensorError

        errors.append(SafetensorError)
    except ImportError:
        pass
    return tuple(errors)


@contextmanager
def reading(path):
    """Turn any failure to read `path` inside the block into DamagedFile naming it."""
    try:
        yield
    except DamagedFile:
        raise
    except BaseException as error:
        if isinstance(error, _read_errors()) or type(error).__name__ == "PanicException":
            raise DamagedFile(path, _problem(error)) from None
        raise


def read_table(path, columns=None):
    """A parquet file as a pyarrow Table."""
    import pyarrow.parquet as pq

    with reading(path):
        return pq.read_table(path, columns=columns)


def read_frame(path, columns=None):
    """A parquet file as a polars DataFrame."""
    import polars as pl

    with reading(path):
        return pl.read_parquet(path, columns=columns)


def read_schema(path):
    """A parquet file's schema (with its metadata), without its rows."""
    import pyarrow.parquet as pq

    with reading(path):
        return pq.read_schema(path)


def read_json(path):
    with reading(path):
        return json.loads(Path(path).read_text())


def check_safetensors(path) -> None:
    """Open a weights file's header: a truncated file fails here (its data no longer fits the header)."""
    from safetensors import safe_open

    with reading(path), safe_open(str(path), framework="numpy") as handle:
        handle.keys()


def check_readable(path) -> None:
    """Read a file this project writes, whole: parquet, safetensors, JSON (others: their bytes)."""
    name = Path(path).name
    if name.endswith(".parquet"):
        read_table(path)
    elif name.endswith(".safetensors"):
        check_safetensors(path)
    elif name.endswith(".json"):
        read_json(path)
    else:
        with reading(path):
            Path(path).read_bytes()
