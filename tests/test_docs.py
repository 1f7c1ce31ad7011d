"""The README guides and docs/ holds the rest: the config reference is the schema's, never stale."""

import re

from conftest import REPO
from lengthgen.cli import main
from lengthgen.config import load_schema
from lengthgen.config.reference import config_reference

README = REPO / "README.md"
DOCS = REPO / "docs"


def test_the_config_reference_is_the_schemas():
    """docs/config.md is what `python -m lengthgen config-reference` writes: a schema change without it fails here."""
    assert (DOCS / "config.md").read_text() == config_reference(), (
        "docs/config.md is stale: python -m lengthgen config-reference > docs/config.md")


def test_the_reference_lists_every_key_with_the_default_that_validation_fills_in():
    text = config_reference()
    for section in load_schema()["properties"]:
        assert f"## `{section}`" in text
    # a parent's default object wins over its keys' own defaults, as the validator fills them in
    assert "| `data.chars.unique_retrieval.alphabet_size` | integer | `62` |" in text
    assert "| `data.tokens.unique_retrieval.alphabet_size` | integer | `5` |" in text
    # allOf parts merge: a stage's own default beside the shared block's description
    assert re.search(r"\| `scratch\.training\.eval_examples` \| integer \| `500` \| held-out", text)
    # registry entries are documented once, under a placeholder name
    assert "| `models.NAME.gguf.file` | string |" in text


def test_the_command_prints_the_reference(capsys):
    assert main(["config-reference"]) == 0
    assert capsys.readouterr().out == config_reference()


def test_the_readme_opens_with_the_two_commands_and_stays_short():
    text = README.read_text()
    assert text.split("```")[1].strip().splitlines()[0].startswith("make run")
    assert text.split("```")[1].strip().splitlines()[1].startswith("make test")
    assert len(text.splitlines()) <= 100  # a guide: the dated numbers live in docs/results.md


def test_every_document_the_readme_links_exists_and_no_document_is_orphaned():
    linked = set(re.findall(r"\]\((docs/[\w.-]+)\)", README.read_text()))
    assert linked, "the README links its documents"
    assert all((REPO / path).is_file() for path in linked), sorted(p for p in linked if not (REPO / p).is_file())
    assert {f"docs/{path.name}" for path in DOCS.glob("*.md")} == linked


def test_no_commit_hashes_or_issue_numbers_in_the_prose():
    for path in [README, *DOCS.glob("*.md")]:
        text = path.read_text()
        assert not re.search(r"\bcommit [0-9a-f]{7,}\b|\([0-9a-f]{7}[,)]", text), path
        assert not re.search(r"(?<!upstream )\bissue (#?\d+)", text, re.IGNORECASE), path
