"""The registry of figures: for each figure rule, the table whose presence in a run makes it, the
images it draws (each a PNG in the report under its stage, with workflow/report/IMAGE.rst as its
caption, and a PDF twin) and the files it reads. report.smk generates every figure rule from here;
`lengthgen.results.figures.DRAWINGS` holds the function that draws each."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..layout import FIGURES, TABLES, table_path
from . import corpora, finetune

Inputs = dict[str, str | list[str]]


@dataclass(frozen=True)
class Figure:
    rule: str
    stage: str  # its report category (lengthgen.plan.tables.CATEGORIES)
    table: str  # the table whose presence in a run makes it
    images: tuple[str, ...]
    # config, model paths (registry name -> path) -> the files it reads, by name
    inputs: Callable[[dict, Mapping[str, str]], Inputs]
    # each param's name -> config, model paths -> its value (computed when the job is planned)
    params: Mapping[str, Callable[[dict, Mapping[str, str]], object]] = field(default_factory=dict)

    def outputs(self) -> dict[str, str]:
        """Each image's PNG (under its own name) and PDF (`NAME_pdf`)."""
        return {key: f"{FIGURES}/{image}.{suffix}" for image in self.images
                for key, suffix in ((image, "png"), (f"{image}_pdf", "pdf"))}


def pretraining_summaries(config: dict, model_paths: Mapping[str, str]) -> dict[str, list[str]]:
    """corpus -> the pretraining summaries shipped beside its models (the provenance holds the
    training history), for the models that have one: a model pretrained elsewhere has none to draw."""
    found = {corpus: [summary for name in names if Path(summary := f"{model_paths[name]}.summary.parquet").is_file()]
             for corpus, names in corpora.roles(config).items()}
    return {corpus: summaries for corpus, summaries in found.items() if summaries}


def _tables(*names: str) -> Callable[[dict, Mapping[str, str]], Inputs]:
    return lambda config, paths: {name: table_path(name) for name in names}


FIGURE_LIST = (
    Figure("figure_scratch", "scratch", "scratch", ("scratch_bins", "scratch_by_length"),
           lambda config, paths: {"scratch": table_path("scratch"), "by_length": f"{TABLES}/scratch_by_length.parquet"}),
    Figure("figure_icl", "icl", "icl", ("icl_mirror_pairs", "icl_teacher_forced"), _tables("icl")),
    Figure("figure_finetune", "finetune", "finetune", ("finetune_bins",), _tables("finetune")),
    Figure("figure_finetune_curves", "finetune", "finetune", ("finetune_curves",),
           lambda config, paths: {"histories": finetune.histories(config)}),
    Figure("figure_comparison", "comparison", "comparison", ("comparison",), _tables("comparison")),
    Figure("figure_mechanism", "mechanism", "heads", ("mechanism_heads", "mechanism_patching"),
           _tables("heads", "patching")),
    Figure("figure_realistic", "realistic", "realistic", ("realistic",), _tables("realistic")),
    Figure("figure_corpora", "corpora", "corpus_pairs", ("corpora_history",),
           lambda config, paths: {"summaries": [s for found in pretraining_summaries(config, paths).values()
                                                for s in found]},
           {"corpora": lambda config, paths: {corpus: len(found) for corpus, found
                                               in pretraining_summaries(config, paths).items()}}),
)
FIGURE_RULES = {figure.rule: figure for figure in FIGURE_LIST}


def figures_made(config: dict, tables: list[str], model_paths: Mapping[str, str]) -> list[Figure]:
    """The figures a run makes: those whose table it makes and that have something to draw."""
    return [figure for figure in FIGURE_LIST if figure.table in tables
            and all(figure.inputs(config, model_paths).values())]
