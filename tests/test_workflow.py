"""The smoke config end to end through Snakemake, then incremental reruns checked with dry runs."""

import copy
import os
import re
import shutil
import stat
import subprocess
import sys

import polars as pl
import pytest
import yaml

from lengthgen.records.tables import read_provenance
from lengthgen.results.verdicts import base_verdict
from snakemake_runner import REPO, SNAKEFILE, planned_jobs, planned_resources, smoke_config, snakemake

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("smoke")
    config = smoke_config()
    run = snakemake(workdir, config)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return workdir, config


def test_outputs_and_provenance(finished):
    workdir, config = finished
    tables = workdir / "results" / "tables"
    theory = pl.read_parquet(tables / "theory.parquet")
    assert theory.filter(pl.col("expressible")).get_column("task").to_list() == ["UR", "UL", "UF"]
    summary = pl.read_parquet(tables / "data_summary.parquet")
    assert summary.get_column("constraints_hold").all()
    # The same check catches one of these files with one row against its task (a unique query twice).
    assert data_check_of_a_broken_copy(workdir / "results" / "data" / "tokens" / "UR" / "9-12" / "seed0.parquet",
                                       workdir / "broken.parquet") is False
    # Every program on every example, and on strings ten times the longest bin (9-12): all right.
    check = pl.read_parquet(tables / "theory_check.parquet")
    assert check.select("task", "bin").rows() == [(t, b) for t in ("UR", "UL", "UF") for b in ("1-8", "9-12", "120")]
    assert check.get_column("share").to_list() == [1.0] * 9
    # No in-context or fine-tuned models in the smoke preset: no character data is made.
    assert summary.height == len(config["tasks"]) * len(config["scratch"]["test_bins"])
    record = read_provenance(workdir / "results" / "data" / "tokens" / "UF" / "9-12" / "seed0.parquet")
    assert record["config"] == {"task": "UF", "encoding": "tokens", "bin": "9-12", "seed": 0, "examples": 20,
                                "generator": "unique_copy", "settings": {"alphabet_size": 12, "style": "controlled"}}
    assert record["seed"] == 0 and record["packages"]["snakemake"] and record["packages"]["torch"]
    assert len(record["config_hash"]) == 16 and record["code_version"].startswith("0.1.0")
    for column in ("config_hash", "code_version", "device"):
        assert column in summary.columns


def data_check_of_a_broken_copy(path, copy) -> bool:
    """constraints_hold of a copy of a unique-query data file whose first row has its query twice."""
    import pyarrow as pa

    from lengthgen.records.tables import write_parquet
    from lengthgen.tasks.summary import summarise_file
    from test_generate import _unique_query_twice

    data = pl.read_parquet(path).to_arrow()
    rows = data.to_pylist()
    _unique_query_twice(rows[0])
    write_parquet(pa.Table.from_pylist(rows, schema=data.schema), copy, read_provenance(path))
    return summarise_file(copy)["constraints_hold"]


def test_scratch_outputs(finished):
    workdir, config = finished
    results = workdir / "results"
    table = pl.read_parquet(results / "tables" / "scratch.parquet")
    assert table.height == len(config["tasks"]) * len(config["scratch"]["test_bins"])
    assert set(table.get_column("bin")) == set(config["scratch"]["test_bins"])
    assert table.get_column("accuracy").is_between(0, 1).all()
    markdown = (results / "tables" / "scratch.md").read_text()
    assert "Theory split on the longest bins (retrieval 9-12, copying 9-12)" in markdown
    by_length = pl.read_parquet(results / "tables" / "scratch_by_length.parquet")
    lengths = set(by_length.filter(pl.col("task") == "UF").get_column("length"))
    assert lengths <= set(range(1, 13)) and len(lengths) >= 8
    evals = pl.read_parquet(results / "scratch" / "UF" / "ape" / "seed0" / "eval.parquet")  # every bin, one job
    assert evals.group_by("bin").len().sort("bin").rows() == [("1-8", 20), ("9-12", 20)]
    assert {"teacher_forced", "greedy", "greedy_prediction", "system"} <= set(evals.columns)
    from transformers import AutoModelForCausalLM, AutoTokenizer
    model_dir = results / "scratch" / "UF" / "ape" / "seed0" / "model"
    model, tokenizer = AutoModelForCausalLM.from_pretrained(model_dir), AutoTokenizer.from_pretrained(model_dir)
    assert model.config.model_type == "gpt2" and model.config.n_positions == 2 * 12 + 3
    assert tokenizer("s0 s11").input_ids == [5, 16]
    history = read_provenance(results / "scratch" / "UF" / "ape" / "seed0" / "training.parquet")
    assert history["config"]["training"]["schedule"] == "linear" and history["steps"] <= 20


