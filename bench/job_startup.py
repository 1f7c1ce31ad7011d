"""What starting a job costs before it does any work: the CPU-seconds of each workflow script's
imports in a fresh interpreter (with transformers' modelling base where the job loads a model) and
in a fork of the warm server (lengthgen.jobserver, as the workflow runs them), beside a bare
interpreter and `import torch` in the same run, and what a config's planned jobs pay in all.

A fresh interpreter imports torch, transformers and the package again; on these 2 cores a tiny
test job's own work is well under a second, so that was most of the test suite and of the
default's many short jobs. The cached rules (data, pretrain) are still scripts in a fresh
interpreter (Snakemake's output cache needs it).
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


def forked_cpu_seconds(code: str, folder: Path) -> float:
    """CPU-seconds of `code` as a workflow script forked from the warm server (its own benchmark)."""
    from types import SimpleNamespace

    from lengthgen.jobserver import ScriptJob, run_script

    script, benchmark = folder / "imports.py", folder / "benchmark.tsv"
    script.write_text(code.replace("; ", "\n"))
    job = ScriptJob(rule="imports", input=[], output=[], params=SimpleNamespace(), wildcards=SimpleNamespace(),
                    log=[], threads=1, scriptdir=str(SCRIPTS))
    run_script(script, job, str(benchmark))
    return float(benchmark.read_text().splitlines()[1].split("\t")[-1])


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


def rule_scripts() -> dict[str, tuple[str, bool]]:
    """rule -> (the script it runs, whether it is forked from the warm server): workflow/rules/*.smk
    `script:` directives and `script_job(...)` calls."""
    found = {}
    for rules in (REPO / "workflow" / "rules").glob("*.smk"):
        for match in re.finditer(r"^rule (\w+):(.*?)(?=^rule |\Z)", rules.read_text(), re.S | re.M):
            if script := re.search(r'^\s+script:\s*\n\s+"\.\./scripts/(\w+)\.py"', match.group(2), re.M):
                found[match.group(1)] = (script.group(1), False)
            elif script := re.search(r'script_job\("(\w+)\.py"', match.group(2)):
                found[match.group(1)] = (script.group(1), True)
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
    forked: dict[str, list[float]] = {name: [] for name in codes}
    with tempfile.TemporaryDirectory() as folder:
        forked_cpu_seconds("pass", Path(folder))  # starts the server (its imports are paid once a run)
        for repeat in range(args.repeats):
            for name in (list(codes) if repeat % 2 == 0 else list(codes)[::-1]):  # the order reversed each repeat
                samples[name].append(cpu_seconds(codes[name]))
                forked[name].append(forked_cpu_seconds(codes[name], Path(folder)))
    median = {name: statistics.median(values) for name, values in samples.items()}
    median_forked = {name: statistics.median(values) for name, values in forked.items()}
    jobs = planned_rules(args.configfile)
    per_script, warm = Counter(), {}
    for rule, (script, is_forked) in rule_scripts().items():
        per_script[script] += jobs.get(rule, 0)
        warm[script] = is_forked
    print(f"median CPU-s of {args.repeats} starts; jobs: planned by {args.configfile.name} from nothing\n")
    print("| start | fresh CPU-s | x bare | forked CPU-s | jobs | in all, fresh | in all, as run |\n"
          "|---|---|---|---|---|---|---|")
    total_fresh = total_run = 0.0
    for name, seconds in median.items():
        count, as_run = per_script.get(name, 0), median_forked[name] if warm.get(name) else seconds
        total_fresh, total_run = total_fresh + seconds * count, total_run + as_run * count
        in_all = (f"{seconds * count:.0f} | {as_run * count:.0f}" if count else " | ")
        print(f"| {name} | {seconds:.2f} | {seconds / median['bare interpreter']:.0f} | {median_forked[name]:.2f} "
              f"| {count or ''} | {in_all} |")
    print(f"\nscript jobs: {sum(per_script.values())} of {sum(jobs.values())}; their imports: {total_fresh:.0f} "
          f"CPU-s in fresh interpreters, {total_run:.0f} as the workflow runs them")


if __name__ == "__main__":
    main()
