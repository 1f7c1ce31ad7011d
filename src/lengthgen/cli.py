"""Command line: `python -m lengthgen provenance FILE`, `runtimes`, `eta`, `verify`, `findings`, `robustness`,
`interaction`, `config-reference`."""

from __future__ import annotations

import argparse
import json
import sys

from .records.tables import read_provenance


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lengthgen", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("provenance", help="print the provenance record of a parquet file")
    show.add_argument("file")
    times = commands.add_parser("runtimes", help="per rule, the run time of a workflow's jobs (from its benchmarks)")
    times.add_argument("folder", nargs="?", default="results/benchmarks")
    times.add_argument("--workdir", default=".", help="the workflow directory, whose .snakemake/log gives the wall time")
    times.add_argument("--jobs", action="store_true", help="also list every training job's work (FLOPs, padding)")
    eta = commands.add_parser("eta", help="how far the latest run is and roughly how long it has left (from its "
                                          "Snakemake log, this project's benchmarks and a shipped estimate)")
    eta.add_argument("--workdir", default=".", help="the workflow directory")
    eta.add_argument("--estimate", help="CPU-seconds per job by rule (default: the repository's "
                                        "resources/runtimes/default.parquet)")
    eta.add_argument("--ship", metavar="OUT", help="write this project's benchmarks as such an estimate instead")
    check = commands.add_parser("verify", help="check that every result, model, cache shard and checkpoint of a "
                                               "project can be trusted; print the Snakemake command that rebuilds "
                                               "what cannot")
    check.add_argument("project", nargs="?", default=".", help="the workflow directory (holding results/)")
    check.add_argument("--cache", default="results/cache/predictions",
                       help="the prediction cache (icl.cache), relative to the project")
    check.add_argument("--configfile", help="the config the project ran with, repeated in the rebuild command")
    found = commands.add_parser("findings", help="print which of the paper's findings a finished run shows")
    found.add_argument("file", nargs="?", default="results/tables/findings.parquet")
    combine = commands.add_parser("robustness", help="combine the finding-3 robustness tables of a study run in parts "
                                                     "(each its own protocols) into one, judged across all of them")
    combine.add_argument("out", help="the combined table's path without suffix (writes .parquet and .md)")
    combine.add_argument("parts", nargs="+", help="each part's finetune_robustness.parquet")
    interact = commands.add_parser("interaction", help="protocol x direction: each seed's mirror gap under the "
                                                      "baseline protocol against the same seed's under each other")
    interact.add_argument("pairs", help="a finished run's finetune_pairs.parquet")
    interact.add_argument("out", help="the table's path without suffix (writes .parquet and .md)")
    interact.add_argument("--baseline", default="default", help="the protocol the others are compared with")
    commands.add_parser("config-reference", help="print the config reference (docs/config.md), made from the schema")
    args = parser.parse_args(argv)
    if args.command == "config-reference":
        from .config.reference import config_reference

        print(config_reference(), end="")
        return 0
    if args.command == "findings":
        return print_findings(args.file)
    if args.command == "robustness":
        from .finetune.robustness import write_combined_robustness

        try:
            write_combined_robustness(args.parts, args.out)
        except (OSError, ValueError) as error:
            print(f"lengthgen: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "interaction":
        from .finetune.interaction import write_interaction

        try:
            write_interaction(args.pairs, args.out, args.baseline)
        except (OSError, ValueError) as error:
            print(f"lengthgen: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "eta":
        from .results import progress

        try:
            if args.ship:
                from .records.provenance import collect

                frame = progress.write_estimate(args.workdir, args.ship, collect({"estimate_from": args.workdir}))
                print(f"{args.ship}: {frame.height} rules, {frame['jobs'].sum()} jobs")
            else:
                print(progress.run_progress(args.workdir, args.estimate or progress.SHIPPED_ESTIMATE))
        except (OSError, ValueError) as error:
            print(f"lengthgen: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "verify":
        from pathlib import Path

        from .verify import report, verify_project

        if not (Path(args.project) / "results").is_dir():
            print(f"lengthgen: {args.project} holds no results/ (run verify in the workflow directory)", file=sys.stderr)
            return 2
        text, status = report(verify_project(args.project, cache=args.cache), args.configfile)
        print(text)
        return status
    if args.command == "runtimes":
        from .records.tables import to_markdown
        from .results import runtimes as times

        try:
            peak = times.matmul_peak()
            table = times.runtimes(args.folder, peak)
            print(to_markdown(table, float_digits=1), end="")
            print(times.totals_line(table, args.workdir, peak))
            split = times.rule_cpu_split(args.folder, peak)
            if split.height:
                print("\nwhere the training jobs' CPU went (% of their CPU-seconds; steps_peak_pct: the "
                      "optimiser steps' FLOPs per CPU-second against the peak)")
                print(to_markdown(split, float_digits=1), end="")
            if args.jobs:
                print("\n" + to_markdown(times.training_jobs(args.folder, peak), float_digits=1), end="")
        except (OSError, ValueError) as error:
            print(f"lengthgen: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "provenance":
        try:
            record = read_provenance(args.file)
        except (OSError, ValueError) as error:
            print(f"lengthgen: {error}", file=sys.stderr)
            return 2
        print(json.dumps(record, indent=2, sort_keys=True))
    return 0


def print_findings(path: str) -> int:
    """The findings table of a finished run, as its markdown file shows it (verdicts first)."""
    from pathlib import Path

    import polars as pl

    from .records.files import DamagedFile, read_frame
    from .results.findings_markdown import findings_markdown

    if not Path(path).is_file():
        print(f"lengthgen: {path} not found: run `snakemake results/tables/findings.md` first", file=sys.stderr)
        return 2
    try:
        frame, provenance = read_frame(path), read_provenance(path)
        print(findings_markdown(frame, provenance), end="")
    except DamagedFile as error:  # names the file and the remedy
        print(f"lengthgen: {error}", file=sys.stderr)
        return 2
    except (OSError, ValueError, pl.exceptions.PolarsError) as error:
        print(f"lengthgen: {path}: {error}", file=sys.stderr)
        return 2
    return 0
