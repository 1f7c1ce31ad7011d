"""Reading and writing files on disk: one that cannot be read or written stops with one line naming
it and what to do.

Every reader of parquet tables, safetensors weights and JSON config files goes through here, so
a truncated or damaged file is reported as `DamagedFile` ("PATH: cannot be read (...): delete
it and rerun the target: snakemake TARGET") instead of a library's traceback without the path.

Every file written with `atomic_path(..., checksum=True)` (each parquet table, each training
checkpoint) gets a sidecar `FILE.sha256` in `sha256sum` format, and every read through here checks
it before any library parses the file: a changed bit is `DamagedFile`, not a wrong number (or a
parser's crash). Ordering: the new file is written and hashed under a temporary name, the old
sidecar removed, the file renamed into place, then its sidecar written (atomically too). A crash
in between leaves a file without a sidecar (read unverified, as files written before sidecars),
never a fresh file beside a stale sidecar. The sidecar also notes the file's inode: a path that
is a link to another file (an entry of Snakemake's between-workflow cache that another workflow
made, linked in where a sidecar of an older file lies) is not checked against it. It notes the
place under `results/` the file was written at too: another task's file copied in with its
sidecar checks out byte for byte, but not at the place it was copied to. A failed write (a full
disk) is `WriteFailed`, naming the file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..runtime import ExpectedFailure, on_failure

RESULTS = "results"  # the workflow's output folder: what lies under it, Snakemake can make again
SIDECAR = ".sha256"  # FILE.sha256 beside FILE: its sha256 as `sha256sum` writes it
INODE_NOTE = "# written as inode "  # the sidecar's second line, a comment that `sha256sum -c` skips
PLACE_NOTE = "# written at "  # its third (and a model manifest's first): the path from results/ on
_UMASK = os.umask(0)
os.umask(_UMASK)


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
    return results_place(owner)


def results_place(path) -> str | None:
    """A path from its (last) `results` folder on: where the workflow wrote it, wherever the project
    lies; None for a path outside one."""
    parts = Path(path).parts
    if RESULTS not in parts:
        return None
    start = len(parts) - 1 - parts[::-1].index(RESULTS)
    return Path(*parts[start:]).as_posix()


def check_place(path, written_at: str | None, owner=None) -> None:
    """DamagedFile when a file (or model directory) written at one place under results/ now lies at
    another: a copy of another task's output, which would be read as this one's."""
    here = results_place(path)
    if written_at is not None and here is not None and written_at != here:
        raise DamagedFile(path, f"was written at {written_at} (another output's file, copied here)", owner=owner)


def remedy_for(path, owner=None) -> str:
    target = rebuild_target(path, owner)
    if target is None:
        return "replace it with a good copy (this workflow does not make it)"
    if not Path(path).exists():
        return f"make it again: snakemake {target}"
    what = "it" if Path(path).as_posix().endswith(target) else target
    return f"delete {what} and rerun the target: snakemake {target}"


class WriteFailed(ExpectedFailure, OSError):
    """A file that could not be written (a full disk, a folder without write permission)."""

    def __init__(self, path, error: BaseException, remedy: str | None = None):
        self.path = Path(path)
        if getattr(error, "errno", None) == errno.ENOSPC or os.strerror(errno.ENOSPC) in str(error):  # pyarrow: in its text
            reason, fix = "no space left on device", "free space on its file system"
        else:
            text = (str(error).strip().splitlines() or [""])[0][:200]
            reason = f"{type(error).__name__}: {text}" if text else type(error).__name__
            fix = "check that its folder can be written and has free space"
        target = rebuild_target(path)
        remedy = remedy or (f"{fix} and rerun the target: snakemake {target}" if target else f"{fix} and rerun")
        super().__init__(f"{path}: cannot be written ({reason}): {remedy}")


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
    except ExpectedFailure:
        raise
    except BaseException as error:
        if isinstance(error, _read_errors()) or type(error).__name__ == "PanicException":
            raise DamagedFile(path, _problem(error)) from None
        raise


# -- checksums -------------------------------------------------------------------------------------

def sidecar_of(path) -> Path:
    path = Path(path)
    return path.with_name(path.name + SIDECAR)


def drop_sidecars(outputs) -> None:
    """After a failed job: Snakemake removes its outputs (a partial table), so their sidecars go
    too, rather than lie beside nothing (or beside the old file, under --keep-incomplete)."""
    for output in outputs:
        sidecar_of(output).unlink(missing_ok=True)


on_failure(drop_sidecars)  # every job that can write a sidecar has imported this module


def sha256_of(path, chunk: int = 2**24) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def read_sidecar(path) -> tuple[str, str | None, str | None] | None:
    """The sha256 written with `path`, the inode (`DEV:INO`) it was written as and the place under
    results/ it was written at (None: no sidecar, a file written before they existed)."""
    sidecar = sidecar_of(path)
    try:
        text = sidecar.read_text()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise DamagedFile(sidecar, _problem(error), owner=path) from None
    first, *rest = text.splitlines() or [""]
    digest, _, name = first.partition("  ")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or name != Path(path).name:
        raise DamagedFile(sidecar, f"is not `SHA256  {Path(path).name}`", owner=path)
    inode = next((line.removeprefix(INODE_NOTE) for line in rest if line.startswith(INODE_NOTE)), None)
    place = next((line.removeprefix(PLACE_NOTE) for line in rest if line.startswith(PLACE_NOTE)), None)
    return digest, inode, place


def _inode(stat: os.stat_result) -> str:
    return f"{stat.st_dev}:{stat.st_ino}"


_VERIFIED: dict[str, tuple] = {}  # file -> its and its sidecar's (size, mtime) when last verified


def verify_checksum(path) -> bool:
    """Check `path` against its sidecar: DamagedFile when it differs. False: no sidecar to check."""
    path = Path(path)
    try:
        state = tuple((s.st_size, s.st_mtime_ns, s.st_ino) for s in (path.stat(), sidecar_of(path).stat()))
    except FileNotFoundError:
        if not path.exists():
            raise DamagedFile(path, "missing") from None
        return False  # no sidecar
    key = str(path.absolute())
    if _VERIFIED.get(key) == state:
        return True
    recorded = read_sidecar(path)
    if recorded is None:
        return False
    digest, inode, place = recorded
    if path.is_symlink() and inode is not None and inode != _inode(path.stat()):
        # A link to a file other than the one written here: Snakemake's between-workflow cache
        # links an entry another workflow made. (A file it moved into the cache keeps its inode.)
        return False
    with reading(path):
        actual = sha256_of(path)
    if actual != digest:
        raise DamagedFile(path, f"differs from the sha256 in {sidecar_of(path).name}, written with it")
    check_place(path, place)
    _VERIFIED[key] = state
    return True


# -- writing -----------------------------------------------------------------------------------------

def _write_text_atomically(path: Path, text: str) -> None:
    """OSError when it cannot be written (the caller names the file it belongs to)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_path(path: str | os.PathLike, checksum: bool = False, remedy: str | None = None):
    """Yield a temporary path beside `path`; rename it into place only if the block succeeds.

    checksum: write the sidecar `path.sha256` too (after the file: see the module's docstring).
    A failure to write (a full disk) is WriteFailed naming `path` (`remedy`: what to do then)."""
    path = Path(path)
    sidecar = sidecar_of(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as error:
        raise WriteFailed(path, error, remedy) from None
    try:
        yield Path(tmp)
        digest = sha256_of(tmp) if checksum else None
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's private 0600 would hide results from the rest of a group
        inode = _inode(os.stat(tmp))
        sidecar.unlink(missing_ok=True)  # never a fresh file beside the sidecar of an old one
        os.replace(tmp, path)
        if digest is not None:
            place = results_place(path)
            note = f"{PLACE_NOTE}{place}\n" if place is not None else ""
            _write_text_atomically(sidecar, f"{digest}  {path.name}\n{INODE_NOTE}{inode}\n{note}")
    except ExpectedFailure:
        raise
    except OSError as error:
        raise WriteFailed(path, error, remedy) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# -- reading -----------------------------------------------------------------------------------------

def read_table(path, columns=None):
    """A parquet file as a pyarrow Table."""
    import pyarrow.parquet as pq

    with reading(path):
        verify_checksum(path)
        return pq.read_table(path, columns=columns)


def read_frame(path, columns=None):
    """A parquet file as a polars DataFrame."""
    import polars as pl

    with reading(path):
        verify_checksum(path)
        return pl.read_parquet(path, columns=columns)


def read_schema(path):
    """A parquet file's schema (with its metadata), without its rows."""
    import pyarrow.parquet as pq

    with reading(path):
        verify_checksum(path)
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
    if name.endswith(".parquet"):  # its sidecar checked before it is parsed
        read_table(path)
    elif name.endswith(".safetensors"):
        with reading(path):
            verify_checksum(path)
        check_safetensors(path)
    elif name.endswith(".json"):
        with reading(path):
            verify_checksum(path)
        read_json(path)
    else:
        with reading(path):
            if not verify_checksum(path):
                Path(path).read_bytes()
