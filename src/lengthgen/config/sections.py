"""Reading the validated config: the settings of one task family. Plain functions on dicts (no
torch), so the Snakefile can call them while it plans the grid."""

from __future__ import annotations

from ..settings import USES_INSERTION, PretrainSettings
from ..tasks import FAMILIES
from ..tasks.lengths import bins_beyond

CORPUS_ROLES = ("natural", "balanced", "reversed", "forward-only", "backward-only",  # the corpora experiment's arms
                "reversed-25", "reversed-50", "reversed-75", "reversed-passages")  # and the dose-response's


def corpus_models(config: dict) -> dict[str, tuple[str, ...]]:
    """corpus -> its registry models (one per pretraining seed), for the corpora the config's
    `corpora` names models for."""
    return {role: tuple(config["corpora"][role]) for role in CORPUS_ROLES if config["corpora"][role]}


def corpus_model_keys(config: dict) -> list[tuple[str, str]]:
    """(config key, registry name) of every model of the corpora experiment, arm by arm."""
    return [(f"corpora.{role}[{i}]", name) for role, names in corpus_models(config).items()
            for i, name in enumerate(names)]


def per_family(value, family: str):
    """A setting given once for all tasks, or as {retrieval: ..., copying: ...}."""
    return value[family] if isinstance(value, dict) else value


def scratch_lengths(scratch: dict, family: str) -> tuple[str, list[str]]:
    """(training lengths, test bins) of a task family in the from-scratch stage."""
    return str(per_family(scratch["train_lengths"], family)), [str(b) for b in per_family(scratch["test_bins"], family)]


def scratch_family_settings(scratch: dict, family: str) -> dict:
    """The from-scratch `model` and `training` settings of one task family (overrides applied)."""
    override = scratch["family_overrides"].get(family, {})
    return {part: {**scratch[part], **override.get(part, {})} for part in ("model", "training")}


def scratch_bins(scratch: dict) -> dict[str, list[str]]:
    """The from-scratch test bins of every family."""
    return {family: scratch_lengths(scratch, family)[1] for family in FAMILIES}


def finetune_bins(finetune: dict) -> dict[str, list[str]]:
    """The fine-tuning test bins of every family."""
    return {family: [str(b) for b in finetune["test_bins"][family]] for family in FAMILIES}


DEFAULT_PROTOCOL = "default"  # the fine-tuning section as it stands, no changes


def finetune_protocols(finetune: dict) -> list[str]:
    """The named fine-tuning protocols a run compares (a grid axis); one with `seeds: []` is
    declared but not run."""
    declared = finetune.get("protocols") or {DEFAULT_PROTOCOL: {}}
    return [name for name, entry in declared.items() if (entry or {}).get("seeds") != []]


def main_protocol(finetune: dict) -> str:
    """The protocol whose models the other stages read (the mechanism's fine-tuned copies)."""
    protocols = finetune_protocols(finetune)
    return DEFAULT_PROTOCOL if DEFAULT_PROTOCOL in protocols else protocols[0]


def _protocol_entry(finetune: dict, protocol: str) -> dict:
    """The protocol's own entry under `finetune.protocols` as the config declares it (empty: the
    section as it stands)."""
    return (finetune.get("protocols") or {}).get(protocol, {})


def protocol_changes(finetune: dict, protocol: str) -> dict:
    """What a declared protocol changes of the section (its seeds apart: they choose runs, not settings)."""
    return {key: value for key, value in _protocol_entry(finetune, protocol).items() if key != "seeds"}


def declared_seeds(config: dict, protocol: str) -> list[int]:
    """The seeds a declared protocol runs: its own `seeds` (within the run's), else the run's."""
    own = _protocol_entry(config["finetune"], protocol).get("seeds")
    return [seed for seed in config["seeds"] if own is None or seed in own]


