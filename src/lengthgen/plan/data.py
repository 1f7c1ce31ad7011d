"""The task data stage: one file per (encoding, task, bin, seed), and which files the grid needs."""

from __future__ import annotations

from ..config import finetune_bins, scratch_bins
from ..config.sections import finetune_protocols, protocol_section, protocol_seeds
from ..layout import data_path
from ..settings import DataFileSettings
from ..tasks import get_task
from . import corpora
from .grid import tasks


def data_params(config: dict, encoding: str, task: str, length_bin: str, seed) -> DataFileSettings:
    """Everything one data file depends on and nothing else, so other settings never rerun it. The
    wildcards are repeated here because the between-workflow cache hashes params, not paths."""
    generator = get_task(task).generator
    section = config["data"][encoding]
    return DataFileSettings.from_config({"task": task, "encoding": encoding, "bin": length_bin, "seed": int(seed),
                                         "examples": section["examples"], "generator": generator,
                                         "settings": section[generator]})


def data_files(config: dict) -> list[str]:
    """Every evaluation set the configured grid needs."""
    files = []
    scratch = scratch_bins(config["scratch"])
    for name, task in tasks(config).items():
        for seed in config["seeds"]:
            if config["scratch"]["enabled"]:
                files += [data_path("tokens", name, b, seed) for b in scratch[task.family]]
            if config["icl"]["models"]:
                files += [data_path("chars", name, n, seed) for n in config["icl"]["lengths"][task.family]]
            if config["finetune"]["models"]:
                files += [data_path("finetune", name, b, seed) for protocol in finetune_protocols(config["finetune"])
                          if seed in protocol_seeds(config, protocol)
                          for b in finetune_bins(protocol_section(config["finetune"], protocol))[task.family]]
    return list(dict.fromkeys(files + corpora.data_files(config)))


def tables_params(config: dict) -> dict:
    """What the data summary and the theory check read of the config."""
    return {"tasks": config["tasks"], "seeds": config["seeds"], "data": config["data"]}
