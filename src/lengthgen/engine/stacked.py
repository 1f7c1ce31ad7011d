"""Several runs of one architecture advanced in one step: their weights stacked, one vmapped
forward and backward pass, one optimiser step for all.

Why: a small model's step on a GPU is bound by kernel launches and Python, not arithmetic, so K
stacked runs cost little more than one (the paper's Appendix B grid is 60 such runs). The models
stay stock Hugging Face modules: `torch.func.functional_call` runs them with the stacked weights.
Each run's own model, optimiser and scheduler are written back whenever it evaluates, saves a
checkpoint or ends, so early stopping, checkpoints, resuming and the saved models are exactly
those of `TrainingRun`; a run that stops leaves the stack and the others go on.

Not bit-equal to training the runs one by one: batched matrix products round differently, and
the rows of all runs are padded to one width (the same loss and gradient up to rounding; tested).
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict

import torch
from torch.func import functional_call, grad_and_value, stack_module_state, vmap

from .run import TrainingRun
from .sequences import IGNORE
from .settings import optimizer_and_schedule, precision_autocast


def _pad(tensor: torch.Tensor, name: str, width: int) -> torch.Tensor:
    """Right-pad to `width` columns: never-scored labels; any token and position after a row's end
    (a causal model's earlier positions do not see them)."""
    fill = IGNORE if name == "labels" else 0
    return torch.nn.functional.pad(tensor, (0, width - tensor.shape[1]), value=fill)


def _due_after_step(run: TrainingRun) -> bool:
    """Whether the run's coming step ends with an evaluation, a checkpoint or its end: the moments
    its own model, optimiser and schedule must hold the stack's values."""
    s, coming = run.settings, run.step_count + 1
    return coming >= s.max_steps or coming % s.eval_every == 0 or coming % s.checkpoint_every == 0


def stack_key(run: TrainingRun) -> str:
    """Runs with equal keys can share a stack: same architecture, settings, step and device."""
    config = {k: v for k, v in run.model.config.to_dict().items() if k not in ("_name_or_path", "transformers_version")}
    return repr((sorted(config.items()), asdict(run.settings), run.step_count, str(run.device)))


class StackedRuns:
    """K compatible `TrainingRun`s (see `stack_key`) trained together; `step()` advances all."""

    def __init__(self, runs: list[TrainingRun]):
        if len({stack_key(r) for r in runs}) != 1:
            raise ValueError("stacked runs need the same architecture, settings, step and device")
        if any(r.accelerator is not None for r in runs) or runs[0].settings.length_buckets > 1:
            raise ValueError("stacked runs pad every row to one width: no accelerator, no length buckets")
        self.runs = [r for r in runs if not r.done]
        if self.runs:
            self._stack()

    # -- moving state between the runs and the stack ---------------------------------------
    def _stack(self) -> None:
        runs, settings = self.runs, self.runs[0].settings
        self.params, self.buffers = stack_module_state([r.model for r in runs])
        canonical = {id(p): n for n, p in runs[0].model.named_parameters()}
        # Tied weights (an LM head sharing the embedding) appear once in `params`; the model's
        # forward needs them under every name.
        self.aliases = {n: canonical[id(p)] for n, p in runs[0].model.named_parameters(remove_duplicate=False)
                        if n not in self.params}
        self.base = copy.deepcopy(runs[0].model).to("meta")
        # Its only use is a padding warning that reads a token value (`.item()`), which vmap forbids.
        self.base.config.pad_token_id = None
        self.optimizer, self.scheduler = optimizer_and_schedule(runs[0].model, settings, runs[0].device,
                                                                parameters=self.params)
        per_run = [dict(r.model.named_parameters()) for r in runs]
        for name, stacked in self.params.items():
            states = [r.optimizer.state.get(named[name]) for r, named in zip(runs, per_run)]
            if states[0]:
                self.optimizer.state[stacked] = {
                    "step": states[0]["step"].clone(),
                    "exp_avg": torch.stack([s["exp_avg"] for s in states]),
                    "exp_avg_sq": torch.stack([s["exp_avg_sq"] for s in states])}
        self.scheduler.load_state_dict(runs[0].scheduler.state_dict())
        for group in self.optimizer.param_groups:
            group["lr"] = runs[0].optimizer.param_groups[0]["lr"]

    @torch.no_grad()
    def _unstack(self) -> None:
        """Write weights, optimiser state and schedule back into every run."""
        lr, scheduler_state = self.optimizer.param_groups[0]["lr"], self.scheduler.state_dict()
        for i, run in enumerate(self.runs):
            named = dict(run.model.named_parameters())
            for name, stacked in self.params.items():
                named[name].copy_(stacked[i])
                state = self.optimizer.state.get(stacked)
                if state:
                    run.optimizer.state[named[name]] = {"step": state["step"].clone(),
                                                        "exp_avg": state["exp_avg"][i].clone(),
                                                        "exp_avg_sq": state["exp_avg_sq"][i].clone()}
            for name, buffer in run.model.named_buffers():
                if name in self.buffers:
                    buffer.copy_(self.buffers[name][i])
            for group in run.optimizer.param_groups:
                group["lr"] = lr
            run.scheduler.load_state_dict(scheduler_state)

    # -- training --------------------------------------------------------------------------
    def _loss(self, params, buffers, batch):
        params = {**params, **{alias: params[name] for alias, name in self.aliases.items()}}
        return functional_call(self.base, (params, buffers), args=(), kwargs=batch, tie_weights=False).loss

    def step(self) -> bool:
        """One optimiser step of every run in the stack. Returns False once all are finished."""
        if not self.runs:
            return False
        runs, settings, device = self.runs, self.runs[0].settings, self.runs[0].device
        started = time.process_time()
        batches = [r.batch_for(r.step_count) for r in runs]
        made = time.process_time()
        width = max(b["input_ids"].shape[1] for b in batches)
        for run, own in zip(runs, batches):  # every row is computed at the stack's width
            run.count_tokens(own, own["input_ids"].shape[0] * width)
        batch = {k: torch.stack([_pad(b[k], k, width) for b in batches]).to(device, non_blocking=True)
                 for k in batches[0]}
        self.base.train()
        with precision_autocast(device, settings.precision):
            grads, losses = vmap(grad_and_value(self._loss), randomness="different")(self.params, self.buffers, batch)
        if settings.max_grad_norm is not None:  # each run's own global norm, as it would clip alone
            norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
            scale = (settings.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            grads = {name: g * scale.view(-1, *([1] * (g.dim() - 1))) for name, g in grads.items()}
        for name, param in self.params.items():
            param.grad = grads[name]
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        stepped = time.process_time()
        for run in runs:  # the stack's work, shared alike
            run.cpu_seconds["data"] += (made - started) / len(runs)
            run.cpu_seconds["steps"] += (stepped - made) / len(runs)
        if any(_due_after_step(r) for r in runs):
            self._unstack()
        for run, loss in zip(runs, losses.detach()):
            run.record_step(loss)
        finished = [r for r in runs if r.done]
        if finished:
            self.runs = [r for r in runs if not r.done]
            if self.runs:
                self._stack()
        return bool(self.runs)
