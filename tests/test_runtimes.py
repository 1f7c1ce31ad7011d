"""`lengthgen runtimes`' work columns: the token counts a training run keeps (through a resume and a
stack), the FLOPs they give per CPU second against the measured matmul peak, and the padded share."""

import time

import pytest
import torch

from lengthgen.cli import main
from lengthgen.config import model_entry, train_settings
from lengthgen.engine.run import TrainingRun, write_history
from lengthgen.engine.sequences import TrainingStream, collate, encode_example
from lengthgen.engine.stacked import StackedRuns
from lengthgen.finetune.train import finetune_model, finetune_run
from lengthgen.models.builders import build_model
from lengthgen.models.vocab import vocab_size
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import read_provenance
from lengthgen.results import runtimes as times
from lengthgen.settings import FinetuneTaskSettings
from lengthgen.tasks import LengthBin, get_task
from tiny_models import save_tiny_model, tiny_training_section

BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
CPU = torch.device("cpu")


def write_benchmark(results, job: str, seconds: float, cpu: float, rss: float = 100.0) -> None:
    path = results / "benchmarks" / f"{job}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BENCHMARK_HEADER + f"{seconds}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n")


def counted_summary(tokens, padded, pairs, parameters=10**6, n_layer=4, d_model=250) -> dict:
    """A finished run's summary as `TrainingRun.summary()` gives it, with these counts."""
    return {"name": "run", "steps": 3, "best_accuracy": 0.5, "resumed_from": None,
            "history": {"steps": [3], "losses": [1.0], "accuracies": [0.5], "metrics": [{}]},
            "tokens": tokens, "padded_tokens": padded, "attention_pairs": pairs, "parameters": parameters,
            "n_layer": n_layer, "d_model": d_model}


def write_run(results, folder: str, summary: dict, device: str = "cpu") -> None:
    write_history(summary, results / folder / "training.parquet", Provenance({"x": 1}), 0, device, {})


def row(table, rule: str) -> dict:
    return next(r for r in table.iter_rows(named=True) if r["rule"] == rule)


def test_flops_per_cpu_second_peak_share_and_padding_of_the_jobs_that_counted(tmp_path):
    """6 N T + 6 n_layer d_model sum(L^2) per job, summed per rule over the jobs whose history has the
    counts and divided by those jobs' seconds: a job without a history adds its time, not its zero."""
    results = tmp_path / "results"
    write_benchmark(results, "scratch_train/UF/ape/seed0", 200.0, 100.0)
    write_run(results, "scratch/UF/ape/seed0", counted_summary(200_000, 50_000, 10**6))  # 1.2e12 + 6e9
    write_benchmark(results, "scratch_train/UR/ape/seed0", 100.0, 50.0)
    write_run(results, "scratch/UR/ape/seed0", counted_summary(100_000, 100_000, 0))  # 6e11
    write_benchmark(results, "scratch_train/NF/ape/seed0", 1000.0, 1000.0)  # its history is missing
    write_benchmark(results, "data/tokens/UF/9-12/seed0", 5.0, 5.0)
    table = times.runtimes(results / "benchmarks", peak=50e9)
    scratch = row(table, "scratch_train")
    assert scratch["jobs"] == 3 and scratch["cpu_seconds"] == 1150.0
    assert scratch["gflop"] == pytest.approx(1806.0)
    assert scratch["gflop_per_cpu_s"] == pytest.approx(1806.0 / 150)
    assert scratch["gflop_per_s"] == pytest.approx(1806.0 / 300)
    assert scratch["peak_pct"] == pytest.approx(100 * 1806e9 / 150 / 50e9)
    assert scratch["padded_pct"] == pytest.approx(100 * 150_000 / 450_000)
    data = row(table, "data")
    assert all(data[c] is None for c in times.WORK_COLUMNS)
    jobs = times.training_jobs(results / "benchmarks", peak=50e9)
    assert jobs["job"].to_list() == ["scratch_train/NF/ape/seed0", "scratch_train/UF/ape/seed0",
                                     "scratch_train/UR/ape/seed0"]
    assert jobs["gflop_per_cpu_s"].to_list()[0] is None
    assert jobs["gflop_per_cpu_s"].to_list()[1:] == pytest.approx([1206.0 / 100, 600.0 / 50])
    assert jobs["padded_pct"].to_list()[1:] == pytest.approx([20.0, 50.0])


