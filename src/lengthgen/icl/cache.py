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

from ..results.provenance import canonical_json, config_hash
from ..results.tables import write_parquet


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