def test_figures_tables_index_and_report(finished):
    workdir, config = finished
    results = workdir / "results"
    for stem in ("scratch_bins", "scratch_by_length"):
        assert (results / "figures" / f"{stem}.png").stat().st_size > 1000
        assert (results / "figures" / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    index = pl.read_parquet(results / "tables" / "index.parquet")
    assert index.get_column("table").to_list() == ["findings", "theory", "data_summary", "theory_check", "scratch",
                                                   "scratch_pairs"]
    assert index.filter(pl.col("table") == "scratch").get_column("rule").item() == "scratch_table"
    assert {"config_hash", "code_version", "device", "seed"} <= set(index.columns)
    assert (results / "tables" / "scratch.csv").read_text().startswith("system,task,family,bin,accuracy")
    run = snakemake(workdir, config, "--report", "results/report.html")
    assert run.returncode == 0, run.stderr[-2000:]
    html = (results / "report.html").read_text()
    assert "From-scratch models (ape)" in html and "Training lengths 1-8" in html
    # Each table's caption names that table (not the first file its rule read) and renders cleanly.
    assert "provenance results/tables/scratch.parquet" in html and "provenance results/scratch/" not in html
    assert "(WARNING/" not in run.stderr  # docutils: every caption is well-formed reStructuredText
    # The report opens on the findings: the first category, named on the landing page.
    assert "0 Findings" in html and "did the paper's findings reproduce here?" in html


def headless_chromium():
    """A headless Chromium through Selenium, or a skip that says what is missing (.ci/run installs
    Debian's chromium and chromium-driver; `pip install -e '.[test]'` brings selenium)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    browser, driver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not (browser and driver):
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver (.ci/run does)")
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(argument)
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def test_the_report_shows_the_findings_table_on_the_page_in_a_browser(finished):
    """As a reader clicks: open the report, the findings category, the findings entry's eye; the
    verdicts are on the page (the table's HTML page in the report's frame), and no page error."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    workdir, config = finished
    report = workdir / "results" / "browser_report.html"
    run = snakemake(workdir, config, "--report", str(report))
    assert run.returncode == 0, run.stderr[-2000:]
    browser = headless_chromium()
    try:
        browser.get(report.as_uri())
        wait = WebDriverWait(browser, 30)
        wait.until(expected_conditions.element_to_be_clickable((By.XPATH, "//span[text()='0 Findings']"))).click()
        entry = wait.until(expected_conditions.presence_of_element_located((By.XPATH, "//td[text()='findings']/..")))
        entry.find_element(By.XPATH, ".//a[@iconname='eye']").click()
        wait.until(expected_conditions.frame_to_be_available_and_switch_to_it((By.TAG_NAME, "iframe")))
        page = browser.find_element(By.TAG_NAME, "body").text
        header = [cell.text for cell in browser.find_elements(By.XPATH, "//table[1]//th")]
        browser.switch_to.default_content()
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    finally:
        browser.quit()
    assert "Did the paper's findings reproduce here?" in page
    assert "verdict" in header and "runs" in header
    findings = pl.read_parquet(workdir / "results" / "tables" / "findings.parquet")
    assert all(verdict in page for verdict in set(findings["claim_verdict"]))
    assert errors == []


def test_findings_give_a_verdict_for_every_finding_the_run_ran(finished):
    workdir, _ = finished
    tables = workdir / "results" / "tables"
    findings = pl.read_parquet(tables / "findings.parquet")
    verdicts = {"shown", "contradicted", "not distinguishable from noise", "not learnt"}
    # From scratch ran: both of its claims judged, on each family's longest bin (9-12), APE.
    scratch = findings.filter(pl.col("finding") == 1)
    assert {base_verdict(v) for v in scratch["verdict"]} <= verdicts
    assert {base_verdict(v) for v in scratch["claim_verdict"]} <= verdicts
    # The smoke models train 20 steps: a comparison whose sides did not reach findings.learnt in distribution
    # is gated, and its row shows the in-distribution numbers that gated it.
    gated = scratch.filter(pl.col("verdict") == "not learnt")
    learnt = 0.95  # the schema's default findings.learnt
    assert gated.select(pl.min_horizontal("first_in_distribution", "second_in_distribution") < learnt).to_series().all()
    judged = scratch.filter(pl.col("verdict") != "not learnt")
    assert judged.select(pl.col("first_in_distribution") >= learnt).to_series().all()
    assert scratch.select("first", "second", "kind").rows() == [("UR", "NRLast", "above"), ("UL", "NRLast", "above"),
                                                                ("UF", "NB", "above"), ("UR", "UL", "agree")]
    assert set(scratch["system"]) == {"ape"} and set(scratch["length"]) == {"9-12"}
    assert scratch.filter(pl.col("kind") == "agree")["difference_low"].is_not_null().all()
    # Every other stage is off in the smoke preset.
    others = findings.filter(pl.col("finding") != 1)
    assert set(others["verdict"]) == {"not run"} and set(others["note"]) == {"the config turned the stage off"}
    assert sorted(set(others["finding"])) == [2, 3, 4, 5, 6, 7]
    assert (tables / "findings.md").read_text().startswith("# Did the paper's findings reproduce here?")
    # Mirror tasks of the controlled generator share their inputs: paired. UR and NRLast do not.
    pairs = pl.read_parquet(tables / "scratch_pairs.parquet").filter(pl.col("measure") == "teacher_forced")
    tests = {(r["first"], r["second"], r["bin"]): (r["test"], r["pairs"]) for r in pairs.iter_rows(named=True)}
    assert tests[("UR", "UL", "9-12")] == ("McNemar exact", 20)
    assert tests[("UR", "NRLast", "9-12")] == ("Fisher exact", None)
    scratch_table = pl.read_parquet(tables / "scratch.parquet")
    assert (scratch_table["accuracy_low"] <= scratch_table["accuracy"]).all()
    assert (scratch_table["examples"] == 20).all()


# Rules downstream of any change: tables (with their CSV twins) and their index, figures.
DOWNSTREAM = {"data_summary", "theory_check", "scratch_table", "scratch_pairs", "findings", "tables_index",
              "figure_scratch", "all"}
# Of those, the tables of the task data alone: a change that keeps the data keeps them.
DATA_TABLES = {"data_summary", "theory_check"}


def test_second_run_does_nothing(finished):
    workdir, config = finished
    assert planned_jobs(workdir, config) == []


def test_adding_a_seed_adds_only_its_jobs(finished):
    workdir, config = finished
    config = copy.deepcopy(config)
    config["seeds"] = [0, 1]
    jobs = planned_jobs(workdir, config)
    per_file = [w for rule, w in jobs if rule not in DOWNSTREAM]
    assert per_file and all(w["seed"] == "1" for w in per_file)
    assert {rule for rule, w in jobs if rule in DOWNSTREAM} <= DOWNSTREAM


def test_changing_one_generator_setting_reruns_only_its_jobs(finished):
    workdir, config = finished
    config = copy.deepcopy(config)
    config["data"]["tokens"]["nonunique_retrieval"] = {"occurrence_divisor": 4}
    jobs = planned_jobs(workdir, config)
    data_jobs = [w for rule, w in jobs if rule == "data"]
    assert data_jobs and all(w["task"] == "NRLast" and w["encoding"] == "tokens" for w in data_jobs)
    assert all(w.get("task", "NRLast") == "NRLast" for _, w in jobs)
    assert {rule for rule, _ in jobs} == {"data", "scratch_train", "scratch_eval"} | DOWNSTREAM


def test_a_family_override_reruns_only_that_family(finished):
    workdir, config = finished
    config = copy.deepcopy(config)
    config["scratch"]["family_overrides"] = {"retrieval": {"model": {"layers": 2}}}
    jobs = planned_jobs(workdir, config)
    trained = {w["task"] for rule, w in jobs if rule == "scratch_train"}
    assert trained == {"UR", "UL", "NRLast"}


def test_changing_an_eval_setting_keeps_the_models(finished):
    workdir, config = finished
    config = copy.deepcopy(config)
    config["scratch"]["greedy"] = False
    assert {rule for rule, _ in planned_jobs(workdir, config)} == {"scratch_eval"} | DOWNSTREAM - DATA_TABLES


def test_adding_a_bin_makes_only_its_data_and_evaluates_the_models_again(finished):
    workdir, config = finished
    config = copy.deepcopy(config)
    config["scratch"]["test_bins"] = ["1-8", "9-12", "5-6"]  # inside the trained position range
    jobs = planned_jobs(workdir, config)
    assert {(w["encoding"], w["bin"]) for rule, w in jobs if rule == "data"} == {("tokens", "5-6")}
    assert {w["task"] for rule, w in jobs if rule == "scratch_eval"} == set(config["tasks"])  # one job per model
    assert {rule for rule, _ in jobs} == {"data", "scratch_eval"} | DOWNSTREAM


def test_every_job_logs_and_training_is_benchmarked(finished):
    workdir, _ = finished
    results = workdir / "results"
    log = (results / "logs" / "scratch_train" / "UF" / "ape" / "seed0.log").read_text()
    assert "UF/ape/seed0" in log and "step" in log  # the progress bar, kept after success
    data_log = (results / "logs" / "data" / "tokens" / "UF" / "9-12" / "seed0.log").read_text()
    assert "wrote results/data/tokens/UF/9-12/seed0.parquet: 20 rows" in data_log
    rows = pl.read_parquet(results / "tables" / "scratch.parquet").height
    table_log = (results / "logs" / "scratch_table" / "all.log").read_text()
    assert f"wrote results/tables/scratch.parquet: {rows} rows" in table_log
    empty = [p for p in (results / "logs").rglob("*.log") if not p.read_text().strip()]
    assert not empty  # every job, a script or a `run:` block inside Snakemake, says what it did
    from lengthgen.results.runtimes import runtimes
    times = runtimes(results / "benchmarks")
    assert set(times.get_column("rule")) == {"scratch_train", "scratch_eval"}
    assert times.filter(pl.col("rule") == "scratch_train").get_column("jobs").item() == len(smoke_config()["tasks"])


def test_command_line_config_values_arrive_as_strings_and_are_accepted(finished):
    workdir, config = finished
    run = snakemake(workdir, config, "--dry-run", "--config", "seeds=[0,1]", "scratch={'greedy': false}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "seed=1" in run.stdout


def test_the_shipped_model_is_known_to_every_preset(tmp_path):
    config = smoke_config()
    config["icl"]["models"] = ["embedded"]  # no `models:` registry in this preset
    assert "models" not in config
    jobs = planned_jobs(tmp_path, config)
    assert {w["model"] for rule, w in jobs if rule == "icl_predict"} == {"embedded"}


def test_paper_config_dry_runs_to_the_full_grid(tmp_path, repo):
    jobs = planned_jobs(tmp_path, repo / "configs" / "paper.yaml")
    counts = {}
    for rule, _ in jobs:
        counts[rule] = counts.get(rule, 0) + 1
    assert counts["scratch_train"] == 10 * 2 * 3
    assert counts["scratch_eval"] == 10 * 2 * 3  # every bin of a model in one job
    # tokens: 10 tasks x 3 bins; chars: the in-context lengths and the 2 fine-tuning bins; x 3 seeds
    assert counts["data"] == 10 * 3 * 3 + (6 * 5 + 4 * 6) * 3 + 10 * 2 * 3
    assert counts["icl_predict"] == 8 * 2  # one model load per (model, task family)
    assert counts["finetune_train"] == 10 * 3 and counts["finetune_eval"] == 10 * 3
    assert counts["mechanism"] == 4  # GPT-2 XL, gemma-3-1b, Llama-3.1-8B, Qwen2.5-7B
    # one model load per (model, realistic task): lorem, revert, cherry-pick, each over its lengths and seeds
    assert counts["realistic_predict"] == 8 * 3
    trains = [w for rule, w in jobs if rule == "scratch_train"]
    assert {(w["pe"], w["seed"]) for w in trains} == {(pe, s) for pe in ("ape", "rope") for s in "012"}


def loaded_model(rule: str, wildcards: dict) -> str | None:
    """The registry model a job loads, read from its wildcards (None: none, or one a stage trained)."""
    if rule in ("icl_predict", "realistic_predict", "finetune_train", "finetune_eval", "gguf_convert"):
        return wildcards["model"]
    if rule == "mechanism" and wildcards["subject"].startswith("model-"):
        return wildcards["subject"].removeprefix("model-")
    return None


def local_rules(repo) -> set[str]:
    """The rules that run where Snakemake runs, never submitted (the registry's, which report.smk
    hands to Snakemake)."""
    from lengthgen.plan.tables import local_rules

    return set(local_rules())


def test_every_rule_that_writes_a_table_or_a_figure_is_in_the_registry(repo):
    """The registry (lengthgen.plan.tables) generates `localrules` and the report's outputs: a rule
    writing a table or a figure outside it would go out as a cluster job and miss the report; a
    name in it that is no rule would be a table nothing writes."""
    from lengthgen.plan.tables import FIGURE_RULES, TABLE_RULES, local_rules

    writers = set()
    for path in (repo / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"\n(?=rule \w+:)", path.read_text())[1:]:
            name, body = block.split(":", 1)[0].removeprefix("rule "), block.split("\n\n\n", 1)[0]
            if "table_outputs(" in body or "{FIGURES}/" in body or "{TABLES}/" in body:
                writers.add(name)
    report = (repo / "workflow/rules/report.smk").read_text()
    assert "for _figure in FIGURE_LIST:" in report  # the figure rules are generated from their records
    assert writers | set(FIGURE_RULES) == set(local_rules())
    assert "workflow.localrules(*tables_plan.local_rules())" in report
    assert {figure.table for figure in FIGURE_RULES.values()} <= set(TABLE_RULES)  # each follows a known table


def test_every_figure_record_has_its_drawing_and_a_caption_for_each_image(repo):
    """A figure is named once, in its record: its rule is generated, its drawing found by the record's
    rule, each image's caption by the image's name."""
    from lengthgen.plan.figures import FIGURE_RULES
    from lengthgen.results.figures import DRAWINGS

    assert set(DRAWINGS) == set(FIGURE_RULES)
    for figure in FIGURE_RULES.values():
        for image in figure.images:
            assert (repo / "workflow" / "report" / f"{image}.rst").is_file(), image


def test_every_job_of_the_paper_preset_asks_for_what_its_model_needs(tmp_path, repo):
    """A cluster job gets what it asks for (the SLURM executor turns gpu, mem_mb and runtime into
    --gpus, --mem and --time); a job that asks for nothing gets the site default (30 minutes, 2 GB),
    far too little for a 70B model. Every submitted job asks for its time and memory, and every job
    that loads a registry model at least its entry's GPUs, memory and time."""
    paper = yaml.safe_load((repo / "configs" / "paper.yaml").read_text())
    entries = paper["models"]
    jobs = planned_resources(tmp_path, repo / "configs" / "paper.yaml")
    loading, local = set(), local_rules(repo) | {"all"}  # `all` only names the targets: no job
    assert {"findings", "tables_index"} <= local
    for rule, wildcards, resources in jobs:
        if rule not in local:
            assert {"runtime", "mem_mb"} <= resources.keys(), (rule, resources)
        name = loaded_model(rule, wildcards)
        if name is None:
            continue
        loading.add(rule)
        entry = entries[name]
        assert "mem_mb" in entry, f"the paper preset's {name} names no memory"
        assert int(resources["gpu"]) >= entry.get("gpus", 1), (rule, name, resources)
        assert int(resources["mem_mb"]) >= entry["mem_mb"], (rule, name, resources)
        assert int(resources["runtime"]) >= entry.get("runtime", 1), (rule, name, resources)
    assert loading == {"icl_predict", "realistic_predict", "finetune_train", "finetune_eval", "mechanism"}
    requested = {w["model"]: int(r["gpu"]) for rule, w, r in jobs if rule == "icl_predict"}
    assert requested["llama-3.1-70b"] == requested["llama-3.3-70b-instruct"] == 4  # the authors' tensor parallelism
    assert requested["qwen2.5-32b"] == 2 and requested["llama-3.1-8b"] == 1
    memory = {w["subject"]: int(r["mem_mb"]) for rule, w, r in jobs if rule == "mechanism"}
    assert memory["model-llama-3.1-8b"] == 40000  # more than the rule's own 32000: the entry's


def test_an_entry_asking_for_more_raises_its_jobs_requests_only(tmp_path, repo):
    """A job of a model whose entry names no memory or time asks for its rule's own; one whose entry
    names more asks for that, and the other model's jobs are unchanged. (That a bigger request
    reruns nothing: test_icl_workflow.)"""
    config = smoke_config()
    config["models"] = {"a": {"path": str(repo / "resources/embedded/gpt2")},
                        "b": {"path": str(repo / "resources/embedded/gpt2"), "mem_mb": 123456, "runtime": 999}}
    config["icl"]["models"] = ["a", "b"]
    asked = {(w["model"], w["family"]): r for rule, w, r in planned_resources(tmp_path, config)
             if rule == "icl_predict"}
    assert {int(r["mem_mb"]) for (m, _), r in asked.items() if m == "a"} == {64000}
    assert {int(r["runtime"]) for (m, _), r in asked.items() if m == "a"} == {480}
    assert {(int(r["mem_mb"]), int(r["runtime"])) for (m, _), r in asked.items() if m == "b"} == {(123456, 999)}


@pytest.mark.parametrize("target, message", [
    ("results/mechanism/smol/heads.parquet", "no mechanism subject 'smol' in this config; valid: none"),
    ("results/icl/smol/copying.parquet", "no icl model 'smol' in this config; valid: "),
])
def test_a_target_with_an_unknown_wildcard_names_the_valid_values(tmp_path, target, message):
    run = snakemake(tmp_path, smoke_config(), "--dry-run", target)
    assert run.returncode != 0
    assert message in run.stdout + run.stderr and "KeyError" not in run.stdout + run.stderr


def test_a_second_workflow_directory_reuses_cached_data(tmp_path):
    """`cache:` rules (data, pretrain) are shared through SNAKEMAKE_OUTPUT_CACHE with `--cache`."""
    import os
    import subprocess
    import sys

    config = smoke_config()
    env = {**os.environ, "SNAKEMAKE_OUTPUT_CACHE": str(tmp_path / "cache")}
    (tmp_path / "cache").mkdir()
    outputs = []
    for name in ("first", "second"):
        workdir = tmp_path / name
        workdir.mkdir()
        (workdir / "config.yaml").write_text(__import__("yaml").safe_dump(config))
        run = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE),
                              "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
                              "--cores", "2", "results/tables/data_summary.parquet", "--cache"],  # the data only
                             capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        outputs.append(run.stdout + run.stderr)
    files = len(list((tmp_path / "first" / "results" / "data").rglob("*.parquet")))
    assert outputs[0].count("to cache.") == files  # made, then moved into the cache (and linked back)
    assert outputs[1].count("to cache.") == 0 and outputs[1].count("from cache.") == files  # only linked
    for name in ("first", "second"):
        path = tmp_path / name / "results" / "data" / "tokens" / "UR" / "9-12" / "seed0.parquet"
        assert path.is_symlink() and pl.read_parquet(path).get_column("task").unique().to_list() == ["UR"]


