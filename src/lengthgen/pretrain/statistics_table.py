"""The corpus statistics table: each corpus variant built as the pretrain stage builds it, then
counted (statistics.py), so the counting stays free of how a corpus is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records.tables import write_table
from ..settings import CorpusStatisticsSettings
from .corpus import built_corpus
from .statistics import corpus_statistics

if TYPE_CHECKING:
    from ..records.provenance import Provenance


def corpus_text(name: str, settings: CorpusStatisticsSettings) -> tuple[str, float | None]:
    """One corpus variant's text as the pretrain stage builds it from these settings, and the share
    of its copies that are reversed (`corpus.built_corpus`)."""
    return built_corpus(settings.corpus_chars, corpus=name, seed=settings.seed, insertion=settings.insertion)


def write_corpus_statistics(settings: CorpusStatisticsSettings, provenance: Provenance, outputs) -> None:
    """The repeat statistics table of every corpus in `settings.corpora`; provenance: the rule's
    config slice, recorded only; outputs: a rule's outputs (parquet, markdown)."""
    built = {name: corpus_text(name, settings) for name in settings.corpora}
    table = corpus_statistics({name: text for name, (text, _) in built.items()}, settings.ns, settings.window,
                              settings.distances, {name: share for name, (_, share) in built.items()})
    write_table(table, outputs, provenance.record(seed=settings.seed),
                title=f"Corpus repeats: forward vs backward n-gram repeats within {settings.window} characters")
