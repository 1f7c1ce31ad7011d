"""Typed settings: one frozen dataclass per stage's job parameters, built once from the rule's
validated config slice.

`from_config` is strict: a key the class does not know, or one it needs and is not given, is a
ConfigError naming it, so a setting can never be dropped or misspelt on its way from the config
to the code that uses it. `as_config` gives back the slice it was made from (the same JSON), which
is what a checkpoint's fingerprint and a table's provenance record. The schema stays the one source
of defaults: a field has a default only where the slice may leave the key out.

Generator settings (`data`), model architectures and the training engine's block stay mappings
here: their keys are per generator or per architecture (the schema types them), and the engine
block becomes a `TrainSettings` where it is used.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


class ConfigError(ValueError):
    """A config that cannot run; the message names the key."""


def _optional(f: dataclasses.Field) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


@dataclass(frozen=True)
class Settings:
    """Base of every stage's settings: strict construction from a mapping, and back."""

    @classmethod
    def from_config(cls, section: Mapping):
        if isinstance(section, cls):
            return section
        if not isinstance(section, Mapping):
            raise ConfigError(f"{cls.__name__}: expected a mapping of settings, got {type(section).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(section) - names)
        missing = sorted(f.name for f in fields(cls) if not _optional(f) and f.name not in section)
        if unknown or missing:
            raise ConfigError(f"{cls.__name__}: unknown key(s) {unknown or 'none'}, missing {missing or 'none'}")
        hints = typing.get_type_hints(cls)
        values = {}
        for name, value in section.items():
            nested = _settings_type(hints[name])
            values[name] = nested.from_config(value) if nested is not None and value is not None else value
        return cls(**values)

    def as_config(self) -> dict:
        """The slice this was made from: every field, less optional ones left at None."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and _optional(f):
                continue
            out[f.name] = value.as_config() if isinstance(value, Settings) else value
        return out


def _settings_type(hint) -> type[Settings] | None:
    """The Settings class a field holds (also as `X | None`), else None."""
    candidates = typing.get_args(hint) or (hint,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, Settings):
            return candidate
    return None


@dataclass(frozen=True)
class EosRule(Settings):
    """A task family's <eos>: is it learnt (train), and counted in exact match (score)?"""

    train: bool
    score: bool


@dataclass(frozen=True)
class ScratchRunSettings(Settings):
    """One from-scratch training run (`lengthgen.plan.scratch`'s train params)."""

    data: Mapping[str, Any]  # the generator's settings
    train_lengths: str
    max_length: int | None  # the longest test context
    model: Mapping[str, Any]  # the architecture's keyword arguments (max_positions optional)
    training: Mapping[str, Any]  # the engine's block, schedule resolved for the PE
    eos: EosRule


@dataclass(frozen=True)
class ScratchEvalSettings(Settings):
    """Evaluating one from-scratch model on every bin of its family."""

    bins: list[str]
    batch_size: int
    greedy: bool
    precision: str
    eos: EosRule


@dataclass(frozen=True)
class FinetuneTaskSettings(Settings):
    """Fine-tuning one task (`lengthgen.config.finetune_task_section`), with the model's entry."""

    data: Mapping[str, Any]
    format: str
    train_lengths: str
    max_length: int  # the longest test length
    train_examples: int | None  # None: fresh examples every step
    training: Mapping[str, Any]
    model: Mapping[str, Any] | None = None  # the registry entry (the job's; unused by the library)
    holdout: int | None = None  # that many of the training set held out for validation
    keep: str | None = None  # the weights kept: None or "best" by validation accuracy, "last" the last step's
    init: str | None = None  # None (pretrained) or "random": the model's architecture from its seed
    curve_lengths: str | None = None  # a bin beyond training, scored at every evaluation (the learning curve)


@dataclass(frozen=True)
class FinetuneEvalSettings(Settings):
    """Evaluating one fine-tuned model on every bin of its family."""

    bins: list[str]
    data: Mapping[str, Any]
    format: str
    batch_size: int
    precision: str


@dataclass(frozen=True)
class InsertionSettings(Settings):
    """Where the balanced corpus puts its copies (`pretrain.variants`)."""

    share: float  # the share of passages followed by a copy
    passage_chars: list[int]  # [low, high]: the length of a passage, drawn uniformly
    gap_passages: list[int]  # [low, high]: how many passages later the copy goes


@dataclass(frozen=True)
class PretrainSettings(Settings):
    """Pretraining one architecture on one corpus variant (`lengthgen.config.pretrain_section`)."""

    architecture: str
    corpus: str
    seed: int
    corpus_chars: int | None
    validation_fraction: float
    context: int
    save_fp16: bool
    probe_length: int
    model: Mapping[str, Any]
    training: Mapping[str, Any]
    insertion: InsertionSettings | None = None


@dataclass(frozen=True)
class CorpusStatisticsSettings(Settings):
    """The corpora's repeat statistics: which corpora, built as the pretrain stage builds them."""

    corpora: list[str]
    corpus_chars: int | None
    seed: int
    insertion: InsertionSettings
    ns: list[int]
    window: int


@dataclass(frozen=True)
class SpellingSettings(Settings):
    """How a mechanism subject's prompts are spelled: a registry model's tokenizer, or a trained
    model's layout (from scratch, or fine-tuned in a format over an alphabet)."""

    kind: str  # "registry", "scratch" or "finetune"
    model: Mapping[str, Any] | None = None  # the registry entry
    alphabet: int | None = None
    format: str | None = None


@dataclass(frozen=True)
class MechanismSettings(Settings):
    """One mechanism job: a subject model, its prompts and the analysis."""

    subject: str
    spelling: SpellingSettings
    lengths: list[int]
    instances: int
    shots: int
    ablate_top: int
    batch_size: int
    seeds: list[int]


@dataclass(frozen=True)
class DataFileSettings(Settings):
    """One data file of the grid."""

    task: str
    encoding: str
    bin: str
    seed: int
    examples: int
    generator: str
    settings: Mapping[str, Any]  # the generator's


@dataclass(frozen=True)
class ChatSettings(Settings):
    """A chat model's in-context settings (`icl.chat`)."""

    variants: Mapping[str, Any]  # per family: the prompt variants chat models get (None: the same)
    max_new_tokens: Mapping[str, Any]  # per family: a floor on the decoding budget
    prompt: str  # whose chat prompts
    generation_prompt: bool


@dataclass(frozen=True)
class IclPredictSettings(Settings):
    """One in-context job: a model on every file of one task family's grid."""

    model: Mapping[str, Any]  # the registry entry
    files: list[Mapping[str, Any]]  # {"task", "bin", "seed", "variant", "data"} each
    chat: ChatSettings | None  # a chat model's settings (None: a completion model)
    settings: Mapping[str, Mapping[str, Any]]  # the generator's settings per task
    shots: int
    batch_size: int


@dataclass(frozen=True)
class RealisticPredictSettings(Settings):
    """One realistic-task job: a model on one task, every length and seed."""

    model: Mapping[str, Any]
    batch_size: int
    seeds: list[int]
    settings: Mapping[str, Any]  # the task's own settings (`realistic.lorem` or `realistic.git`)


__all__ = [
    "CorpusStatisticsSettings",
    "ChatSettings",
    "ConfigError",
    "DataFileSettings",
    "EosRule",
    "FinetuneEvalSettings",
    "FinetuneTaskSettings",
    "IclPredictSettings",
    "InsertionSettings",
    "MechanismSettings",
    "PretrainSettings",
    "RealisticPredictSettings",
    "ScratchEvalSettings",
    "ScratchRunSettings",
    "Settings",
    "SpellingSettings",
]
