"""The corpus statistics table: each corpus variant built as the pretrain stage builds it, then
counted (statistics.py), so the counting stays free of how a corpus is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..records.tables import write_table
from ..settings import CorpusStatisticsSettings
from .corpus import built_corpus
from .statistics import corpus_statistics

if TYPE_CHECKING:
    from ..records.provenance import Provenance


def corpus_text(name: str, settings: CorpusStatisticsSettings, seed: int) -> tuple[str, float | None]:
    """One corpus variant's text as the pretrain stage builds it from these settings and this
    pretraining seed, and the share of its copies that are reversed (`corpus.built_corpus`)."""
    return built_corpus(settings.corpus_chars, corpus=name, seed=seed, insertion=settings.insertion)


def statistics_table(settings: CorpusStatisticsSettings) -> pl.DataFrame:
    """The repeat statistics of every corpus in `settings.corpora` under every pretraining seed (a
    `seed` column after the corpus): the copies go elsewhere with each seed, so each is counted."""
    frames = []
    for seed in settings.seeds:
        built = {name: corpus_text(name, settings, seed) for name in settings.corpora}
        frames.append(corpus_statistics({name: text for name, (text, _) in built.items()}, settings.ns,
                                        settings.window, settings.distances,
                                        {name: share for name, (_, share) in built.items()})
                      .select("corpus", pl.lit(seed, dtype=pl.Int64).alias("seed"), pl.exclude("corpus")))
    return pl.concat(frames)


def write_corpus_statistics(settings: CorpusStatisticsSettings, provenance: Provenance, outputs) -> None:
    """`statistics_table`; provenance: the rule's config slice, recorded only; outputs: a rule's
    outputs (parquet, markdown)."""
    write_table(statistics_table(settings), outputs, provenance.record(),
                title=f"Corpus repeats: forward vs backward n-gram repeats within {settings.window} characters")
