"""The package as a user installs it, and the software each rule declares for a cluster."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shipped import SHIPPED_CORPORA
from snakemake_runner import REPO, SNAKEFILE

ENV_FILE = REPO / "workflow" / "envs" / "lengthgen.yaml"


@pytest.mark.slow
def test_a_plain_install_validates_configs_without_the_checkout(tmp_path):
    """`pip install .` (not editable): the schema and the shipped models' registry ship inside the package."""
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--target", str(target), str(REPO)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    assert (target / "lengthgen" / "config" / "config.schema.yaml").exists()
    assert (target / "lengthgen" / "config" / "shipped_models.yaml").exists()
    code = ("import lengthgen, sys; from lengthgen.config import validate_config; "
            "assert 'site' in lengthgen.__file__, lengthgen.__file__; "
            "c = validate_config({'seeds': ['0', '1']}, check_availability=False); "
            "print(c['seeds'], c['scratch']['model']['d_model'], sorted(c['models']))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    corpora = [f"corpus_{corpus}_seed{seed}" for corpus, seed in SHIPPED_CORPORA]
    assert run.stdout.strip() == f"[0, 1] 256 {sorted(corpora + ['embedded', 'smollm2'])}"


def test_the_conda_environment_installs_this_package():
    env = yaml.safe_load(ENV_FILE.read_text())
    assert "conda-forge" in env["channels"] and "pytorch" not in env["channels"]  # no deprecated channel
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert not any(str(p).startswith(("-e", "--editable")) for p in pip)  # installed, not editable
    assert (ENV_FILE.parent / pip[-1] / "pyproject.toml").resolve() == REPO / "pyproject.toml"


def rule_directives() -> dict[str, dict]:
    """Per rule of the workflow: whether it runs a script, which conda environment it names, its
    outputs' report captions and the settings its params hand them."""
    code = ("import json, sys; from pathlib import Path; from snakemake.api import SnakemakeApi; "
            "from snakemake.settings.types import ConfigSettings, ResourceSettings\n"
            "with SnakemakeApi() as api:\n"
            f"    wf = api.workflow(snakefile={str(SNAKEFILE)!r}, workdir=Path(sys.argv[1]), "
            "resource_settings=ResourceSettings(), config_settings=ConfigSettings())\n"
            "    rules = wf._workflow.rules\n"
            "    print(json.dumps({r.name: {'script': bool(r.script), 'run': r.is_run, "
            "'conda': str(r.conda_env) if r.conda_env else None, 'log': bool(r.log), "
            "'captions': sorted({str(f.flags['report'].caption) for f in r.output if 'report' in f.flags}), "
            "'caption_keys': sorted(r.params.get('caption', {}))} for r in rules}))")
    run = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    import json
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_script_rule_names_the_environment_and_every_rule_logs():
    rules = rule_directives()
    # A workflow script runs as a `script:` (the cached rules) or, forked from the run's warm
    # process, from a `run:` block (lengthgen.jobserver): both name the environment.
    scripts = {name for name, r in rules.items() if r["script"] or (r["run"] and r["conda"])}
    assert {"scratch_train", "scratch_eval", "icl_predict", "finetune_train", "pretrain", "data"} <= scripts
    assert {"data", "pretrain"} == {name for name, r in rules.items() if r["script"]}
    for name in scripts:
        assert Path(rules[name]["conda"]).name == ENV_FILE.name, name
    assert all(r["log"] for name, r in rules.items() if name != "all"), [n for n, r in rules.items() if not r["log"]]


def test_every_setting_a_caption_shows_is_in_its_rules_params():
    """A report caption shows a setting as `snakemake.params.caption["KEY"]`: its rule must hand it
    that key (`caption=caption_params(...)`), or the report fails on a run that made the file."""
    shown_by_rule = {}
    for name, rule in rule_directives().items():
        shown = {key for caption in rule["captions"]
                 for key in re.findall(r'snakemake\.params\.caption\["([\w.]+)"\]', Path(caption).read_text())}
        assert shown <= set(rule["caption_keys"]), (name, sorted(shown - set(rule["caption_keys"])))
        shown_by_rule[name] = shown
    assert shown_by_rule["theory_check"] == {"seeds"}  # a table's own caption
    assert shown_by_rule["figure_icl"] >= {"icl.models", "icl.shots"}


@pytest.mark.slow
def test_the_workflow_passes_snakemake_lint():
    run = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--lint"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0 and "Congratulations" in run.stdout + run.stderr, run.stdout[-3000:] + run.stderr[-2000:]


GPU_MACHINE_CHECK = """
import importlib.abc, json, sys
class Missing(importlib.abc.MetaPathFinder):  # what a bare CUDA image with torch and transformers lacks
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"polars", "snakemake", "Bio"}:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed on a bare GPU image)")
sys.meta_path.insert(0, Missing())
sys.path[:0] = [sys.argv[1] + "/bench"]
import torch, gpu_pretrain, gpu_scratch
runs = [gpu_scratch.make_run("rope", seed, "tiny", "fp32", 2, torch.device("cpu")) for seed in (0, 1)]
assert gpu_scratch.ms_per_step(runs, 2, torch.device("cpu"), stack=True) > 0
gpu_pretrain.main(["configs/pretrain_gpu.yaml", sys.argv[2], "--steps", "2", "--corpus-chars", "100000",
                   "--batch-size", "2"])
"""


@pytest.mark.slow
def test_the_gpu_session_runs_without_polars_snakemake_or_biopython(tmp_path):
    """bench/gpu_session.sh runs on any CUDA machine with torch, transformers and jsonschema: the
    from-scratch benchmark's stacked step and the embedded model's pretraining, probe included, must
    not reach for the workflow's other packages (two steps of batch 2: the preset's batch of 64 in
    bf16 takes 7 minutes on a CPU). GPU time is scarce; it must not be spent on an
    ImportError."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    run = subprocess.run([sys.executable, "-c", GPU_MACHINE_CHECK, str(REPO), str(tmp_path)], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["section"]["model"] == {"layers": 4, "heads": 8, "d_model": 256}
    assert {"forward_copy_accuracy", "backward_copy_accuracy", "probe", "corpus_hash"} <= set(summary)
    assert (tmp_path / "model" / "model.safetensors").exists()
    preset = yaml.safe_load((REPO / "configs" / "pretrain_gpu.yaml").read_text())
    tokens = preset["pretrain"]["training"]["max_steps"] * 64 * summary["section"]["context"]
    assert tokens >= 33_000_000  # the floor for the stronger embedded model