def protocol_key(finetune: dict, protocol: str, key: str) -> str:
    """Where a protocol's setting `key` is spelled in the config, for a message naming it: under the
    protocol where it changes that key, else in the section itself."""
    return f"finetune.protocols.{protocol}.{key}" if key in _protocol_entry(finetune, protocol) else f"finetune.{key}"


def merged_protocol(finetune: dict, protocol: str = DEFAULT_PROTOCOL) -> dict:
    """The fine-tuning section under one declared protocol: its changes merged over the section's
    keys (a mapping such as `training` key by key, anything else replaced). Validation's; a
    validated config holds the result (`protocol_section`)."""
    merged = {key: value for key, value in finetune.items() if key not in ("protocols", "models")}
    for key, value in protocol_changes(finetune, protocol).items():
        base = merged.get(key)
        merged[key] = {**base, **value} if isinstance(value, dict) and isinstance(base, dict) else value
    return merged


def resolve_protocols(config: dict) -> dict:
    """`config` with `finetune.protocols` resolved, once, by validation: every declared protocol (or
    `default` alone, where none is) as the complete section it runs, with the seeds it runs."""
    finetune = config["finetune"]
    declared = finetune.get("protocols") or {DEFAULT_PROTOCOL: {}}
    finetune["protocols"] = {name: {**merged_protocol(finetune, name), "seeds": declared_seeds(config, name)}
                             for name in declared}
    return config


def protocol_section(finetune: dict, protocol: str = DEFAULT_PROTOCOL) -> dict:
    """The complete fine-tuning section one protocol of a validated config runs."""
    return finetune["protocols"][protocol]


def protocol_seeds(config: dict, protocol: str) -> list[int]:
    """The seeds a protocol of a validated config runs."""
    return config["finetune"]["protocols"][protocol]["seeds"]


def training_steps(section: dict, family: str, training: dict) -> int:
    """How many steps one task family's fine-tuning takes, the one place that is decided: with
    `epochs` over a fixed training set, the steps those epochs take, else `training.max_steps`."""
    epochs = per_family(section["epochs"], family)
    if not (epochs and section["train_examples"]):
        return training["max_steps"]
    return epochs * -(-(section["train_examples"] - held_out(section)) // training["batch_size"])


def held_out(finetune: dict) -> int:
    """How many of the fixed training set's examples are held out for validation (0: validation
    draws its own stream)."""
    if finetune.get("validation", "stream") != "holdout" or not finetune["train_examples"]:
        return 0
    return round(finetune["validation_fraction"] * finetune["train_examples"])


def curve_bin(finetune: dict, family: str) -> str | None:
    """The first test bin beyond the training lengths, scored at every evaluation of a fine-tuning
    so that its history is a learning curve in and out of distribution (None: no such bin)."""
    beyond = bins_beyond(finetune_bins(finetune)[family], str(finetune["train_lengths"][family]))
    return beyond[0] if beyond else None


def icl_variants(icl: dict, family: str, kind: str) -> list[str]:
    """The in-context prompt variants of a model kind ("completion" or "chat"): chat models get
    their own where `icl.chat.variants` names them (the authors ran chat models on fewer)."""
    chat = icl["chat"]["variants"][family] if kind == "chat" else None
    return list(chat or icl["variants"][family])


def pretrain_section(config: dict, architecture: str, corpus: str = "natural", seed: int | None = None) -> PretrainSettings:
    """What pretraining one architecture on one corpus variant with one seed (default: the first of
    `pretrain.seeds`) depends on (the pretrain rule's parameters, and what bench/gpu_pretrain.py runs
    on a machine without Snakemake). The insertion settings only where the corpus uses them, so
    changing them reruns only its jobs."""
    pretrain = config["pretrain"]
    section = {k: v for k, v in pretrain.items() if k not in ("enabled", "architectures", "corpora", "insertion", "seeds")}
    return PretrainSettings.from_config({**section, "architecture": architecture, "corpus": corpus,
                                         "seed": pretrain["seeds"][0] if seed is None else int(seed),
                                         **({"insertion": pretrain["insertion"]} if corpus in USES_INSERTION else {})})
