"""The registry of results: every table (the rule that writes it, its report category, whether a
config makes it), what the findings read, and the rules that run on the submitting machine: the
workflow's `localrules` and its report's outputs are generated from here (and the figures from
lengthgen.plan.figures)."""

from __future__ import annotations

from ..layout import table_path
from ..results.findings import findings_sources
from . import corpora, finetune, icl, mechanism, realistic, scratch
from .figures import FIGURE_RULES

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
    "corpora": "8 Beyond the paper: pretraining corpora",
    "downloads": "9 Every table as CSV (downloads)",
}


def _always(config: dict) -> bool:
    return True


# Each stage's tables (name -> the rule that writes it), its report category and whether a config
# makes them, in the order of the report and the index.
_STAGES = (
    ("findings", _always, {"findings": "findings"}),
    ("data", _always, {"theory": "theory_table", "data_summary": "data_summary", "theory_check": "theory_check"}),
    ("scratch", scratch.enabled, {"scratch": "scratch_table", "scratch_pairs": "scratch_pairs"}),
    ("icl", icl.enabled, {"icl": "icl_table", "icl_pairs": "icl_pairs"}),
    ("finetune", finetune.enabled, {"finetune": "finetune_table", "finetune_pairs": "finetune_pairs",
                                    "finetune_places": "finetune_places", "finetune_robustness": "finetune_robustness"}),
    ("comparison", finetune.comparison_enabled, {"comparison": "comparison_table"}),
    ("mechanism", mechanism.enabled, {"heads": "heads_table", "patching": "patching_table",
                                      "mechanism_pairs": "mechanism_pairs"}),
    ("realistic", realistic.enabled, {"realistic": "realistic_table", "realistic_pairs": "realistic_pairs"}),
    ("corpora", corpora.enabled, {"corpus_statistics": "corpus_statistics", "corpus_pairs": "corpus_pairs"}),
    ("corpora", corpora.dose_enabled, {"corpus_dose": "corpus_dose", "corpus_dose_models": "corpus_dose_models"}),
)
# Every table: the rule that writes it, its report category, and whether a config makes it.
TABLE_RULES = {name: (rule, CATEGORIES[stage], made) for stage, made, tables in _STAGES
               for name, rule in tables.items()}
INDEX_RULE = "tables_index"


def rule_of(name: str) -> str:
    return TABLE_RULES[name][0]


def category_of(name: str) -> str:
    return TABLE_RULES[name][1]


def tables_made(config: dict) -> list[str]:
    """The tables this config makes, by name."""
    return [name for name, (_, _, made) in TABLE_RULES.items() if made(config)]


def local_rules() -> list[str]:
    """The rules that run where Snakemake runs, never as cluster jobs: every table, figure and the
    index (seconds of work each, polars and matplotlib, no torch)."""
    return [rule for rule, _, _ in TABLE_RULES.values()] + list(FIGURE_RULES) + [INDEX_RULE]


def findings_inputs(config: dict) -> dict[str, str]:
    """The pairs table of every stage this config runs (the sources of the findings' records): a
    stage turned off is "not run" in the findings, and never a missing input."""
    made = tables_made(config)
    return {name: table_path(name) for name in findings_sources() if name in made}


def findings_params(config: dict) -> dict:
    """What the findings depend on besides the tables: which stages run, and the hub path of each
    realistic-task model (the paper's numbers are per hub model)."""
    return {"tables": list(findings_inputs(config)), "tasks": config["tasks"], "rules": config["findings"],
            "models": {m: config["models"][m].get("path") for m in config["realistic"]["models"]}}
