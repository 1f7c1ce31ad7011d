# Config validation and the grid, shared by every stage.
import sys

from lengthgen.config import ConfigError, check_models, scratch_family_settings, scratch_lengths, validate_config
from lengthgen.generate import LengthSpec
from lengthgen.tasks import TASK_NAMES, get_task, sequence_length

try:
    _validated = validate_config(config, check_availability=False)
except ConfigError as error:
    sys.exit(f"lengthgen: {error}")
config.clear()
config.update(_validated)


onstart:
    # Before the first job (never in a dry run): every registry model the grid uses can be loaded here.
    try:
        check_models(config)
    except ConfigError as error:
        sys.exit(f"lengthgen: {error}")

RESULTS = "results"
TABLES = f"{RESULTS}/tables"


wildcard_constraints:
    encoding="tokens|chars",
    task="|".join(TASK_NAMES),
    lengths=r"\d+(-\d+)?",
    seed=r"\d+",
    pe="ape|rope|nope",


def data_path(encoding, task, lengths, seed):
    return f"{RESULTS}/data/{encoding}/{task}/{lengths}/seed{seed}.parquet"


def task_bins(task):
    """The from-scratch test bins of a task (they may differ per task family)."""
    return scratch_lengths(config["scratch"], get_task(task).family)[1]


def data_files():
    """Every evaluation set the configured grid needs."""
    files = []
    for task in config["tasks"]:
        for seed in config["seeds"]:
            family = get_task(task).family
            if config["scratch"]["enabled"]:
                files += [data_path("tokens", task, b, seed) for b in task_bins(task)]
            files += [data_path("chars", task, n, seed) for n in config["icl"]["lengths"][family]]
    return files
