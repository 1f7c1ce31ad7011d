"""What a job that loads a registry model asks a cluster for."""

from __future__ import annotations

# Memory (MB) and time (minutes) of at least these, more where the model's entry names more (a 70B
# model needs more of both). The workflow profile sets these rules' cores; their other resources are
# set here, not there.
MODEL_JOBS = {
    "gguf_convert": {"mem_mb": 8000, "runtime": 60},
    "icl_predict": {"mem_mb": 64000, "runtime": 480},
    "realistic_predict": {"mem_mb": 32000, "runtime": 480},
    "mechanism": {"mem_mb": 32000, "runtime": 480},
    "finetune_train": {"mem_mb": 32000, "runtime": 720},
    "finetune_eval": {"mem_mb": 16000, "runtime": 60},
}
RESOURCES = ("gpu", "mem_mb", "runtime")


def model_job(config: dict, requests: dict, rule: str, name: str | None, resource: str) -> int:
    """One resource of a job of `rule` that loads the registry model `name` (None: a model a stage
    trained, small, on one GPU); `requests` holds each entry's own mem_mb and runtime. gguf_convert
    dequantises on the CPU."""
    if resource == "gpu":
        return 0 if rule == "gguf_convert" else config["models"][name]["gpus"] if name else 1
    return max(MODEL_JOBS[rule][resource], (requests[name][resource] if name else None) or 0)
