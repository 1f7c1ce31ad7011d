"""Finished in-context predictions, kept so that a rerun decodes only what it has never decoded.

A completion is stored under the model's identity (hub id and revision, or a content fingerprint
of a local directory), its dtype, the exact prompt and the decoding settings (greedy, new-token
budget, stop strings). Batch size is not part of the key: it is recorded in the predictions.

Storage: one folder per model identity; each job adds one parquet shard of its new entries,
written atomically. No locks, so concurrent jobs and cluster file systems are safe. Each shard
carries a checksum of its rows and of the identity whose keys it answers: a shard that cannot be
read, or whose rows no longer match it, is named in one warning, set aside (renamed to
`*.parquet.damaged`, nothing deleted) and its entries are computed again.
"""

from __future__ import annotations

import hashlib
import uuid
import warnings
from pathlib import Path

import polars as pl

from ..records.files import DamagedFile, read_table, sidecar_of
from ..records.provenance import canonical_json, config_hash
from ..records.tables import read_provenance, write_parquet

SET_ASIDE = ".damaged"  # suffix added to a shard that failed to read or verify


class DamagedShardWarning(UserWarning):
    """Cache shards that were set aside and whose entries will be computed again."""


def prediction_key(prompt: str, decoding: dict) -> str:
    return hashlib.sha256(canonical_json({"prompt": prompt, "decoding": decoding}).encode()).hexdigest()


def shard_checksum(folder_identity: str, keys: list[str], completions: list[str]) -> str:
    """sha256 over the identity the shard answers for and each (key, completion) in order."""
    digest = hashlib.sha256(folder_identity.encode())
    for key, completion in zip(keys, completions, strict=True):
        for text in (key, completion):
            encoded = text.encode()
            digest.update(len(encoded).to_bytes(8, "little") + encoded)
    return digest.hexdigest()


def read_shard(path) -> dict[str, str]:
    """A shard's entries, or ValueError saying why they cannot be trusted (unreadable, no checksum,
    another identity's, rows that differ from the checksum written with them)."""
    path = Path(path)
    try:
        record = read_provenance(path)
        table = read_table(path, columns=["key", "completion"])
    except DamagedFile as damaged:
        if not path.exists():
            raise FileNotFoundError(path) from None
        raise ValueError(damaged.problem) from None
    keys, completions = table.column("key").to_pylist(), table.column("completion").to_pylist()
    if "sha256" not in record:
        raise ValueError("no checksum (written before shards carried one)")
    if record.get("folder") != path.parent.name:
        raise ValueError(f"written for identity {record.get('folder')}, found under {path.parent.name}")
    if None in keys or None in completions or record.get("entries") != len(keys) or \
            shard_checksum(path.parent.name, keys, completions) != record["sha256"]:
        raise ValueError("its rows differ from the checksum written with them")
    return dict(zip(keys, completions))


class PredictionCache:
    def __init__(self, root: str | Path, identity: dict):
        self.identity = identity
        self.folder = Path(root) / config_hash(identity)
        shards = sorted(self.folder.glob("*.parquet")) if self.folder.is_dir() else []
        self.entries: dict[str, str] = {}
        set_aside = []
        for shard in shards:
            try:
                self.entries.update(read_shard(shard))
            except FileNotFoundError:
                continue  # set aside by a concurrent job meanwhile
            except ValueError as reason:
                set_aside.append(f"{shard} ({reason})")
                for file in (shard, sidecar_of(shard)):  # the shard and its sha256 sidecar, if any
                    try:
                        file.rename(file.with_name(shard.name + SET_ASIDE + file.name[len(shard.name):]))
                    except FileNotFoundError:
                        pass
        if set_aside:
            warnings.warn(f"prediction cache: set aside {len(set_aside)} shard(s) that failed to read or verify, "
                          f"renamed to *{SET_ASIDE}; their entries are computed again: {'; '.join(set_aside)}",
                          DamagedShardWarning, stacklevel=2)

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    def add(self, new: dict[str, str]) -> None:
        """Store new completions as one shard (nothing is written when there are none)."""
        new = {k: v for k, v in new.items() if k not in self.entries}
        if not new:
            return
        keys, completions = list(new), list(new.values())
        frame = pl.DataFrame({"key": keys, "completion": completions})
        record = {"identity": self.identity, "folder": self.folder.name, "entries": len(keys),
                  "sha256": shard_checksum(self.folder.name, keys, completions)}
        write_parquet(frame, self.folder / f"{uuid.uuid4().hex}.parquet", record)
        self.entries.update(new)
