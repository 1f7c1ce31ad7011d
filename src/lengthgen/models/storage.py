"""Models on disk: saving a Hugging Face directory whole or not at all, and a model's identity."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

WHOLE_FILE_LIMIT = 64 * 2**20  # larger weight files are fingerprinted by size, head and tail


def save_hf_directory(model, tokenizer, model_dir, extra: dict[str, str] | None = None) -> None:
    """Write model and tokenizer as one Hugging Face directory, whole or not at all; `extra`:
    further text files to write into it (name -> content)."""
    model_dir = Path(model_dir)
    partial = model_dir.with_name(f".{model_dir.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    for name, text in (extra or {}).items():
        (partial / name).write_text(text)
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


def directory_fingerprint(path: str | Path) -> str:
    """Content hash of a local model directory (weights, config, tokenizer): a retrained model
    saved at the same path gets a new identity, a copy of the same model keeps it."""
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        digest.update(file.relative_to(path).as_posix().encode())
        size = file.stat().st_size
        digest.update(str(size).encode())
        with open(file, "rb") as handle:
            if size <= WHOLE_FILE_LIMIT:
                digest.update(handle.read())
            else:
                digest.update(handle.read(2**20))
                handle.seek(size - 2**20)
                digest.update(handle.read())
    return digest.hexdigest()[:16]


def model_identity(path: str, revision: str | None, dtype: str) -> dict:
    """What makes two models the same: content (a local directory) or hub id and revision, and dtype."""
    local = Path(path).is_dir()
    return {"model": directory_fingerprint(path) if local else path,
            "revision": None if local else revision, "dtype": dtype}
