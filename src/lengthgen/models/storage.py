"""Models on disk: saving a Hugging Face directory whole or not at all, with a manifest of its files'
sha256 that every load checks, and a model's identity."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from ..records.files import PLACE_NOTE, DamagedFile, check_place, check_safetensors, read_json, results_place, sha256_of

WHOLE_FILE_LIMIT = 64 * 2**20  # larger files enter a fingerprint by their sha256, kept in the hash cache
HASH_CACHE_ENV = "LENGTHGEN_HASH_CACHE"  # the file that keeps them (default ~/.cache/lengthgen/sha256.json)
HASH_CACHE_ENTRIES = 4096
MANIFEST = "manifest.sha256"  # each file's sha256 as `sha256sum` writes it (`sha256sum -c` checks it by hand)


def save_hf_directory(model, tokenizer, model_dir, extra: dict[str, str] | None = None) -> None:
    """Write model and tokenizer as one Hugging Face directory, whole or not at all, with its
    manifest; `extra`: further text files to write into it (name -> content)."""
    model_dir = Path(model_dir)
    partial = model_dir.with_name(f".{model_dir.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    for name, text in (extra or {}).items():
        (partial / name).write_text(text)
    write_manifest(partial, place=results_place(model_dir))
    readable_by_all(partial)
    shutil.rmtree(model_dir, ignore_errors=True)
    partial.rename(model_dir)


def readable_by_all(folder: Path) -> None:
    """Give every file the permissions the user's umask gives new files (safetensors writes its
    weights 0600, which a collaborator on a shared cluster could not read)."""
    mask = os.umask(0)
    os.umask(mask)
    for file in folder.rglob("*"):
        if file.is_file():
            os.chmod(file, 0o666 & ~mask)


def _model_files(folder: Path) -> list[Path]:
    """The files a manifest lists: all but the manifest and hidden ones (Snakemake's timestamp)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def write_manifest(folder, place: str | None = None) -> None:
    """place: where under results/ the model goes (a comment line that `sha256sum -c` skips)."""
    folder = Path(folder)
    lines = [f"{PLACE_NOTE}{place}\n"] if place is not None else []
    lines += [f"{sha256_of(f)}  {f.relative_to(folder).as_posix()}\n" for f in _model_files(folder)]
    (folder / MANIFEST).write_text("".join(lines))


def manifest_place(folder) -> str | None:
    """Where under results/ the model was written (None: not noted, or no manifest)."""
    path = Path(folder) / MANIFEST
    first = path.read_text().partition("\n")[0] if path.is_file() else ""
    return first.removeprefix(PLACE_NOTE) if first.startswith(PLACE_NOTE) else None


def read_manifest(folder) -> dict[str, str] | None:
    """file name -> sha256 as written with the model (None: a directory without a manifest)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    entries = {}
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue  # a note (where it was written), as `sha256sum -c` skips it
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise DamagedFile(path, f"line {line[:80]!r} is not `SHA256  FILE`", owner=folder)
        entries[name] = digest
    return entries


_VERIFIED: dict[str, tuple] = {}  # directory -> (name, size, mtime) of its files when last verified


def verify_model_directory(folder) -> bool:
    """Check every file of a model directory against its manifest; DamagedFile names the first one
    that is missing, differs, or is not listed. False: the directory has no manifest to check."""
    folder = Path(folder)
    expected = read_manifest(folder)
    if expected is None:
        return False
    files = _model_files(folder)
    state = tuple((f.relative_to(folder).as_posix(), (s := f.stat()).st_size, s.st_mtime_ns) for f in files)
    check_place(folder, manifest_place(folder), owner=folder)
    if _VERIFIED.get(str(folder.resolve())) == state:
        return True
    for name, digest in expected.items():
        file = folder / name
        if not file.is_file():
            raise DamagedFile(file, "missing, though the manifest written with the model lists it", owner=folder)
        if sha256_of(file) != digest:
            raise DamagedFile(file, f"differs from the sha256 in {MANIFEST}, written with the model", owner=folder)
    for file in files:
        if file.relative_to(folder).as_posix() not in expected:
            raise DamagedFile(file, f"not in {MANIFEST}, written with the model (added since)", owner=folder)
    _VERIFIED[str(folder.resolve())] = state
    return True


def unreadable_file(folder) -> DamagedFile | None:
    """The first weights or JSON file of a model directory that cannot be read, if any."""
    for file in sorted(Path(folder).rglob("*")):
        try:
            if file.suffix == ".safetensors":
                check_safetensors(file)
            elif file.suffix == ".json":
                read_json(file)
        except DamagedFile as damaged:
            return damaged
    return None


def hash_cache_path() -> Path:
    if os.environ.get(HASH_CACHE_ENV):
        return Path(os.environ[HASH_CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lengthgen" / "sha256.json"


def _stat_key(file: Path) -> str:
    """What a change to the file changes: its path, size, modification and status-change times and
    inode (a same-size edit in place changes the times; a file replaced by another, the inode)."""
    s = file.stat()
    return f"{file.resolve()}|{s.st_size}|{s.st_mtime_ns}|{s.st_ctime_ns}|{s.st_ino}"


def _load_hash_cache(path: Path) -> dict[str, str]:
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every large file is hashed again
    return {k: v for k, v in entries.items() if isinstance(v, str) and len(v) == 64} if isinstance(entries, dict) else {}


def _store_hash_cache(path: Path, entries: dict[str, str]) -> None:
    """Written atomically; a concurrent job's entries may be lost (they are hashed again), never mixed."""
    entries = dict(list(entries.items())[-HASH_CACHE_ENTRIES:])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w") as handle:
            json.dump(entries, handle)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache only: a read-only home or a full disk costs time, not correctness


def large_file_sha256(file: Path) -> str:
    """The sha256 of a whole large file, computed once per (path, size, times, inode) and kept in
    the hash cache so that a model's identity costs a stat per file on later runs."""
    cache = hash_cache_path()
    entries = _load_hash_cache(cache)
    key = _stat_key(file)
    if key not in entries:
        digest = sha256_of(file)
        if key == _stat_key(file):  # unchanged while it was read
            entries = {k: v for k, v in _load_hash_cache(cache).items() if not k.startswith(f"{file.resolve()}|")}
            entries[key] = digest
            _store_hash_cache(cache, entries)
        return digest
    return entries[key]


def directory_fingerprint(path: str | Path) -> str:
    """Content hash of a local model directory (weights, config, tokenizer; not its manifest): a
    retrained model saved at the same path gets a new identity, a copy of the same model keeps it.
    Every byte counts: files up to WHOLE_FILE_LIMIT are hashed in, larger ones by their sha256."""
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(path).rglob("*") if p.is_file() and p.name != MANIFEST):
        digest.update(file.relative_to(path).as_posix().encode())
        size = file.stat().st_size
        digest.update(str(size).encode())
        if size <= WHOLE_FILE_LIMIT:
            digest.update(file.read_bytes())
        else:
            digest.update(b"sha256:" + large_file_sha256(file).encode())
    return digest.hexdigest()[:16]


def model_identity(path: str, revision: str | None, dtype: str) -> dict:
    """What makes two models the same: content (a local directory) or hub id and revision, and dtype."""
    local = Path(path).is_dir()
    return {"model": directory_fingerprint(path) if local else path,
            "revision": None if local else revision, "dtype": dtype}
