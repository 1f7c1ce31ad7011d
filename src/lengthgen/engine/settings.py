"""The training engine's settings and what they build: optimiser, schedule, precision.

The config schema (`$defs/training`) is the one source of these settings' defaults:
`TrainSettings` has none of its own and refuses a key it does not know, so a setting can never be
silently dropped on its way from the config to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch


@dataclass
class TrainSettings:
    lr: float
    weight_decay: float
    batch_size: int
    max_steps: int
    eval_every: int
    eval_examples: int  # validation examples (windows, for pretraining) at every evaluation
    eval_batch_size: int
    warmup_steps: int
    warmup_ratio: float | None  # a share of max_steps, instead of warmup_steps
    schedule: str  # "linear" (decay to 0 at max_steps) or "constant"
    precision: str  # "fp32" or "bf16"
    checkpoint_every: int
    length_buckets: int  # micro-batches of similar lengths per step (same gradient, less padding)
    max_grad_norm: float | None  # gradient clipping by global norm (None: none)
    early_stop: bool  # stop once validation accuracy reaches 1.0
    keep: str  # "last" or "best" (by validation accuracy)

    @property
    def warmup(self) -> int:
        """Warm-up steps: warmup_ratio of max_steps when given, else warmup_steps."""
        return round(self.warmup_ratio * self.max_steps) if self.warmup_ratio is not None else self.warmup_steps

    @classmethod
    def from_config(cls, section: dict, **stage) -> TrainSettings:
        """Settings from a validated config block plus the stage's own choices (`keep`, a resolved
        `schedule`); an unknown or missing key is an error."""
        given = {**section, **stage}
        names = {f.name for f in fields(cls)}
        unknown, missing = sorted(set(given) - names), sorted(names - set(given))
        if unknown or missing:
            raise ValueError(f"training settings: unknown {unknown or 'none'}, missing {missing or 'none'}")
        return cls(**given)


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


def optimizer_and_schedule(parameters, settings: TrainSettings, device: torch.device):
    """AdamW and its learning-rate schedule for `settings`. The fused kernel (CPU and CUDA) is what
    Hugging Face Trainer uses by default; it is faster."""
    optimizer = torch.optim.AdamW(parameters, lr=settings.lr, weight_decay=settings.weight_decay,
                                  fused=device.type in ("cpu", "cuda"))
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(settings))


def _schedule(settings: TrainSettings):
    warmup = settings.warmup

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        if settings.schedule == "linear":
            span = max(1, settings.max_steps - warmup)
            return max(0.0, 1.0 - (step - warmup) / span)
        return 1.0
    return factor
