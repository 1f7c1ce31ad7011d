"""`lengthgen eta` (lengthgen.results.progress): the jobs left of a run weighed by what a job of each rule
costs, read from a Snakemake log as Snakemake writes it."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from lengthgen.cli import main
from lengthgen.results import progress as p

LOG = """Building DAG of jobs...
Using shell: /usr/bin/bash
Provided cores: 2
Job stats:
job               count
--------------  -------
finetune_train        4
data                  6
findings              1
all                   1
total                12

Select jobs to execute...
[Mon Dec  7 10:00:00 2026]
rule data:
    jobid: 5
    wildcards: task=UF
[Mon Dec  7 10:00:10 2026]
Finished jobid: 5 (Rule: data)
[Mon Dec  7 10:00:10 2026]
rule finetune_train:
    jobid: 1
    benchmark: results/benchmarks/finetune_train/UF/seed0.tsv
[Mon Dec  7 10:10:00 2026]
Finished jobid: 1 (Rule: finetune_train)
"""


def benchmark(folder, rule: str, name: str, cpu: float) -> None:
    path = folder / "results" / "benchmarks" / rule / f"{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                    f"{cpu}\t0:00:01\t100\t100\t100\t100\t0\t0\t90\t{cpu}\n")


def test_the_log_gives_the_plan_the_finished_jobs_and_the_cores():
    log = p.read_run_log(LOG)
    assert log.planned == {"finetune_train": 4, "data": 6, "findings": 1, "all": 1}
    assert log.finished == {5: "data", 1: "finetune_train"} and log.cores == 2
    assert log.started == dt.datetime(2026, 12, 7, 10, 0, 0) and log.last == dt.datetime(2026, 12, 7, 10, 10, 0)


def test_jobs_left_are_weighed_by_their_rules_cost_measured_first_then_shipped_then_start_up():
    log = p.read_run_log(LOG)
    now = dt.datetime(2026, 12, 7, 10, 2, 0)  # 2 minutes in: packing not measured yet
    state = p.progress(log, {"finetune_train": 600.0}, {"finetune_train": 60.0, "data": 4.0}, now)
    # 3 fine-tunings at 600 (measured), 5 data jobs at 4 (shipped), findings at start-up; `all` is free
    assert state.cpu_left_seconds == pytest.approx(3 * 600 + 5 * 4 + p.START_UP_CPU_SECONDS)
    assert state.left_seconds == pytest.approx(state.cpu_left_seconds / (2 * p.FULL_PACKING))
    assert state.sources == {"this project's benchmarks": 3, "the shipped estimate": 5, "start-up only": 1}
    assert (state.done, state.total) == (2, 12)
    line = p.progress_line(state)
    assert line.startswith("2 of 12 jobs done (17%), 2 min in; about 17 min left")


def test_a_runs_packing_is_what_its_finished_jobs_cost_over_the_core_seconds_it_has_had():
    log = p.read_run_log(LOG)
    now = dt.datetime(2026, 12, 7, 10, 10, 0)  # 600 s on 2 cores: 1,200 core-seconds
    state = p.progress(log, {"finetune_train": 600.0, "data": 6.0}, {}, now)
    assert state.packing == pytest.approx((600 + 6) / 1200)
    finished = p.progress(p.RunLog({"data": 1, "all": 1}, {5: "data", 6: "all"}, 2, log.started, log.last), {}, {},
                          now + dt.timedelta(hours=1))
    assert p.progress_line(finished) == "2 of 2 jobs done (100%) in 10 min: finished"  # its own span, not until now


def test_eta_reads_the_latest_log_and_the_projects_benchmarks_and_ships_an_estimate(tmp_path, capsys):
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    (logs / "2026-12-07T100000.000000.snakemake.log").write_text(LOG)
    benchmark(tmp_path, "finetune_train", "UF/seed0", 120.0)
    benchmark(tmp_path, "finetune_train", "UB/seed0", 180.0)
    assert p.cpu_per_job(tmp_path) == {"finetune_train": pytest.approx(150.0)}
    shipped = tmp_path / "estimate.parquet"
    assert main(["eta", "--workdir", str(tmp_path), "--ship", str(shipped)]) == 0
    frame = pl.read_parquet(shipped)
    assert frame.select("rule", "jobs", "cpu_seconds_per_job").rows() == [("finetune_train", 2, 150.0)]
    assert p.shipped_estimate(shipped) == {"finetune_train": 150.0}
    capsys.readouterr()
    assert main(["eta", "--workdir", str(tmp_path), "--estimate", str(shipped)]) == 0
    assert "2 of 12 jobs done" in capsys.readouterr().out


def test_eta_without_a_run_or_with_a_log_of_nothing_to_do_says_so(tmp_path, capsys):
    assert main(["eta", "--workdir", str(tmp_path)]) == 2
    assert "no run has started here" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no job plan"):
        p.read_run_log("Building DAG of jobs...\nNothing to be done (all requested files are present and up to date).\n")
