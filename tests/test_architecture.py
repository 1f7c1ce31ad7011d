"""The library's shape: imports go one way (no circle), settings have one source of defaults."""

import ast
from pathlib import Path

import pytest

from lengthgen.config import train_settings, validate_config
from lengthgen.engine.settings import TrainSettings

SOURCE = Path(__file__).resolve().parents[1] / "src" / "lengthgen"


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


def test_no_import_circle():
    graph = import_graph()
    assert "lengthgen.engine.stacked" in graph["lengthgen.engine.loop"]  # the walker sees imports
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_lower_layers_never_import_the_experiments():
    experiments = ("lengthgen.scratch", "lengthgen.finetune", "lengthgen.icl", "lengthgen.pretrain",
                   "lengthgen.mechanism", "lengthgen.realistic")
    for name, imported in import_graph().items():
        if name.startswith(("lengthgen.tasks", "lengthgen.models", "lengthgen.engine")):
            assert not {m for m in imported if m.startswith(experiments)}, name


def test_train_settings_have_no_defaults_of_their_own_and_refuse_unknown_keys():
    block = validate_config({}, check_availability=False)["finetune"]["training"]
    settings = TrainSettings.from_config(block, keep="best")
    assert settings.lr == 1e-5 and settings.eval_examples == 500  # the schema's values
    with pytest.raises(ValueError, match=r"unknown \['eval_sise'\]"):
        TrainSettings.from_config({**block, "eval_sise": 3}, keep="best")
    with pytest.raises(ValueError, match=r"missing \['lr'\]"):
        TrainSettings.from_config({k: v for k, v in block.items() if k != "lr"}, keep="best")
    with pytest.raises(TypeError):
        TrainSettings()  # no defaults to fall back on


def test_every_stage_takes_the_shared_training_block_with_its_own_defaults():
    config = validate_config({}, check_availability=False)
    keys = {stage: set(config[stage]["training"]) for stage in ("scratch", "finetune", "pretrain")}
    assert keys["scratch"] == keys["finetune"] == keys["pretrain"]
    assert [config[s]["training"]["lr"] for s in ("scratch", "finetune", "pretrain")] == [1e-4, 1e-5, 1e-3]
    assert train_settings("pretrain").precision == "bf16"
