import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture
def repo() -> Path:
    return REPO



# What starts another process: the workflow runner (tests/snakemake_runner.py), the SLURM test cluster,
# any subprocess. `make check` leaves these tests out (marker `workflow`); `make test` runs them all.
PROCESS_STARTERS = frozenset({"snakemake", "planned_jobs", "planned_resources", "subprocess", "SlurmCluster"})


def _starts_processes(function, seen: set) -> bool:
    """Whether a test function, or a function of its module it calls (to any depth), names a process starter."""
    code = getattr(function, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names = set(code.co_names) | {name for const in code.co_consts if hasattr(const, "co_names")
                                  for name in const.co_names}
    if names & PROCESS_STARTERS:
        return True
    module_globals = getattr(function, "__globals__", {})
    return any(_starts_processes(module_globals[name], seen) for name in names
               if callable(module_globals.get(name)) and getattr(module_globals[name], "__module__", "")
               == function.__module__)


def pytest_collection_modifyitems(config, items):
    for item in items:
        seen: set = set()
        functions = [getattr(item, "function", None)]
        for name in getattr(item, "fixturenames", ()):
            for definition in item._fixtureinfo.name2fixturedefs.get(name, ()):
                functions.append(definition.func)
        if item.get_closest_marker("slow") or any(_starts_processes(f, seen) for f in functions if f):
            item.add_marker(pytest.mark.workflow)
