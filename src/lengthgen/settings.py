"""Typed settings: one frozen dataclass per stage's job parameters, built once from the rule's
validated config slice.

`from_config` is strict: a key the class does not know, or one it needs and is not given, is a
ConfigError naming it, so a setting can never be dropped or misspelt on its way from the config
to the code that uses it. `as_config` gives back the slice it was made from (the same JSON), which
is what a checkpoint's fingerprint and a table's provenance record. The schema stays the one source
of defaults: a field has a default only where the slice may leave the key out.

Settings are immutable all the way down: a list in the slice is held as a tuple, a mapping as a
read-only mapping (`as_config` gives back lists and dicts). Generator settings (`data`) and model
architectures stay mappings: their keys are per generator or per architecture (the schema types
them). The training engine's block is a `TrainSettings` from the config to the engine.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


class ConfigError(ValueError):
    """A config that cannot run; the message names the key."""


class FrozenMap(dict):
    """A read-only dict: what a config mapping becomes in settings. A dict, unlike a mappingproxy,
    pickles and copies (a job's settings cross to worker processes)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} is read-only: settings are immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return type(self), (dict(self),)


def freeze(value):
    """A config value made immutable: mappings read-only, lists tuples, all the way down."""
    if isinstance(value, Mapping):
        return FrozenMap({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value):
    """A frozen value back as the config's plain data (dicts and lists, as JSON and YAML give)."""
    if isinstance(value, Settings):
        return value.as_config()
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


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
            values[name] = nested.from_config(value) if nested is not None and value is not None else freeze(value)
        return cls(**values)

    def as_config(self) -> dict:
        """The slice this was made from: every field, less optional ones left at None."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and _optional(f):
                continue
            out[f.name] = thaw(value)
        return out


def _settings_type(hint) -> type[Settings] | None:
    """The Settings class a field holds (also as `X | None`), else None."""
    candidates = typing.get_args(hint) or (hint,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, Settings):
            return candidate
    return None


@dataclass(frozen=True)
class TrainSettings(Settings):
    """The training engine's block (`$defs/training` in the schema, the one source of its defaults),
    from a stage's config to the engine; `keep` is the stage's choice, not the config's."""

    lr: float
    weight_decay: float
    batch_size: int
    max_steps: int
    eval_every: int
    eval_examples: int  # validation examples (windows, for pretraining) at every evaluation
    eval_batch_size: int
    warmup_steps: int
    warmup_ratio: float | None  # a share of max_steps, instead of warmup_steps
    schedule: str  # "linear" (decay to 0 at max_steps) or "constant"
    precision: str  # "fp32" or "bf16"
    checkpoint_every: int
    length_buckets: int  # micro-batches of similar lengths per step (same gradient, less padding)
    max_grad_norm: float | None  # gradient clipping by global norm (None: none)
    early_stop: bool  # stop once validation accuracy reaches 1.0
    patience: int | None  # stop after this many evaluations without a better validation accuracy
    keep: str | None = None  # the weights kept: "best" by validation accuracy, else (None, "last") the last

    @property
    def warmup(self) -> int:
        """Warm-up steps: warmup_ratio of max_steps (rounded up, as Trainer's `get_warmup_steps`) when
        given, else warmup_steps."""
        return math.ceil(self.warmup_ratio * self.max_steps) if self.warmup_ratio is not None else self.warmup_steps

    def keeping(self, keep: str) -> TrainSettings:
        """These settings with the stage's choice of the weights kept ("best" or "last")."""
        return dataclasses.replace(self, keep=keep)


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
    training: TrainSettings  # the engine's block, schedule resolved for the PE
    eos: EosRule


@dataclass(frozen=True)
class ScratchEvalSettings(Settings):
    """Evaluating one from-scratch model on every bin of its family."""

    bins: tuple[str, ...]
    batch_size: int
    greedy: bool
    precision: str
    eos: EosRule


@dataclass(frozen=True)
class FinetuneTaskSettings(Settings):
    """Fine-tuning one task (`lengthgen.plan.finetune.train_params`), with the model's entry."""

    data: Mapping[str, Any]
    format: str
    train_lengths: str
    max_length: int  # the longest test length
    train_examples: int | None  # None: fresh examples every step
    training: TrainSettings
    model: Mapping[str, Any] | None = None  # the registry entry (the job's; unused by the library)
    holdout: int | None = None  # that many of the training set held out for validation
    keep: str | None = None  # the weights kept: None or "best" by validation accuracy, "last" the last step's
    init: str | None = None  # None (pretrained) or "random": the model's architecture from its seed
    position_offsets: bool | None = None  # None (on) or False: absolute-position models' random start positions
    curve_lengths: str | None = None  # a bin beyond training, scored at every evaluation (the learning curve)


@dataclass(frozen=True)
class FinetuneEvalSettings(Settings):
    """Evaluating one fine-tuned model on every bin of its family."""

    bins: tuple[str, ...]
    data: Mapping[str, Any]
    format: str
    batch_size: int
    precision: str


# The corpus variants that insert copies (lengthgen.pretrain.variants), each with the share of its
# copies it reverses (None: the balanced corpus's, chosen by `InsertionSettings.reversed`); here, below
# the config layer, because which pretraining jobs depend on the insertion settings follows from it.
INSERTED = FrozenMap({"balanced": None, "forward-only": 0.0, "reversed-25": 0.25, "reversed-50": 0.5,
                      "reversed-75": 0.75, "backward-only": 1.0})
# The non-copy control: reversed passages where the copying corpora put their copies, each from half the
# document away (reversed text that copies nothing nearby); its jobs depend on the insertion settings too.
REVERSED_PASSAGES = "reversed-passages"
USES_INSERTION = (*INSERTED, REVERSED_PASSAGES)


@dataclass(frozen=True)
class InsertionSettings(Settings):
    """Where the balanced corpus puts its copies (`pretrain.variants`)."""

    share: float  # the share of passages followed by a copy
    passage_chars: tuple[int, ...]  # [low, high]: the length of a passage, drawn uniformly
    gap_passages: tuple[int, ...]  # [low, high]: how many passages later the copy goes
    reversed: str = "alternate"  # every other copy, or the share that balances (a slice without the key: alternate)
    balance_n: int = 4  # the n-grams whose forward and backward repeats `balance` equalises
    balance_window: int = 256  # ... within this many characters


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
    training: TrainSettings
    insertion: InsertionSettings | None = None


@dataclass(frozen=True)
class CorpusStatisticsSettings(Settings):
    """The corpora's repeat statistics: which corpora, built as the pretrain stage builds them."""

    corpora: tuple[str, ...]
    corpus_chars: int | None
    seeds: tuple[int, ...]  # the pretraining seeds: where the copies go differs by seed
    insertion: InsertionSettings
    ns: tuple[int, ...]
    window: int
    distances: tuple[int, ...] = ()  # shorter windows: the repeats by distance


@dataclass(frozen=True)
class SpellingSettings(Settings):
    """How a mechanism subject's prompts are spelled: a registry model's tokenizer, or a trained
    model's layout (from scratch, or fine-tuned in a format over an alphabet)."""

    kind: str  # "registry", "scratch" or "finetune"
    model: Mapping[str, Any] | None = None  # the registry entry
    alphabet: int | None = None
    format: str | None = None


@dataclass(frozen=True)
class ManipulationSettings(Settings):
    """The corpora experiment's manipulation check of one registry model (corpora/manipulation.py):
    its copies drawn as the corpora insert theirs, in the natural corpus's held-out tail."""

    subject: str
    model: Mapping[str, Any]  # the registry entry
    examples: int
    context: int
    batch_size: int
    seed: int
    corpus_chars: int | None  # the natural corpus as the pretrain stage cuts it ...
    validation_fraction: float  # ... and the share of its tail held out
    passage_chars: tuple[int, ...]
    gap_passages: tuple[int, ...]


@dataclass(frozen=True)
class MechanismSettings(Settings):
    """One mechanism job: a subject model, its prompts and the analysis."""

    subject: str
    spelling: SpellingSettings
    lengths: tuple[int, ...]
    instances: int
    shots: int
    ablate_top: int
    batch_size: int
    seeds: tuple[int, ...]


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
    files: tuple[Mapping[str, Any], ...]  # {"task", "bin", "seed", "variant", "data"} each
    chat: ChatSettings | None  # a chat model's settings (None: a completion model)
    settings: Mapping[str, Mapping[str, Any]]  # the generator's settings per task
    shots: int
    batch_size: int


@dataclass(frozen=True)
class RealisticPredictSettings(Settings):
    """One realistic-task job: a model on one task, every length and seed."""

    model: Mapping[str, Any]
    batch_size: int
    seeds: tuple[int, ...]
    settings: Mapping[str, Any]  # the task's own settings (`realistic.lorem` or `realistic.git`)


__all__ = [
    "CorpusStatisticsSettings",
    "ManipulationSettings",
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
    "TrainSettings",
]
