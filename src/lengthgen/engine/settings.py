"""The training engine's settings and what they build: optimiser, schedule, precision.

`TrainSettings` (lengthgen.settings, torch-free so planners build it) is the config's training
block; its defaults are the schema's alone, and a key it does not know is a ConfigError.
"""

from __future__ import annotations

import torch

from ..settings import TrainSettings

MIXED_PRECISION = {"fp32": "no", "bf16": "bf16"}


def make_accelerator(precision: str):
    """An Accelerator whose precision is the config's, never an accelerate config file's or the
    environment's (ACCELERATE_MIXED_PRECISION)."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    if precision not in MIXED_PRECISION:
        raise ValueError(f"unknown precision {precision!r}; known: {', '.join(MIXED_PRECISION)}")
    state = AcceleratorState._shared_state
    if state and state.get("_mixed_precision") != MIXED_PRECISION[precision]:
        AcceleratorState._reset_state()  # the state is a per-process singleton; runs in one process may differ
    return Accelerator(mixed_precision=MIXED_PRECISION[precision], cpu=not torch.cuda.is_available())


def precision_autocast(device: torch.device, precision: str):
    """The autocast context of a config precision: bf16 autocast, or nothing for fp32."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


# Hugging Face Trainer's rule for what is not decayed (`Trainer.get_decay_parameter_names`): LayerNorm
# modules, and parameters named like a bias or a norm. Trainer itself takes seconds to import, so its
# rule is applied through the helper it calls; tests/test_training.py compares the groups with a Trainer's.
NO_DECAY_LAYERS = (torch.nn.LayerNorm,)
NO_DECAY_NAMES = (r"bias", r"layernorm", r"rmsnorm", r"(?:^|\.)norm(?:$|\.)", r"_norm(?:$|\.)")
# Part of a checkpoint's fingerprint: one made with another optimiser layout (one group for every
# parameter, before these groups) cannot be resumed into this one and is ignored.
OPTIMIZER_LAYOUT = "trainer-decay-groups"


def decay_parameter_names(model: torch.nn.Module) -> set[str]:
    """The parameters weight decay applies to, as Trainer decides: all but biases and norm weights."""
    from transformers.trainer_pt_utils import get_parameter_names

    return set(get_parameter_names(model, list(NO_DECAY_LAYERS), list(NO_DECAY_NAMES)))


def parameter_groups(model: torch.nn.Module, weight_decay: float,
                     parameters: dict[str, torch.Tensor] | None = None) -> list[dict]:
    """Trainer's two AdamW groups: decayed parameters, then the rest with weight decay 0.
    parameters: name -> tensor to optimise in place of the model's own (a stack of runs: each stacked
    tensor under its model's parameter name)."""
    named = dict(model.named_parameters()) if parameters is None else parameters
    decay = decay_parameter_names(model)
    return [{"params": [p for n, p in named.items() if n in decay and p.requires_grad], "weight_decay": weight_decay},
            {"params": [p for n, p in named.items() if n not in decay and p.requires_grad], "weight_decay": 0.0}]


def optimizer_and_schedule(model: torch.nn.Module, settings: TrainSettings, device: torch.device,
                           parameters: dict[str, torch.Tensor] | None = None):
    """AdamW over Trainer's parameter groups, and transformers' own warm-up schedule (linear decay to 0
    at max_steps, or constant): what the authors' Trainer runs built. The fused kernel (CPU and CUDA)
    is what Trainer uses by default; it is faster."""
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(parameter_groups(model, settings.weight_decay, parameters), lr=settings.lr,
                                  fused=device.type in ("cpu", "cuda"))
    if settings.schedule == "linear":
        return optimizer, get_linear_schedule_with_warmup(optimizer, settings.warmup, settings.max_steps)
    return optimizer, get_constant_schedule_with_warmup(optimizer, settings.warmup)
