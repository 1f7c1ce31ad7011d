"""What made a result: config subsection and its hash, code and package versions, seed, host.

Every table the workflow writes carries this record in its parquet metadata, so a number can
always be traced back to the settings and code that produced it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import socket
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import __version__
from ..extensions import loaded_extensions

PACKAGES = ("torch", "transformers", "snakemake", "numpy", "polars", "pyarrow")


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def config_hash(section) -> str:
    """Short stable hash of a config subsection (key order does not matter)."""
    return hashlib.sha256(canonical_json(section).encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """Commit of the checkout the library runs from, '+dirty' when it has uncommitted changes."""
    source = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def code_version() -> str:
    commit = git_commit()
    return f"{__version__}+{commit[:12]}{'-dirty' if commit.endswith('+dirty') else ''}" if commit else __version__


def package_versions() -> dict[str, str | None]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


SCHEDULER_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "CUDA_VISIBLE_DEVICES")


def scheduler() -> dict:
    """The batch job (and the GPUs it was given) that made an output, when there is one."""
    return {name.lower(): os.environ[name] for name in SCHEDULER_VARIABLES if name in os.environ}


def collect(section, *, seed=None, device: str = "cpu", extra: dict | None = None) -> dict:
    """The provenance record of one output made from `section` (the rule's params)."""
    record = {
        "config": section,
        "config_hash": config_hash(section),
        "lengthgen_version": __version__,
        "code_version": code_version(),
        "git_commit": git_commit(),
        "packages": package_versions(),
        "seed": seed,
        "device": device,
        "host": socket.gethostname(),
        "scheduler": scheduler(),
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    if extensions := loaded_extensions():
        record["extensions"] = extensions
    if extra:
        record.update(extra)
    return record


@dataclass(frozen=True)
class Provenance:
    """What an output was made from: its rule's config slice, which is recorded and hashed but
    never read. A writer that only records its settings takes this instead of the settings."""

    config: Any

    def record(self, *, seed=None, device: str = "cpu", extra: dict | None = None) -> dict:
        return collect(self.config, seed=seed, device=device, extra=extra)
