# Config validation and the grid, shared by every stage.
import sys
from pathlib import Path

from lengthgen.config import (ConfigError, check_models, finetune_bins, model_entry, scratch_bins,
                              scratch_family_settings, scratch_lengths, validate_config)
from lengthgen.tasks import TASK_NAMES, LengthBin, get_task

# Relative model paths are looked up in the working directory, then beside this Snakefile.
MODEL_SEARCH = (".", workflow.basedir)

try:
    _validated = validate_config(config, check_availability=False, search=MODEL_SEARCH)
except ConfigError as error:
    sys.exit(f"lengthgen: {error}")
config.clear()
config.update(_validated)


onstart:
    # Before the first job (never in a dry run): every registry model the grid uses can be loaded here.
    try:
        check_models(config, search=MODEL_SEARCH)
    except ConfigError as error:
        sys.exit(f"lengthgen: {error}")

RESULTS = "results"
TABLES = f"{RESULTS}/tables"


wildcard_constraints:
    encoding="tokens|chars",
    task="|".join(TASK_NAMES),
    bin=r"\d+(-\d+)?",
    seed=r"\d+",
    pe="ape|rope|nope",


# The configured tasks as records, looked up once: rules pass these, never names to look up again.
TASKS = {name: get_task(name) for name in config["tasks"]}


def task_of(wildcards):
    return get_task(wildcards.task)


def model_inputs(name):
    """A registry model that lives in a local directory is an input of every job that reads it: the
    directory (`model`, the path the job loads) and every file in it (`model_files`), so rewriting
    any of them reruns exactly what depends on the model. A hub model is identified by id and
    revision, which its jobs carry in their params."""
    entry = model_entry(name, config["models"][name], MODEL_SEARCH)
    if not entry.is_local:
        return {}
    return {"model": entry.path, "model_files": sorted(str(p) for p in Path(entry.path).rglob("*") if p.is_file())}


def data_path(encoding, task, length_bin, seed):
    return f"{RESULTS}/data/{encoding}/{task}/{length_bin}/seed{seed}.parquet"


def data_files():
    """Every evaluation set the configured grid needs."""
    files = []
    scratch = scratch_bins(config["scratch"])
    for name, task in TASKS.items():
        for seed in config["seeds"]:
            if config["scratch"]["enabled"]:
                files += [data_path("tokens", name, b, seed) for b in scratch[task.family]]
            files += [data_path("chars", name, n, seed) for n in config["icl"]["lengths"][task.family]]
    return files
