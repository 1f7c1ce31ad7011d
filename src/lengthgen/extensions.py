"""Extension files: Python files outside the package that add task and generator records
(`register_generator`, `register_task`) before anything plans or runs.

Every process of a run must hold the same records (the workflow, and each job in its own process), so
the files travel in one environment variable, LENGTHGEN_EXTENSIONS (paths joined by os.pathsep), which
jobs inherit; `lengthgen.tasks` runs them when it is first imported, before any stage binds the task
names. The workflow sets the variable from the config's `extensions:` list; each output's provenance
records the files with their SHA-256.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

ENVIRONMENT = "LENGTHGEN_EXTENSIONS"
_loaded: dict[str, str] = {}  # resolved path -> SHA-256 of the file as it was run


class ExtensionError(ValueError):
    pass


def _paths_from_environment() -> list[str]:
    return [p for p in os.environ.get(ENVIRONMENT, "").split(os.pathsep) if p]


def load_extensions(paths: list[str] | None = None) -> None:
    """Run each extension file once (the environment's when `paths` is None)."""
    for path in _paths_from_environment() if paths is None else paths:
        resolved = Path(path).resolve()
        if str(resolved) in _loaded:
            continue
        if not resolved.is_file():
            raise ExtensionError(f"extension file {path} does not exist")
        digest = hashlib.sha256(resolved.read_bytes()).hexdigest()
        spec = importlib.util.spec_from_file_location(f"lengthgen_extension_{digest[:12]}", resolved)
        module = importlib.util.module_from_spec(spec)
        _loaded[str(resolved)] = digest  # before running it: a file that imports lengthgen.tasks runs once
        try:
            spec.loader.exec_module(module)
        except Exception:
            del _loaded[str(resolved)]
            raise


def use_extensions(paths: list[str], search: tuple[str, ...] = (".",)) -> list[str]:
    """The config's extension files, looked up in each `search` folder in turn (relative paths), run
    here and handed to every job this process starts. Returns their resolved paths."""
    resolved = []
    for path in paths:
        found = next((Path(base, path) for base in search if Path(base, path).is_file()), None)
        if found is None:
            raise ExtensionError(f"config key extensions: file {path} not found (looked in {', '.join(search)})")
        resolved.append(str(found.resolve()))
    inherited = _paths_from_environment()
    os.environ[ENVIRONMENT] = os.pathsep.join(dict.fromkeys(inherited + resolved))
    load_extensions(resolved)
    return resolved


def loaded_extensions() -> dict[str, str]:
    """The extension files this process ran, with their SHA-256 (for provenance)."""
    return dict(_loaded)
