"""The package as a user installs it, and the software each rule declares for a cluster."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from snakemake_runner import REPO, SNAKEFILE

ENV_FILE = REPO / "workflow" / "envs" / "lengthgen.yaml"


@pytest.mark.slow
def test_a_plain_install_validates_configs_without_the_checkout(tmp_path):
    """`pip install .` (not editable): the schema ships inside the package."""
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--target", str(target), str(REPO)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    assert (target / "lengthgen" / "config" / "config.schema.yaml").exists()
    code = ("import lengthgen, sys; from lengthgen.config import validate_config; "
            "assert 'site' in lengthgen.__file__, lengthgen.__file__; "
            "c = validate_config({'seeds': ['0', '1']}, check_availability=False); "
            "print(c['seeds'], c['scratch']['model']['d_model'])")
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[0, 1] 256"


def test_the_conda_environment_installs_this_package():
    env = yaml.safe_load(ENV_FILE.read_text())
    assert "conda-forge" in env["channels"] and "pytorch" not in env["channels"]  # no deprecated channel
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert not any(str(p).startswith(("-e", "--editable")) for p in pip)  # installed, not editable
    assert (ENV_FILE.parent / pip[-1] / "pyproject.toml").resolve() == REPO / "pyproject.toml"


def rule_directives() -> dict[str, dict]:
    """Per rule of the workflow: whether it runs a script and which conda environment it names."""
    code = ("import json, sys; from pathlib import Path; from snakemake.api import SnakemakeApi; "
            "from snakemake.settings.types import ConfigSettings, ResourceSettings\n"
            "with SnakemakeApi() as api:\n"
            f"    wf = api.workflow(snakefile={str(SNAKEFILE)!r}, workdir=Path(sys.argv[1]), "
            "resource_settings=ResourceSettings(), config_settings=ConfigSettings())\n"
            "    rules = wf._workflow.rules\n"
            "    print(json.dumps({r.name: {'script': bool(r.script), 'run': r.is_run, "
            "'conda': str(r.conda_env) if r.conda_env else None, 'log': bool(r.log)} for r in rules}))")
    run = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    import json
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_script_rule_names_the_environment_and_every_rule_logs():
    rules = rule_directives()
    scripts = {name for name, r in rules.items() if r["script"]}
    assert {"scratch_train", "scratch_eval", "icl_predict", "finetune_train", "pretrain"} <= scripts
    for name in scripts:
        assert Path(rules[name]["conda"]).name == ENV_FILE.name, name
    assert all(r["log"] for name, r in rules.items() if name != "all"), [n for n, r in rules.items() if not r["log"]]


@pytest.mark.slow
def test_the_workflow_passes_snakemake_lint():
    run = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--lint"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0 and "Congratulations" in run.stdout + run.stderr, run.stdout[-3000:] + run.stderr[-2000:]