def test_a_stacked_job_sums_every_run_it_trained(tmp_path):
    results = tmp_path / "results"
    write_benchmark(results, "scratch_stack/UF_UB/ape", 40.0, 20.0)
    for task, seed in (("UF", 0), ("UF", 1), ("UB", 0)):
        write_run(results, f"scratch/{task}/ape/seed{seed}", counted_summary(1000, 500, 0, parameters=1000))
    write_run(results, "scratch/UR/ape/seed0", counted_summary(10**9, 0, 0))  # not of this stack
    stack = row(times.runtimes(results / "benchmarks"), "scratch_stack")
    assert stack["gflop"] == pytest.approx(3 * 6e6 / 1e9)
    assert stack["gflop_per_cpu_s"] == pytest.approx(3 * 6e6 / 20 / 1e9)
    assert stack["padded_pct"] == pytest.approx(100 / 3)
    assert stack["peak_pct"] is None  # no peak given


def test_old_damaged_or_accelerator_histories_leave_columns_empty(tmp_path):
    """A history from before the counts, an unreadable one: empty columns, no error. On a GPU the
    CPU seconds do not measure the work: FLOPs per CPU second shown, no share of the CPU's peak."""
    results = tmp_path / "results"
    old = counted_summary(0, 0, 0)
    for key in ("tokens", "padded_tokens", "attention_pairs", "parameters", "n_layer", "d_model"):
        del old[key]
    write_benchmark(results, "finetune_train/tiny/default/UF/seed0", 10.0, 10.0)
    write_run(results, "finetune/tiny/default/UF/seed0", old)
    write_benchmark(results, "corpus_finetune_train/tiny/UF/seed0", 10.0, 10.0)
    (results / "corpora/finetune/tiny/UF/seed0").mkdir(parents=True)
    (results / "corpora/finetune/tiny/UF/seed0/training.parquet").write_bytes(b"not parquet")
    write_benchmark(results, "scratch_train/UF/ape/seed0", 10.0, 10.0)
    write_run(results, "scratch/UF/ape/seed0", counted_summary(1000, 0, 0, parameters=1000), device="cuda")
    table = times.runtimes(results / "benchmarks", peak=1e9)
    for rule in ("finetune_train", "corpus_finetune_train"):
        assert all(row(table, rule)[c] is None for c in times.WORK_COLUMNS)
    gpu = row(table, "scratch_train")
    assert gpu["gflop_per_cpu_s"] == pytest.approx(6e6 / 10 / 1e9) and gpu["peak_pct"] is None


def test_matmul_peak_is_two_n_cubed_over_the_fastest_product_on_one_thread():
    ticks = iter([0.0, 0.5, 1.0, 1.25, 2.0, 2.75])  # products of 0.5, 0.25 and 0.75 s
    threads = torch.get_num_threads()
    assert times.matmul_peak(64, repeats=3, clock=lambda: next(ticks)) == 2 * 64**3 / 0.25
    assert torch.get_num_threads() == threads
    start = time.perf_counter()
    assert 1e8 < times.matmul_peak() < 1e13  # the command's own measurement, well under 5 s
    assert time.perf_counter() - start < 5