def test_every_result_file_has_the_permissions_of_the_umask(finished):
    """A collaborator on a shared cluster reads what the run wrote (safetensors writes 0600)."""
    workdir, _ = finished
    mask = os.umask(0)
    os.umask(mask)
    files = [p for p in (workdir / "results").rglob("*") if p.is_file() and not p.is_symlink()]
    assert any(p.name == "model.safetensors" for p in files)
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path


def run_in_project(project, *args):
    """Snakemake as a researcher runs it: from the repository checkout, its own Snakefile."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(project / "workflow" / "Snakefile"), "--directory",
         str(project), "--configfile", str(project / "configs" / "mine.yaml"), "--cores", "2", *args],
        capture_output=True, text=True, timeout=900)


def test_a_finished_project_moved_to_another_folder_reruns_nothing(tmp_path):
    """Laptop to cluster scratch: the checkout (workflow, configs, shipped models) with its results/
    and .snakemake/ moved elsewhere, the old folder gone. A model inside the project (the shipped
    one, in context) is recorded relative to it."""
    project = tmp_path / "laptop" / "lengthgen"
    for part in ("workflow", "resources", "configs"):
        shutil.copytree(REPO / part, project / part)
    shutil.copy2(REPO / "config.yaml", project)
    config = smoke_config()
    config["tasks"] = ["UF"]  # one task is enough to move: every stage's files are of one kind
    config["icl"].update(models=["embedded"], variants={"copying": ["bare"]})
    (project / "configs" / "mine.yaml").write_text(yaml.safe_dump(config))
    run = run_in_project(project)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    moved = shutil.copytree(project, tmp_path / "scratch" / "lengthgen", symlinks=True)  # times kept, as rsync -a
    shutil.rmtree(tmp_path / "laptop")
    dry = run_in_project(moved, "--dry-run")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[-3000:]

    # Damaged there: `lengthgen verify` names the file, and the command it prints rebuilds it.
    damaged = moved / "results" / "data" / "tokens" / "UF" / "9-12" / "seed0.parquet"
    damaged.write_bytes(damaged.read_bytes()[:100])
    verify = [sys.executable, "-m", "lengthgen", "verify", "--configfile", "configs/mine.yaml"]
    found = subprocess.run(verify, cwd=moved, capture_output=True, text=True, timeout=300)
    assert found.returncode == 1 and "damaged    results/data/tokens/UF/9-12/seed0.parquet" in found.stdout
    command = found.stdout.splitlines()[-1].removeprefix("rebuild: snakemake ").split()
    assert command == ["--configfile", "configs/mine.yaml", "--forcerun", "results/data/tokens/UF/9-12/seed0.parquet"]
    rebuilt = run_in_project(moved, *command[2:])
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:]
    assert subprocess.run(verify, cwd=moved, capture_output=True, text=True, timeout=300).returncode == 0
    assert "Nothing to be done" in run_in_project(moved, "--dry-run").stdout
