"""The result tables: which rule writes each, its report category, whether a config makes it, and
what the findings read."""

from __future__ import annotations

from ..results.findings import findings_sources
from . import finetune, icl, mechanism, realistic, scratch
from .paths import table_path

# The report's categories, in the order the report lists them (it sorts them by name): the findings
# first, the answer to "did the paper's findings reproduce here?".
CATEGORIES = {
    "findings": "0 Findings",
    "data": "1 Data and theory",
    "scratch": "2 From scratch",
    "icl": "3 In context",
    "finetune": "4 Fine-tuned",
    "comparison": "5 Comparison",
    "mechanism": "6 Mechanism",
    "realistic": "7 Realistic tasks",
}


def _always(config: dict) -> bool:
    return True


# Every table: the rule that writes it, its stage (report category), and whether a config makes it.
TABLES = {
    "findings": ("findings", CATEGORIES["findings"], _always),
    "theory": ("theory_table", CATEGORIES["data"], _always),
    "data_summary": ("data_summary", CATEGORIES["data"], _always),
    "theory_check": ("theory_check", CATEGORIES["data"], _always),
    "scratch": ("scratch_table", CATEGORIES["scratch"], scratch.enabled),
    "scratch_pairs": ("scratch_pairs", CATEGORIES["scratch"], scratch.enabled),
    "icl": ("icl_table", CATEGORIES["icl"], icl.enabled),
    "icl_pairs": ("icl_pairs", CATEGORIES["icl"], icl.enabled),
    "finetune": ("finetune_table", CATEGORIES["finetune"], finetune.enabled),
    "finetune_pairs": ("finetune_pairs", CATEGORIES["finetune"], finetune.enabled),
    "finetune_places": ("finetune_places", CATEGORIES["finetune"], finetune.enabled),
    "comparison": ("comparison_table", CATEGORIES["comparison"], finetune.comparison_enabled),
    "heads": ("heads_table", CATEGORIES["mechanism"], mechanism.enabled),
    "patching": ("patching_table", CATEGORIES["mechanism"], mechanism.enabled),
    "mechanism_pairs": ("mechanism_pairs", CATEGORIES["mechanism"], mechanism.enabled),
    "realistic": ("realistic_table", CATEGORIES["realistic"], realistic.enabled),
    "realistic_pairs": ("realistic_pairs", CATEGORIES["realistic"], realistic.enabled),
}


def rule_of(name: str) -> str:
    return TABLES[name][0]


def category_of(name: str) -> str:
    return TABLES[name][1]


def tables_made(config: dict) -> list[str]:
    """The tables this config makes, by name."""
    return [name for name, (_, _, made) in TABLES.items() if made(config)]


def findings_inputs(config: dict) -> dict[str, str]:
    """The pairs table of every stage this config runs (the sources of the findings' records): a
    stage turned off is "not run" in the findings, and never a missing input."""
    made = tables_made(config)
    return {name: table_path(name) for name in findings_sources() if name in made}


def findings_params(config: dict) -> dict:
    """What the findings depend on besides the tables: which stages run, and the hub path of each
    realistic-task model (the paper's numbers are per hub model)."""
    return {"tables": list(findings_inputs(config)), "tasks": config["tasks"],
            "models": {m: config["models"][m].get("path") for m in config["realistic"]["models"]}}
