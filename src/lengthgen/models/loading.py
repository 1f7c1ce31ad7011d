"""Loading models and tokenizers: the one place that calls `from_pretrained`.

Registry entries (a hub id or a local directory: on the entry's device, or placed across GPUs by
accelerate), models this workflow trained (float32 on the job's device, for evaluation), and GGUF
files read for their conversion. A local directory is checked against its manifest first, and a
file that fails to load is named (DamagedFile) instead of a library error without its path.
"""

from __future__ import annotations

from pathlib import Path

from ..devices import pick_device
from ..records.files import reading
from .registry import ModelEntry, check_available
from .storage import unreadable_file, verify_model_directory
from .unavailable import ModelUnavailable


def load_pretrained(loader, path, **options):
    """`loader.from_pretrained(path, **options)` (an Auto class), a local directory first checked
    against its manifest; a file that fails to load is named (DamagedFile) instead of a library
    error without its path."""
    local = Path(path).is_dir()
    if local:
        verify_model_directory(path)
    try:
        return loader.from_pretrained(path, **options)
    except Exception:
        damaged = unreadable_file(path) if local else None
        if damaged is not None:
            raise damaged from None
        raise


def _loading(entry: ModelEntry, loader):
    try:
        return loader()
    except OSError as error:
        raise ModelUnavailable(f"model {entry.name!r} ({entry.path}): {str(error).splitlines()[0]}") from None


def load_tokenizer(entry: ModelEntry):
    from transformers import AutoTokenizer

    check_available(entry)
    return _loading(entry, lambda: load_pretrained(AutoTokenizer, entry.path, revision=entry.revision,
                                                   trust_remote_code=entry.trust_remote_code))


def spread(entry: ModelEntry) -> bool:
    """Whether the model is placed across devices (several GPUs, or a memory cap that offloads)
    instead of moved whole to one."""
    return entry.gpus > 1 or entry.max_memory is not None


def load_model(entry: ModelEntry, check: bool = True, offload_folder: str | None = None):
    """The model in eval mode: on the entry's device, or, for an entry with several GPUs or a memory
    cap, placed layer by layer by accelerate (`device_map="auto"`, spilling to the CPU and then to
    `offload_folder` past `max_memory`). `check=False` when the caller just checked availability."""
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM

    if check:
        check_available(entry)
    dtype = entry.dtype if entry.dtype == "auto" else getattr(torch, entry.dtype)
    options = dict(revision=entry.revision, dtype=dtype, trust_remote_code=entry.trust_remote_code)
    if spread(entry):
        memory = {int(k) if str(k).isdigit() else k: v for k, v in (entry.max_memory or {}).items()}
        options.update(device_map="auto", max_memory=memory or None,
                       offload_folder=offload_folder or tempfile.mkdtemp(prefix="lengthgen-offload-"))
    model = _loading(entry, lambda: load_pretrained(AutoModelForCausalLM, entry.path, **options))
    return (model if spread(entry) else model.to(pick_device(entry.device))).eval()


def load(entry: ModelEntry):
    """(model, tokenizer) on the entry's device, in eval mode; availability checked once."""
    tokenizer = load_tokenizer(entry)
    return load_model(entry, check=False), tokenizer


def load_trained(model_dir):
    """A model this workflow trained or pretrained, in float32 on the job's device and in eval mode,
    for evaluation and analysis; its directory checked against the manifest written with it."""
    import torch
    from transformers import AutoModelForCausalLM

    return load_pretrained(AutoModelForCausalLM, model_dir, dtype=torch.float32).to(pick_device()).eval()


def load_trained_tokenizer(model_dir):
    """A trained model's tokenizer (its directory checked against the manifest written with it)."""
    from transformers import AutoTokenizer

    return load_pretrained(AutoTokenizer, model_dir)


def read_gguf(path: Path):
    """(model, tokenizer) of a GGUF file, dequantised by transformers into float32 tensors (a model
    that refuses `save_pretrained`: `gguf.convert` rebuilds it); a file that cannot be read is named."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(path.parent), path.name
    with reading(path):
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        return AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32), tokenizer
