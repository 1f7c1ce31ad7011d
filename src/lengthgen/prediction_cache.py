"""Finished in-context predictions, kept so that a rerun decodes only what it has never decoded.

A completion is stored under the model's identity (hub id and revision, or a content fingerprint
of a local directory), its dtype, the exact prompt and the decoding settings (greedy, new-token
budget, stop strings). Batch size is not part of the key: it is recorded in the predictions.

Storage: one folder per model identity; each job adds one parquet shard of its new entries,
written atomically. No locks, so concurrent jobs and cluster file systems are safe.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import polars as pl

from .provenance import canonical_json, config_hash
from .tables import write_parquet

WHOLE_FILE_LIMIT = 64 * 2**20  # larger weight files are fingerprinted by size, head and tail


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
    local = Path(path).is_dir()
    return {"model": directory_fingerprint(path) if local else path,
            "revision": None if local else revision, "dtype": dtype}


def prediction_key(prompt: str, decoding: dict) -> str:
    return hashlib.sha256(canonical_json({"prompt": prompt, "decoding": decoding}).encode()).hexdigest()


class PredictionCache:
    def __init__(self, root: str | Path, identity: dict):
        self.identity = identity
        self.folder = Path(root) / config_hash(identity)
        shards = sorted(self.folder.glob("*.parquet")) if self.folder.is_dir() else []
        self.entries: dict[str, str] = {}
        for shard in shards:
            frame = pl.read_parquet(shard, columns=["key", "completion"])
            self.entries.update(zip(frame.get_column("key").to_list(), frame.get_column("completion").to_list()))

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    def add(self, new: dict[str, str]) -> None:
        """Store new completions as one shard (nothing is written when there are none)."""
        new = {k: v for k, v in new.items() if k not in self.entries}
        if not new:
            return
        frame = pl.DataFrame({"key": list(new), "completion": list(new.values())})
        write_parquet(frame, self.folder / f"{uuid.uuid4().hex}.parquet", {"identity": self.identity})
        self.entries.update(new)
