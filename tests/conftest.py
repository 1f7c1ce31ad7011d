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
PROCESS_STARTERS = frozenset({"snakemake", "planned_jobs", "planned_resources", "subprocess", "SlurmCluster",
                              "run_script"})


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


# The longest test files, longest first (their workflow runs; measured on a fresh clone, 2 quiet cores):
# they start first, so the workers end together instead of one running the last long file alone.
# `make test` keeps this order (xdist's own puts the files with the most tests first).
LONGEST_FIRST = ("test_icl_workflow.py", "test_workflow.py", "test_slurm.py", "test_corpora_workflow.py",
                 "test_stacked.py", "test_gguf.py", "test_toy_task.py", "test_faults_input.py", "test_training.py",
                 "test_packaging.py", "test_realistic.py")


def _file_rank(item) -> int:
    name = item.path.name
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_file_rank)  # stable: a file's own tests keep their order
    for item in items:
        seen: set = set()
        functions = [getattr(item, "function", None)]
        for name in getattr(item, "fixturenames", ()):
            for definition in item._fixtureinfo.name2fixturedefs.get(name, ()):
                functions.append(definition.func)
        if item.get_closest_marker("slow") or any(_starts_processes(f, seen) for f in functions if f):
            item.add_marker(pytest.mark.workflow)
