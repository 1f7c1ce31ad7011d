"""What parsing the workflow costs: the CPU-seconds of one `snakemake --dry-run` of the smoke
preset, against the same dry run with torch, transformers and scipy.stats imported first (what
every parse paid while the rule files' modules imported them at the top).

Snakemake parses the workflow on every call: each dry run, each real run, each cluster job; the test
suite makes about a hundred such calls. Runs alternate, the order reversed in each repeat; prints
the median user+system CPU-seconds of each and their ratio.
Run: `.venv/bin/python bench/parse_cost.py [--repeats 3]` (about a minute).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
HEAVY = "import torch, transformers, scipy.stats"


def dry_run_cpu_seconds(workdir: Path, preload: bool) -> float:
    """User+system CPU-seconds of one dry run in a fresh interpreter (children's rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = (f"{HEAVY}; " if preload else "") + "import sys; from snakemake.cli import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", code, "--snakefile", str(REPO / "workflow" / "Snakefile"),
                    "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"), "--cores", "1",
                    "--dry-run", "--quiet"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        (workdir / "config.yaml").write_text((REPO / "configs" / "smoke.yaml").read_text())
        yaml.safe_load((workdir / "config.yaml").read_text())  # a readable preset, before any timing
        times = {True: [], False: []}
        for repeat in range(args.repeats):
            for preload in (False, True) if repeat % 2 == 0 else (True, False):
                times[preload].append(dry_run_cpu_seconds(workdir, preload))
    now, before = statistics.median(times[False]), statistics.median(times[True])
    print(f"dry run, smoke preset: {now:.2f} CPU-s now, {before:.2f} with the heavy imports; "
          f"{before / now:.2f}x ({args.repeats} repeats each, medians)")


if __name__ == "__main__":
    main()
