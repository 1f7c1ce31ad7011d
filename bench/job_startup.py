"""What starting a job costs before it does any work: the CPU-seconds of each workflow script's
imports in a fresh interpreter (with transformers' modelling base where the job loads a model),
beside a bare interpreter and `import torch` in the same run, and what a config's planned jobs pay
for them in all.

Every script job (workflow/scripts/*.py) is a new Python process that imports torch, transformers
and the package again; on these 2 cores a tiny test job's own work is well under a second, so the
test suite and the default's many short jobs are mostly this. It says how much a way of starting
jobs warm (imports done once) could save, as CPU-seconds of the run it prints beside them.
Run: `.venv/bin/python bench/job_startup.py [--repeats 3] [--configfile config.yaml]` (a few minutes).
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"
BASELINES = {"bare interpreter": "pass", "import torch": "import torch"}


def cpu_seconds(code: str) -> float:
    """User+system CPU-seconds of `python -c code` in a fresh interpreter (children's rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


# What loading a model imports on top (transformers' modelling base), for a script whose imports
# brought in torch: the package defers it to the first model it loads, so the job pays it then.
MODEL_LOADING = "import sys; 'torch' in sys.modules and __import__('transformers.modeling_utils')"


def script_imports(path: Path) -> str:
    """A script's top-level import statements, and what loading its model imports, as one line of code."""
    lines = [line for line in path.read_text().splitlines() if re.match(r"(from \S+ )?import ", line)]
    return "; ".join([*lines, MODEL_LOADING])


def rule_scripts() -> dict[str, str]:
    """rule -> the script it runs (workflow/rules/*.smk `script:` directives)."""
    found = {}
    for rules in (REPO / "workflow" / "rules").glob("*.smk"):
        for match in re.finditer(r"^rule (\w+):(.*?)(?=^rule |\Z)", rules.read_text(), re.S | re.M):
            if script := re.search(r'^\s+script:\s*\n\s+"\.\./scripts/(\w+)\.py"', match.group(2), re.M):
                found[match.group(1)] = script.group(1)
    return found


def planned_rules(configfile: Path) -> Counter:
    """How many jobs of each rule a dry run of `configfile` plans from nothing."""
    with tempfile.TemporaryDirectory() as workdir:
        run = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "workflow" / "Snakefile"),
                              "--directory", workdir, "--configfile", str(configfile), "--cores", "2", "--dry-run"],
                             check=True, capture_output=True, text=True)
    return Counter(re.findall(r"^(?:local)?rule (\w+):", run.stdout, re.M))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    args = parser.parse_args()
    codes = {**BASELINES, **{path.stem: script_imports(path) for path in sorted(SCRIPTS.glob("*.py"))}}
    for code in codes.values():
        cpu_seconds(code)  # warm the page cache once: every measured start reads files that are in memory
    samples: dict[str, list[float]] = {name: [] for name in codes}
    for repeat in range(args.repeats):
        for name in (list(codes) if repeat % 2 == 0 else list(codes)[::-1]):  # the order reversed each repeat
            samples[name].append(cpu_seconds(codes[name]))
    median = {name: statistics.median(values) for name, values in samples.items()}
    jobs = planned_rules(args.configfile)
    per_script = Counter()
    for rule, script in rule_scripts().items():
        per_script[script] += jobs.get(rule, 0)
    print(f"median CPU-s of {args.repeats} fresh starts; jobs: planned by {args.configfile.name} from nothing\n")
    print("| start | CPU-s | x bare | jobs | CPU-s in all |\n|---|---|---|---|---|")
    total = 0.0
    for name, seconds in median.items():
        count = per_script.get(name, "")
        total += seconds * (count or 0)
        in_all = f"{seconds * count:.0f}" if count else ""
        print(f"| {name} | {seconds:.2f} | {seconds / median['bare interpreter']:.0f} | {count} | {in_all} |")
    print(f"\nscript jobs: {sum(per_script.values())} of {sum(jobs.values())}; their imports: {total:.0f} CPU-s")


if __name__ == "__main__":
    main()
