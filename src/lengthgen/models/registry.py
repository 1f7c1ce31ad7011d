"""The model registry: config name -> hub id or local path, revision, kind, dtype, device.

Every model is loaded through the Auto classes (one model format for the whole pipeline; `loading`
loads an entry); `trust_remote_code` stays off unless the entry says so. A model that is neither a
local directory nor in the local Hugging Face cache nor reachable gets one clear error naming it,
and `check_available` raises it when the workflow starts, before any job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .gguf import GGUFSource
from .unavailable import ModelUnavailable


@dataclass(frozen=True)
class ModelEntry:
    """One registry entry; its fields and defaults are those of the config schema (`models`)."""

    name: str
    path: str  # a hub id ("meta-llama/Llama-3.1-8B") or a local directory
    revision: str | None
    kind: str  # "completion" | "chat"
    dtype: str
    device: str  # "auto": CUDA when present, else CPU
    trust_remote_code: bool
    gpus: int  # GPUs one job of this model asks for; more than one: placed across them by accelerate
    max_memory: dict | None  # per-device memory cap for that placement, e.g. {"0": "70GiB", "cpu": "200GiB"}
    separator: str  # in-context symbol separator: "auto", "space", "none"
    mem_mb: int | None = None  # a cluster job's host memory and minutes (the workflow's requests only)
    runtime: int | None = None
    gguf: dict | None = None  # a GGUF source ({file, package, version}); `path` is then its conversion
    search: tuple[str, ...] = (".",)  # where relative paths were looked up (a GGUF file's too)

    @classmethod
    def from_config(cls, name: str, entry: dict, search: tuple[str | Path, ...] = (".",)) -> ModelEntry:
        """A validated registry entry. A relative `path` is looked up in each folder of `search` in
        turn (the working directory, then the workflow's own, where the shipped models live), and
        kept relative where it lies inside the working directory (`project_path`). A GGUF entry
        without `path` is converted to `results/models/NAME`."""
        path = entry.get("path") or converted_path(name)
        if not Path(path).is_absolute():
            for root in search:
                if (Path(root) / path).exists():
                    path = project_path(Path(root) / path)
                    break
        return cls(name=name, **{**entry, "path": path, "search": tuple(map(str, search))})

    @property
    def is_local(self) -> bool:
        return Path(self.path).is_dir()


def project_path(path) -> str:
    """A path inside the working directory (the project: repository, config and results) relative
    to it, so that a project copied or moved elsewhere records the same inputs and parameters and
    Snakemake reruns nothing; a path outside it, absolute."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(resolved)


def converted_path(name: str) -> str:
    """Where the workflow writes the Hugging Face conversion of a GGUF registry entry."""
    return f"results/models/{name}"


def check_available(entry: ModelEntry) -> None:
    """Raise ModelUnavailable unless the model can be loaded without surprises (a GGUF entry: its
    conversion exists, or the file it is converted from does)."""
    if entry.gguf is not None and not (Path(entry.path) / "config.json").exists():
        GGUFSource.of(entry.gguf).locate(entry.name, entry.search)
        return
    if entry.is_local:
        if not (Path(entry.path) / "config.json").exists():
            raise ModelUnavailable(
                f"model {entry.name!r}: {entry.path} has no config.json (not a Hugging Face model directory)")
        return
    if entry.path.startswith((".", "/", "~")) or entry.path.count("/") > 1:  # not a hub id: a missing path
        raise ModelUnavailable(f"model {entry.name!r}: local path {entry.path} does not exist")
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.constants import HF_HUB_OFFLINE

    cached = try_to_load_from_cache(entry.path, "config.json", revision=entry.revision)
    if isinstance(cached, str):
        return
    if HF_HUB_OFFLINE:
        raise ModelUnavailable(
            f"model {entry.name!r} ({entry.path}) is not a local directory and not in the Hugging Face cache, "
            "and the hub is offline (HF_HUB_OFFLINE=1): download it first or point `path` at a local copy")
    try:
        from huggingface_hub import model_info

        model_info(entry.path, revision=entry.revision, timeout=10)
    except Exception as error:  # network errors, missing repos, gated repos without a token
        raise ModelUnavailable(
            f"model {entry.name!r} ({entry.path}) is not a local directory, not in the Hugging Face cache and "
            f"not reachable on the hub: {type(error).__name__}: {str(error).splitlines()[0][:200]}") from None
