"""`python -m lengthgen verify`: which files of a finished project can be trusted.

Every result table matches the sha256 written beside it (`FILE.sha256`) and opens, every model
matches the manifest written with it, each lies where it was written (a file of another task
copied in with its sidecar or manifest is named; a data file's rows name its task, bin and
seed), every prediction cache shard matches its checksum, every training checkpoint its sha256,
and no intermediate is missing while a file made from it exists (from Snakemake's own records
in `.snakemake/metadata`). What is damaged is listed with the Snakemake command that makes it,
and what was made from it, again.
"""

from __future__ import annotations

import json
from base64 import urlsafe_b64decode
from dataclasses import dataclass
from pathlib import Path

from .inference.cache import read_shard
from .models.storage import MANIFEST, unreadable_file, verify_model_directory
from .records.files import SIDECAR, DamagedFile, check_readable, rebuild_target
from .tasks.datafile import identity_of_path, read_examples

PREDICTION_RULES = ("icl_predict", "realistic_predict")  # the rules that read the prediction cache
SKIPPED = ("checkpoints", "logs", "benchmarks")  # resumable state and run records, not results
CHECKPOINTS = "checkpoints"  # checked apart: a damaged one is set aside by the next job that would resume it


@dataclass(frozen=True)
class Finding:
    kind: str  # damaged | missing | cache | checkpoint | unverified (a note: nothing to rebuild)
    path: str
    problem: str
    target: str | None = None  # the Snakemake target (or rule) that makes it again

    def line(self) -> str:
        return f"{self.kind:<10} {self.path}: {self.problem}"


def model_directories(results: Path) -> list[Path]:
    return sorted(p.parent for p in results.rglob("config.json") if not _skipped(p, results))


def _skipped(path: Path, results: Path) -> bool:
    parts = path.relative_to(results).parts
    return bool(parts) and parts[0] in SKIPPED or any(part.startswith(".") for part in parts)


def check_models(results: Path) -> list[Finding]:
    findings = []
    for folder in model_directories(results):
        try:
            if verify_model_directory(folder):
                continue
        except DamagedFile as damaged:
            findings.append(Finding("damaged", str(damaged.path), damaged.problem, rebuild_target(folder)))
            continue
        damaged = unreadable_file(folder)
        if damaged is not None:
            findings.append(Finding("damaged", str(damaged.path), damaged.problem, rebuild_target(folder)))
        else:
            findings.append(Finding("unverified", str(folder), f"no {MANIFEST} (written before models carried one): "
                                                              "its files open, their content cannot be checked"))
    return findings


def check_tables(results: Path, cache: Path | None) -> list[Finding]:
    """Every parquet file outside model directories and the prediction cache, and every other file
    with a sha256 sidecar: checked against it, then read whole."""
    models = set(model_directories(results))
    findings, unverified = [], 0
    written = {p.with_name(p.name.removesuffix(SIDECAR)) for p in results.rglob(f"*{SIDECAR}")}
    for path in sorted(set(results.rglob("*.parquet")) | {p for p in written if p.exists()}):
        if _skipped(path, results) or path.parent in models or (cache is not None and cache in path.parents):
            continue
        try:
            check_readable(path)
            if identity_of_path(path) is not None:
                read_examples(path, columns=[])  # its rows' task, bin, seed: what every reader of it checks
        except DamagedFile as damaged:
            findings.append(Finding("damaged", str(path), damaged.problem, rebuild_target(path)))
            continue
        unverified += path not in written
    if unverified:
        findings.append(Finding("unverified", str(results), f"{unverified} parquet file(s) without a {SIDECAR} "
                                                            "(written before tables carried one): they open, their "
                                                            "content cannot be checked"))
    return findings


def check_checkpoints(results: Path) -> list[Finding]:
    """Every training checkpoint against its sha256 (or, without one, its archive's CRCs)."""
    folder = results / CHECKPOINTS
    if not folder.is_dir():
        return []
    from .engine.run import check_checkpoint  # torch: only for a project with checkpoints

    findings = []
    for path in sorted(folder.rglob("*.pt")):
        try:
            check_checkpoint(path)
        except DamagedFile as damaged:
            findings.append(Finding("checkpoint", str(path), f"{damaged.problem} (the next job that trains this model "
                                                             "sets it aside and starts again from step 0)"))
    return findings


def check_cache(cache: Path | None) -> list[Finding]:
    findings = []
    for shard in sorted(cache.glob("*/*.parquet")) if cache is not None and cache.is_dir() else []:
        try:
            read_shard(shard)
        except (ValueError, FileNotFoundError) as reason:
            findings.append(Finding("cache", str(shard), f"{reason} (the next prediction job sets it aside and "
                                                         "decodes its entries again)", " ".join(PREDICTION_RULES)))
    return findings


def snakemake_records(root: Path) -> dict[str, dict]:
    """Output path -> Snakemake's record of the job that made it (its rule and inputs)."""
    folder = root / ".snakemake" / "metadata"
    records = {}
    for file in folder.rglob("*") if folder.is_dir() else []:
        if not file.is_file():
            continue
        name = "".join(part.removeprefix("@") for part in file.relative_to(folder).parts)
        try:
            records[urlsafe_b64decode(name).decode()] = json.loads(file.read_text())
        except ValueError:
            continue  # not a record of Snakemake's
    return records


def check_intermediates(root: Path) -> list[Finding]:
    """Inputs that no longer exist although a file made from them does."""
    readers: dict[str, list[str]] = {}
    for output, record in snakemake_records(root).items():
        if (root / output).exists():
            for source in record.get("input") or []:
                if not (root / source).exists():
                    readers.setdefault(source, []).append(output)
    return [Finding("missing", source, f"read by {outputs[0]}" + (f" and {len(outputs) - 1} more" if len(outputs) > 1
                                                                   else ""), rebuild_target(root / source))
            for source, outputs in sorted(readers.items())]


def verify_project(root=".", results: str = "results", cache: str | None = "results/cache/predictions") -> list[Finding]:
    root = Path(root)
    cache_dir = root / cache if cache else None
    found = check_models(root / results) + check_tables(root / results, cache_dir) + check_cache(cache_dir)
    return found + check_checkpoints(root / results) + check_intermediates(root)


def rebuild_command(findings: list[Finding], configfile: str | None = None) -> str | None:
    """One Snakemake command that remakes every damaged or missing file and everything made from it."""
    targets = list(dict.fromkeys(t for f in findings if f.kind != "unverified" and f.target for t in f.target.split()))
    if not targets:
        return None
    config = f" --configfile {configfile}" if configfile else ""
    return f"snakemake{config} --forcerun {' '.join(targets)}"


def report(findings: list[Finding], configfile: str | None = None) -> tuple[str, int]:
    """The text `lengthgen verify` prints, and its exit status (1 when something must be rebuilt)."""
    problems = [f for f in findings if f.kind != "unverified"]
    lines = [f.line() for f in findings]
    untraced = [f for f in problems if f.target is None and f.kind != "checkpoint"]
    command = rebuild_command(problems, configfile)
    if not problems:
        return "\n".join(lines + ["lengthgen verify: every result, model, cache shard and checkpoint checks out"]), 0
    lines.append(f"lengthgen verify: {len(problems)} file(s) damaged or missing")
    if untraced:
        lines.append("not made by this workflow (replace with a good copy): " + " ".join(f.path for f in untraced))
    if command:
        lines.append(f"rebuild: {command}")
    return "\n".join(lines), 1