def test_the_command_prints_the_work_columns_and_the_peak(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(times, "matmul_peak", lambda: 50e9)
    results = tmp_path / "results"
    write_benchmark(results, "scratch_train/UF/ape/seed0", 200.0, 100.0)
    write_run(results, "scratch/UF/ape/seed0", counted_summary(200_000, 50_000, 10**6))
    assert main(["runtimes", str(results / "benchmarks"), "--workdir", str(tmp_path), "--jobs"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "| rule | jobs | total_seconds | longest_seconds | cpu_seconds | peak_rss_mb | gflop | gflop_per_cpu_s "
        "| gflop_per_s | peak_pct | padded_pct |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        "| scratch_train | 1 | 200.0 | 200.0 | 100.0 | 100.0 | 1206.0 | 12.1 | 6.0 | 24.1 | 20.0 |",
        "total: 200 job-seconds in 1 benchmarked jobs; fp32 matmul peak 50.0 GFLOP/s on one thread (measured now); "
        "no Snakemake log, so no wall time",
        "",
        "| job | seconds | cpu_seconds | gflop | gflop_per_cpu_s | gflop_per_s | peak_pct | padded_pct |",
        "|---|---|---|---|---|---|---|---|",
        "| scratch_train/UF/ape/seed0 | 200.0 | 100.0 | 1206.0 | 12.1 | 6.0 | 24.1 | 20.0 |",
    ]


# -- the counts a run keeps ------------------------------------------------------------------


def two_row_batch():
    """Rows of 5 and 9 tokens (<bos> x <sep> target <eos>), padded to 9."""
    uf = get_task("UF")
    return collate([encode_example(uf, [0], None, [0]), encode_example(uf, [0, 1, 2], None, [0, 1, 2])])


@pytest.mark.parametrize(("buckets", "padded"), [(1, 4), (2, 0)])
def test_a_step_counts_real_padded_and_attended_positions(buckets, padded, tmp_path):
    """Real: each row up to its last labelled token; padded: the other positions the model computes
    (length buckets cut them); pairs: sum of squared row lengths. In the history's provenance too."""
    batch = two_row_batch()
    assert batch["input_ids"].shape == (2, 9)
    model = build_model("nope", vocab_size(4), 16, layers=2, heads=2, d_model=16, seed=0)
    run = TrainingRun(model, train_settings(max_steps=3, eval_every=10, length_buckets=buckets),
                      lambda step: batch, lambda m: 0.0, None, {}, device=CPU)
    while run.step():
        pass
    summary = run.summary()
    assert (summary["tokens"], summary["padded_tokens"], summary["attention_pairs"]) == (3 * 14, 3 * padded,
                                                                                       3 * (25 + 81))
    assert summary["parameters"] == sum(p.numel() for p in model.parameters())
    assert (summary["n_layer"], summary["d_model"]) == (2, 16)
    write_history(summary, tmp_path / "h.parquet", Provenance({}), 0, "cpu", {})
    record = read_provenance(tmp_path / "h.parquet")
    assert {k: record[k] for k in ("steps", "tokens", "padded_tokens", "attention_pairs", "n_layer")} == {
        "steps": 3, "tokens": 42, "padded_tokens": 3 * padded, "attention_pairs": 318, "n_layer": 2}


def stream_run(checkpoint_dir, seed=0, max_steps=10):
    model = build_model("ape", vocab_size(10), 24, layers=1, heads=2, d_model=16, seed=seed)
    stream = TrainingStream(get_task("UF"), {"alphabet_size": 10}, LengthBin(1, 9), 8, seed, 24)
    settings = train_settings(lr=3e-3, batch_size=8, max_steps=max_steps, eval_every=5, checkpoint_every=4)
    return TrainingRun(model, settings, stream, lambda m: 0.5, checkpoint_dir, {"seed": seed}, device=CPU)


def test_token_counts_survive_a_resume_and_an_older_checkpoint_makes_them_unknown(tmp_path):
    straight = stream_run(tmp_path / "straight")
    while straight.step():
        pass
    killed = stream_run(tmp_path / "killed")
    for _ in range(6):  # killed after step 6: the last checkpoint is that of step 4
        killed.step()
    resumed = stream_run(tmp_path / "killed")
    assert resumed.resumed_from == 4
    while resumed.step():
        pass
    counts = ("tokens", "padded_tokens", "attention_pairs")
    assert {k: resumed.summary()[k] for k in counts} == {k: straight.summary()[k] for k in counts}
    assert straight.summary()["tokens"] > 0 and resumed.history.losses == straight.history.losses
    # A checkpoint written before the counts existed: the run resumes; its counts are unknown, not low.
    state = torch.load(tmp_path / "killed" / "state.pt", weights_only=False)
    del state["token_counts"]
    state["done"] = False
    (tmp_path / "old").mkdir()
    torch.save(state, tmp_path / "old" / "state.pt")
    old = stream_run(tmp_path / "old")
    assert old.resumed_from == 10
    assert all(old.summary()[k] is None for k in counts)


def test_a_stack_counts_the_padding_to_its_common_width():
    runs = [stream_run(None, seed) for seed in (0, 1)]
    batches = [r.batch_for(0) for r in runs]
    width = max(b["input_ids"].shape[1] for b in batches)
    assert len({b["input_ids"].shape[1] for b in batches}) == 2  # the narrower run is padded by the stack
    StackedRuns(runs).step()
    for run, batch in zip(runs, batches):
        real = int(sum(int((row != -100).nonzero().max()) + 1 for row in batch["labels"]))
        assert run.token_counts["tokens"] == real
        assert run.token_counts["padded_tokens"] == 8 * width - real


def test_a_tiny_fine_tuning_shows_its_work(tmp_path):
    """A real run end to end: fine-tune a tiny GPT-2, write its history where finetune_train does, its
    benchmark with the CPU seconds it took; `runtimes` shows FLOPs of 6 N T + 6 n_layer d_model sum(L^2)."""
    save_tiny_model(tmp_path / "pretrained", positions=64, layers=2)
    base = tiny_training_section(max_steps=20, length_buckets=2)
    section = {k: v for k, v in base.items() if k not in ("model", "eos")}
    section.update(model={"path": str(tmp_path / "pretrained")}, data={"alphabet_size": 52, "pool_fraction": None},
                   format="lengthgen", train_examples=None)
    job = tmp_path / "results" / "finetune" / "tiny" / "default" / "NF" / "seed3"
    wall, cpu = time.perf_counter(), time.process_time()
    run, tokenizer = finetune_run(model_entry("tiny", {"path": section["model"]["path"]}), get_task("NF"), 3,
                                  FinetuneTaskSettings.from_config(section), tmp_path / "ckpt")
    summary = finetune_model(run, tokenizer, job / "model", progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    write_history(summary, job / "training.parquet", Provenance(section), 3, "cpu", {"task": "NF"})
    write_benchmark(tmp_path / "results", "finetune_train/tiny/default/NF/seed3", wall, cpu)
    table = times.runtimes(tmp_path / "results" / "benchmarks", peak=times.matmul_peak())
    work = row(table, "finetune_train")
    flops = 6 * summary["parameters"] * summary["tokens"] + 6 * 2 * 16 * summary["attention_pairs"]
    assert work["gflop"] == pytest.approx(flops / 1e9)
    assert work["gflop_per_cpu_s"] == pytest.approx(flops / 1e9 / cpu)
    assert 0 < work["padded_pct"] < 100 and work["peak_pct"] > 0
    # Where its CPU went: each phase measured, none more than the job, the steps the largest here.
    phases = {phase: summary[f"cpu_{phase}"] for phase in ("data", "steps", "evaluation", "checkpoints")}
    assert all(seconds > 0 for seconds in phases.values()) and sum(phases.values()) < cpu
    assert phases["steps"] == max(phases.values())
    assert 0 < summary["cpu_start_up"] <= time.process_time()
    split = row(times.rule_cpu_split(tmp_path / "results" / "benchmarks", peak=times.matmul_peak()), "finetune_train")
    assert split["steps_pct"] == pytest.approx(100 * phases["steps"] / cpu)
    assert split["steps_peak_pct"] > work["peak_pct"]  # the steps alone do more per CPU-second than the job


def test_the_split_of_a_rules_cpu_sums_its_jobs_phases_and_leaves_out_jobs_without_them(tmp_path):
    """Per rule: each phase's CPU-seconds over its jobs' CPU-seconds; start-up is each job's CPU before its
    first run; the rest is the remainder; the steps' FLOPs per CPU-second against the peak."""
    results = tmp_path / "results"
    phases = {"cpu_start_up": 10.0, "cpu_data": 5.0, "cpu_steps": 50.0, "cpu_evaluation": 20.0, "cpu_checkpoints": 5.0}
    write_benchmark(results, "finetune_train/m/default/UF/seed0", 120.0, 100.0)
    write_run(results, "finetune/m/default/UF/seed0", {**counted_summary(200_000, 0, 0), **phases})  # 1.2e12 FLOPs
    write_benchmark(results, "finetune_train/m/default/UB/seed0", 60.0, 50.0)  # from before the phases: left out
    write_run(results, "finetune/m/default/UB/seed0", counted_summary(100_000, 0, 0))
    split = row(times.rule_cpu_split(results / "benchmarks", peak=50e9), "finetune_train")
    assert split["jobs"] == 1 and split["cpu_seconds"] == 100.0
    assert [split[f"{p}_pct"] for p in times.PHASES] == pytest.approx([10.0, 5.0, 50.0, 20.0, 5.0])
    assert split["rest_pct"] == pytest.approx(10.0)
    assert split["steps_peak_pct"] == pytest.approx(100 * 1.2e12 / 50.0 / 50e9)


def test_the_cpu_of_each_phase_survives_a_resume(tmp_path):
    """A run resumed from its checkpoint goes on counting from the CPU-seconds the checkpoint holds."""
    def run():
        model = build_model("nope", vocab_size(4), 16, layers=2, heads=2, d_model=16, seed=0)
        return TrainingRun(model, train_settings(max_steps=6, eval_every=2, checkpoint_every=2),
                           lambda step: two_row_batch(), lambda m: 0.5, tmp_path / "ckpt", {"x": 1}, device=CPU)

    first = run()
    for _ in range(4):  # interrupted after the checkpoint at step 4
        first.step()
    before = dict(first.cpu_seconds)
    resumed = run()
    assert resumed.resumed_from == 4
    # Every phase as it stood, but the checkpoint's own save (not yet done when its state was taken).
    assert {p: v for p, v in resumed.cpu_seconds.items() if p != "checkpoints"} == {
        p: v for p, v in before.items() if p != "checkpoints"}
    assert 0 < resumed.cpu_seconds["checkpoints"] < before["checkpoints"]
    at_resume = dict(resumed.cpu_seconds)
    while resumed.step():
        pass
    # checkpoints: the one save the resume lost and the save at step 6 are of unequal cost, so only
    # that counting went on is asserted for it
    assert all(resumed.cpu_seconds[p] >= before[p] for p in before if p != "checkpoints")
    assert resumed.cpu_seconds["steps"] > before["steps"]
    assert resumed.cpu_seconds["checkpoints"] > at_resume["checkpoints"]


# -- pretraining, which times itself -------------------------------------------------------


def write_pretraining(results, job: str, record: dict) -> None:
    import pyarrow as pa

    from lengthgen.records.tables import write_parquet

    path = results / "pretrain" / job / "summary.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(pa.table({"layer": [0]}), path, {**Provenance({"x": 1}).record(), **record})


def test_pretraining_jobs_are_read_from_their_summaries_and_an_untimed_one_is_left_out(tmp_path):
    """The cached pretrain rule has no benchmark file: its jobs' own times and counts give its row."""
    results = tmp_path / "results"
    write_benchmark(results, "data/tokens/UF/9-12/seed0", 5.0, 5.0)
    counts = {k: v for k, v in counted_summary(1000, 0, 2000, parameters=500, n_layer=2, d_model=8).items()
              if k in ("tokens", "padded_tokens", "attention_pairs", "parameters", "n_layer", "d_model")}
    write_pretraining(results, "natural/gpt2/seed0", {**counts, "seconds": 30.0, "cpu_seconds": 20.0, "max_rss_mb": 400.0})
    write_pretraining(results, "balanced/gpt2/seed0", {**counts, "seconds": 10.0, "cpu_seconds": 10.0, "max_rss_mb": 300.0})
    write_pretraining(results, "reversed/gpt2/seed0", counts)  # made before the jobs timed themselves
    table = times.runtimes(results / "benchmarks", peak=1e9)
    pretrain = row(table, "pretrain")
    flops = 6 * 500 * 1000 + 6 * 2 * 8 * 2000
    assert pretrain["jobs"] == 2 and pretrain["total_seconds"] == 40.0 and pretrain["cpu_seconds"] == 30.0
    assert pretrain["peak_rss_mb"] == 400.0 and pretrain["padded_pct"] == 0.0
    assert pretrain["gflop"] == pytest.approx(2 * flops / 1e9)
    assert pretrain["peak_pct"] == pytest.approx(100 * 2 * flops / 30.0 / 1e9)
    jobs = times.training_jobs(results / "benchmarks", peak=1e9)
    assert jobs["job"].to_list() == ["pretrain/balanced/gpt2/seed0", "pretrain/natural/gpt2/seed0"]


def test_only_pretraining_is_enough_and_nothing_at_all_is_one_error(tmp_path):
    results = tmp_path / "results"
    with pytest.raises(ValueError, match="no benchmark files .* no timed pretraining"):
        times.runtimes(results / "benchmarks")
    write_pretraining(results, "natural/gpt2/seed0", {"seconds": 3.0, "cpu_seconds": 2.0, "max_rss_mb": 1.0})
    assert times.runtimes(results / "benchmarks")["rule"].to_list() == ["pretrain"]


def test_the_job_clock_counts_this_process_cpu_and_wall_time():
    from lengthgen.runtime import JobClock

    clock = JobClock()
    end = time.process_time() + 0.2
    while time.process_time() < end:  # 0.2 s of CPU
        pass
    usage = clock.usage()
    assert usage["cpu_seconds"] >= 0.19 and usage["seconds"] >= usage["cpu_seconds"] * 0.5
    assert usage["max_rss_mb"] > 10


def test_a_tiny_pretraining_job_of_the_workflow_is_listed_with_its_work(tmp_path):
    """The pretrain rule's script records its times and counts: `lengthgen runtimes` lists the job."""
    from snakemake_runner import smoke_config, snakemake

    config = smoke_config()
    config["pretrain"] = {"enabled": True, "corpus_chars": 60_000, "context": 96, "probe_length": 3,
                          "model": {"layers": 1, "heads": 2, "d_model": 16},
                          "training": {"batch_size": 4, "max_steps": 4, "eval_every": 2, "checkpoint_every": 2,
                                       "warmup_steps": 1, "eval_examples": 4}}
    run = snakemake(tmp_path, config, "results/pretrain/natural/gpt2/seed0/summary.parquet")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    record = read_provenance(tmp_path / "results" / "pretrain" / "natural" / "gpt2" / "seed0" / "summary.parquet")
    assert record["tokens"] == 4 * 4 * 96 and record["padded_tokens"] == 0 and record["cpu_seconds"] > 0
    jobs = times.training_jobs(tmp_path / "results" / "benchmarks", peak=1e9)
    assert jobs["job"].to_list() == ["pretrain/natural/gpt2/seed0"] and jobs["gflop"][0] > 0
