"""GGUF files converted into Hugging Face directories, once, and described (quantisation, size).

transformers reads a GGUF file (`from_pretrained(folder, gguf_file=name)`, with the `gguf`
package; `loading.read_gguf`) and dequantises its tensors into a stock model class; the result
still says it came from GGUF and refuses `save_pretrained`. The conversion rebuilds the model from
its plain configuration, copies the dequantised weights in (exactly, in float32), and saves model,
tokenizer and a `conversion.json` that says what it was made from. Every later job loads that
directory like any other model: one model format for the whole pipeline.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .loading import read_gguf
from .storage import save_hf_directory, sha256_of

CONVERSION_RECORD = "conversion.json"


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
    from transformers import AutoModelForCausalLM

    gguf_path = Path(gguf_path)
    loaded, tokenizer = read_gguf(gguf_path)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # what made `loaded` unsaveable; the weights are already plain tensors
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model = model.to(getattr(torch, dtype)).eval()
    model.config.dtype = dtype
    record = {"gguf_file": gguf_path.name, "sha256": sha256_of(gguf_path), "quantisation": quantisation(gguf_path),
              "dtype": dtype, "transformers": transformers.__version__, **(source or {"package": None,
                                                                                     "package_version": None})}
    save_hf_directory(model, tokenizer, out_dir, extra={CONVERSION_RECORD: json.dumps(record, indent=2,
                                                                                       sort_keys=True) + "\n"})
    return record
