"""The library's shape: every module in one declared layer, imports only downward (or as docs/architecture.md
declares), no circle; settings have one source of defaults."""

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from lengthgen.config import ConfigError, train_settings, validate_config
from lengthgen.engine.settings import TrainSettings

SOURCE = Path(__file__).resolve().parents[1] / "src" / "lengthgen"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

# The layers, lowest first: a unit (a module or package directly under lengthgen, "lengthgen" being
# the package's own __init__) imports its own modules and those of units in lower layers; never a
# unit of its own layer or a higher one, except as EXCEPTIONS declare. docs/architecture.md
# lists the same layers and exceptions (a test compares them).
LAYERS = [
    ("foundation", ["lengthgen", "lengthgen.devices", "lengthgen.extensions", "lengthgen.theory", "lengthgen.stats",
                    "lengthgen.settings", "lengthgen.layout"]),
    ("job set-up", ["lengthgen.runtime", "lengthgen.jobserver"]),
    ("records", ["lengthgen.records", "lengthgen.references"]),
    ("tasks", ["lengthgen.tasks"]),
    ("models", ["lengthgen.models"]),
    ("inference", ["lengthgen.inference"]),
    ("training", ["lengthgen.engine"]),
    ("settings and evaluation", ["lengthgen.config", "lengthgen.lengthbins", "lengthgen.verify"]),
    ("experiments", ["lengthgen.scratch", "lengthgen.pretrain", "lengthgen.icl", "lengthgen.finetune",
                     "lengthgen.mechanism", "lengthgen.realistic", "lengthgen.corpora"]),
    ("reporting", ["lengthgen.results"]),
    ("planning", ["lengthgen.plan"]),
    ("command line", ["lengthgen.cli"]),
    ("entry point", ["lengthgen.__main__"]),
]
EXCEPTIONS = {("lengthgen.pretrain", "lengthgen.mechanism"),  # pretraining runs the mechanism's induction probe
              ("lengthgen.corpora", "lengthgen.pretrain"),  # the manipulation check's text, as pretraining cuts it
              ("lengthgen.corpora", "lengthgen.mechanism")}  # and pick and compare best heads as mechanism does


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every lengthgen module `path` imports, at the top or inside a function."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # `from . import x` may name a submodule
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in modules else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules}


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in SOURCE.rglob("*.py")}
    return {name: imports_of(path, set(files)) - {name} for name, path in files.items()}


def unit_of(module: str) -> str:
    """The package or module directly under lengthgen that `module` is part of."""
    return ".".join(module.split(".")[:2])


def layer_index(layers) -> dict[str, int]:
    return {unit: level for level, (_, units) in enumerate(layers) for unit in units}


def violations(graph: dict[str, set[str]], layers, exceptions) -> list[str]:
    """Every import that goes sideways or up, as `module -> module (unit layer -> unit layer)`; an
    exception names two units, or two modules for one import alone."""
    level, names = layer_index(layers), [name for name, _ in layers]
    found = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            source_unit, target_unit = unit_of(module), unit_of(target)
            if source_unit == target_unit or {(source_unit, target_unit), (module, target)} & exceptions:
                continue
            if level[target_unit] >= level[source_unit]:
                found.append(f"{module} -> {target} ({names[level[source_unit]]} -> {names[level[target_unit]]})")
    return found


def find_cycle(graph):
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_every_module_is_in_exactly_one_layer():
    units = {unit_of(module) for module in import_graph()}
    declared = [unit for _, members in LAYERS for unit in members]
    assert len(declared) == len(set(declared)), "a unit listed in two layers"
    assert units == set(declared), f"not in a layer: {sorted(units - set(declared))}; " \
                                   f"no such unit: {sorted(set(declared) - units)}"


def test_imports_go_down_the_layers():
    graph = import_graph()
    assert "lengthgen.engine.stacked" in graph["lengthgen.engine.loop"]  # the walker sees imports
    assert "lengthgen.runtime" in graph["lengthgen.records.files"]
    assert violations(graph, LAYERS, EXCEPTIONS) == []


def test_the_layer_check_finds_an_import_sideways_and_up():
    layers = [("low", ["lengthgen.a"]), ("mid", ["lengthgen.b", "lengthgen.c"]), ("top", ["lengthgen.d"])]
    graph = {"lengthgen.a.x": {"lengthgen.d"}, "lengthgen.b": {"lengthgen.c.y", "lengthgen.a.x"},
             "lengthgen.c.y": {"lengthgen.b"}, "lengthgen.d": {"lengthgen.b", "lengthgen.a.x"}}
    assert violations(graph, layers, {("lengthgen.c", "lengthgen.b")}) == [
        "lengthgen.a.x -> lengthgen.d (low -> top)", "lengthgen.b -> lengthgen.c.y (mid -> mid)"]


def test_no_import_circle():
    graph = import_graph()
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def architecture_doc_layers() -> tuple[list, set]:
    """The layers and exceptions as docs/architecture.md lists them."""
    section = ARCHITECTURE.read_text()
    layers = [(name, re.findall(r"`(lengthgen[\w.]*)`", units))
              for name, units in re.findall(r"^\d+\. \*\*([^*]+)\*\*: (.*)$", section, re.MULTILINE)]
    exceptions = set(re.findall(r"^- `(lengthgen[\w.]*)` imports `(lengthgen[\w.]*)`", section, re.MULTILINE))
    return layers, exceptions


def test_the_architecture_doc_declares_the_same_layers():
    assert architecture_doc_layers() == (LAYERS, EXCEPTIONS)


def test_train_settings_have_no_defaults_of_their_own_and_refuse_unknown_keys():
    block = validate_config({}, check_availability=False)["finetune"]["training"]
    settings = TrainSettings.from_config(block)
    assert settings.lr == 1e-5 and settings.eval_examples == 500  # the schema's values
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['eval_sise'\]"):
        TrainSettings.from_config({**block, "eval_sise": 3})
    with pytest.raises(ConfigError, match=r"missing \['lr'\]"):
        TrainSettings.from_config({k: v for k, v in block.items() if k != "lr"})
    with pytest.raises(TypeError):
        TrainSettings()  # no defaults to fall back on
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.lr = 1.0  # frozen, as every stage's settings


def test_every_stage_takes_the_shared_training_block_with_its_own_defaults():
    config = validate_config({}, check_availability=False)
    keys = {stage: set(config[stage]["training"]) for stage in ("scratch", "finetune", "pretrain")}
    assert keys["scratch"] == keys["finetune"] == keys["pretrain"]
    assert [config[s]["training"]["lr"] for s in ("scratch", "finetune", "pretrain")] == [1e-4, 1e-5, 1e-3]
    assert train_settings("pretrain").precision == "bf16"


HEAVY = ("torch", "transformers", "scipy")  # each costs a CPU-second or more to import


def test_parsing_the_workflow_imports_neither_torch_transformers_nor_scipy():
    """Snakemake imports the rule files' modules every time it parses the workflow (each dry run, each
    cluster job): loading torch there cost 3.5 CPU-seconds a parse. The jobs that compute import them."""
    import subprocess
    import sys

    workflow = SOURCE.parents[1] / "workflow"
    modules = sorted({match for path in [workflow / "Snakefile", *(workflow / "rules").glob("*.smk")]
                      for match in re.findall(r"^from (lengthgen[\w.]*) import", path.read_text(), re.M)})
    assert len(modules) > 20
    probe = "; ".join([*(f"import {m}" for m in modules), "import sys",
                       f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"])
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", f"parsing the workflow imports {loaded.strip()}"
