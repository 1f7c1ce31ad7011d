"""The model registry: config name -> hub id or local path, revision, kind, dtype, device.

Every model is loaded through the Auto classes (one model format for the whole pipeline; `loading`
loads an entry); `trust_remote_code` stays off unless the entry says so. A model that is neither a
local directory nor in the local Hugging Face cache nor reachable gets one clear error naming it,
and `check_available` raises it when the workflow starts, before any job.
"""

from __future__ import annotations

import json
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .gguf import GGUFSource
from .storage import MANIFEST
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
        check_gguf_file(entry.name, GGUFSource.of(entry.gguf).locate(entry.name, entry.search))
        return
    if entry.is_local:
        check_model_directory(entry.name, Path(entry.path))
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


# The files a tokenizer loads from: a fast tokenizer's one file, or a slow one's vocabulary.
TOKENIZER_FILES = (("tokenizer.json",), ("vocab.json", "merges.txt"), ("tokenizer.model",), ("vocab.txt",))


def check_gguf_file(name: str, path: Path) -> None:
    """A GGUF file starts with the magic bytes `GGUF` (else it is no GGUF file, or another file)."""
    with open(path, "rb") as file:
        magic = file.read(4)
    if magic != b"GGUF":
        raise ModelUnavailable(f"model {name!r}: {path} is not a GGUF file (it starts with {magic!r}, not b'GGUF')")


def check_model_directory(name: str, directory: Path) -> None:
    """A local Hugging Face model directory is complete before any job loads it: a readable
    config.json, tokenizer files, and weights whose headers declare exactly the bytes on disk."""
    def problem(what):
        return ModelUnavailable(f"model {name!r}: {directory}: {what}")

    try:
        json.loads((directory / "config.json").read_text())
    except FileNotFoundError:
        raise problem("has no config.json (not a Hugging Face model directory)") from None
    except (ValueError, OSError) as error:
        raise problem(f"config.json is not readable JSON ({error})") from None
    if not any(all((directory / f).is_file() for f in files) for files in TOKENIZER_FILES):
        raise problem("has no tokenizer files (tokenizer.json, vocab.json and merges.txt, tokenizer.model or vocab.txt)")
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (ValueError, KeyError, AttributeError) as error:
            raise problem(f"{index.name} is not a readable shard index ({error!r})") from None
        missing = [s for s in shards if not (directory / s).is_file()]
        if missing:
            raise problem(f"{index.name} lists shards that do not exist: {', '.join(missing)}")
    if (directory / MANIFEST).is_file():
        return  # a model this workflow wrote: every load checks its files' sha256 and names the remedy
    weights = sorted(directory.glob("*.safetensors")) + sorted(directory.glob("pytorch_model*.bin"))
    if not weights:
        raise problem("has no weights (*.safetensors or pytorch_model*.bin)")
    for path in weights:
        what = _safetensors_problem(path) if path.suffix == ".safetensors" else _torch_bin_problem(path)
        if what:
            raise problem(f"{path.name} {what}")


def _safetensors_problem(path: Path) -> str | None:
    """Why a safetensors file is incomplete (its header's declared data size is not the file's), or None."""
    size = path.stat().st_size
    with open(path, "rb") as file:
        head = file.read(8)
        if len(head) < 8:
            return f"is truncated ({size} bytes, no header)"
        length = struct.unpack("<Q", head)[0]
        if 8 + length > size:
            return f"is truncated ({size} bytes; its header alone declares {8 + length})"
        try:
            header = json.loads(file.read(length))
        except ValueError:
            return "has an unreadable header (not a safetensors file)"
    ends = [t["data_offsets"][1] for key, t in header.items() if key != "__metadata__"]
    expected = 8 + length + max(ends, default=0)
    if expected != size:
        return f"is {size} bytes, but its header declares {expected} (truncated or damaged)"
    return None


def _torch_bin_problem(path: Path) -> str | None:
    """Why a PyTorch weights file cannot be loaded (not a complete zip archive), or None."""
    if not zipfile.is_zipfile(path):
        return "is not a complete PyTorch archive (truncated or damaged)"
    try:
        with zipfile.ZipFile(path) as archive:
            archive.namelist()
    except (zipfile.BadZipFile, OSError) as error:
        return f"is not a readable PyTorch archive ({error})"
    return None
