"""The mechanism stage (paper 4.4): head scores and patching per subject, a registry model or one this run trained."""

from __future__ import annotations

from ..config.sections import main_protocol
from ..layout import FINETUNE, MECHANISM, SCRATCH
from ..settings import MechanismSettings
from . import finetune, scratch
from .grid import known, tasks


def subjects(config: dict) -> dict[str, tuple]:
    """Every model the mechanism stage analyses, by name: ("registry", model), ("scratch", task, pe,
    seed) or ("finetune", model, task, seed); trained ones only where their stage runs."""
    section, grid = config["mechanism"], tasks(config)
    found = {f"model-{m}": ("registry", m) for m in section["models"]}
    trained = [t for t in section["trained"]["scratch"] if t in grid] if scratch.enabled(config) else []
    for task in trained:
        for pe in config["scratch"]["positional_encodings"]:
            for seed in config["seeds"]:
                found[f"scratch-{task}-{pe}-seed{seed}"] = ("scratch", task, pe, seed)
    trained = [t for t in section["trained"]["finetune"] if t in grid] if finetune.enabled(config) else []
    for model in config["finetune"]["models"] if trained else []:
        for task in trained:
            for seed in config["seeds"]:
                found[f"finetune-{model}-{task}-seed{seed}"] = ("finetune", model, task, seed)
    return found


def subject(config: dict, name: str) -> tuple:
    """One subject of the mechanism stage; a target naming another stops with the valid names."""
    return known("mechanism subject", name, subjects(config))


def enabled(config: dict) -> bool:
    return bool(subjects(config))


def trained_model(config: dict, name: str) -> str | None:
    """The directory of a model this run trained (None: a registry model, whose inputs are its files)."""
    kind, *rest = subject(config, name)
    if kind == "scratch":
        task, pe, seed = rest
        return f"{SCRATCH.format(task=task, pe=pe, seed=seed)}/model"
    if kind == "finetune":
        model, task, seed = rest
        protocol = main_protocol(config["finetune"])
        return f"{FINETUNE.format(model=model, protocol=protocol, task=task, seed=seed)}/model"
    return None


def registry_model(config: dict, name: str) -> str | None:
    """The registry model a mechanism job analyses (None: a model a stage trained)."""
    kind, *rest = subject(config, name)
    return rest[0] if kind == "registry" else None


def params(config: dict, name: str) -> MechanismSettings:
    """The analysis settings and how to spell prompts for this model: the authors' few-shot letters
    for a pretrained model, one segment in its own training spelling for a trained one."""
    kind, *rest = subject(config, name)
    spelling = {"kind": kind}
    if kind == "registry":
        spelling["model"] = config["models"][rest[0]]
    elif kind == "scratch":
        spelling["alphabet"] = config["data"]["tokens"]["unique_copy"]["alphabet_size"]
    else:
        spelling.update(alphabet=config["data"]["finetune"]["unique_copy"]["alphabet_size"],
                        format=config["finetune"]["format"])
    return analysis_params(config, name, spelling)


def analysis_params(config: dict, name: str, spelling: dict) -> MechanismSettings:
    """One subject's job parameters: the stage's analysis settings, the seeds, its spelling."""
    settings = {k: v for k, v in config["mechanism"].items() if k not in ("models", "trained")}
    return MechanismSettings.from_config({"subject": name, "spelling": spelling, "seeds": config["seeds"], **settings})


def outputs(config: dict, kind: str) -> list[str]:
    """Every subject's heads or patching file."""
    return [f"{MECHANISM.format(subject=name)}/{kind}.parquet" for name in subjects(config)]


def tables_params(config: dict) -> dict:
    """What the mechanism tables read of the config (one slice for every table rule of the stage)."""
    return {"mechanism": config["mechanism"], "seeds": config["seeds"]}
