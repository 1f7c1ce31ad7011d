"""Lengths a local model's learned positions cannot hold, found when the workflow starts instead of
inside a job (after Snakemake has deleted that job's previous output).

Only models with a learned absolute position table (`models.positions`) have a hard limit; it is
read from the directory's config.json (`n_positions` / `max_position_embeddings`). Each stage's
longest sequence is counted as a lower bound, one position per symbol, which every tokenizer this
workflow uses needs at least (a character tokenizer, or BPE with the space separator that `auto`
picks): the check never refuses a run that fits; a prompt that passes here can still be too long
once its text is tokenized, which the job then reports.
"""

from __future__ import annotations

from pathlib import Path

from ..models.positions import ABSOLUTE_POSITION_TYPES
from ..tasks import FAMILIES, LengthBin, get_task
from ..tasks.generators import get_generator, length_unit
from .sections import (
    corpus_model_keys,
    finetune_bins,
    finetune_protocols,
    merged_protocol,
    per_family,
    protocol_key,
    scratch_lengths,
)

LOREM_WORDS = 45 * 4  # a lorem paragraph has at least 45 sentences of 4 words, each at least one token


def position_table(model_dir) -> int | None:
    """Positions of a local model with learned absolute positions (None: no hard limit, or not local)."""
    from ..records.files import read_json

    config_file = Path(model_dir) / "config.json"
    if not config_file.is_file():
        return None
    config = read_json(config_file)
    if config.get("model_type") not in ABSOLUTE_POSITION_TYPES:
        return None
    return config.get("n_positions") or config.get("max_position_embeddings")


def _families(config: dict) -> list[str]:
    return [f for f in FAMILIES if any(get_task(t).family == f for t in config["tasks"])]


def icl_needs(config: dict, chat: bool):
    """(key, length, positions) of the longest in-context prompt of each family: the test example and
    its answer, and (completion models) at least shots - 1 demonstrations of the pool's length."""
    section = config["icl"]
    for family in _families(config):
        lengths = section["lengths"][family]
        if not lengths:
            continue
        index = max(range(len(lengths)), key=lengths.__getitem__)
        longest = 0
        for name in config["tasks"]:
            task = get_task(name)
            if task.family != family:
                continue
            symbols = lengths[index] * length_unit(task.generator, config["data"]["chars"][task.generator])
            query, answer = (1, 1) if family == "retrieval" else (0, symbols)
            pool = get_generator(task.generator).pool[0]
            demonstrations = 0 if chat else (section["shots"] - 1) * (pool + query + (1 if query else pool))
            budget = max(answer, section["chat"]["max_new_tokens"][family] if chat else 0)
            longest = max(longest, demonstrations + symbols + query + budget)
        yield f"icl.lengths.{family}[{index}]", lengths[index], longest, "the prompt with its demonstrations and answer"


def finetune_needs(config: dict):
    """(key, length, positions) of the longest fine-tuning sequence of each family: context, query,
    answer and <eos>, one token each symbol (the stage refuses tokenizers where they are not)."""
    for protocol in finetune_protocols(config["finetune"]):
        bins = finetune_bins(merged_protocol(config["finetune"], protocol))
        key = protocol_key(config["finetune"], protocol, "test_bins")
        for family in _families(config):
            highs = [LengthBin.parse(b).high for b in bins[family]]
            index = max(range(len(highs)), key=highs.__getitem__)
            longest = 0
            for name in config["tasks"]:
                task = get_task(name)
                if task.family == family:
                    symbols = highs[index] * length_unit(task.generator, config["data"]["finetune"][task.generator])
                    longest = max(longest, symbols + (2 if family == "retrieval" else symbols) + 1)
            yield f"{key}.{family}[{index}]", bins[family][index], longest, "the longest test example"


def realistic_needs(config: dict):
    lengths = config["realistic"]["lorem"]["lengths"]
    if lengths:
        index = max(range(len(lengths)), key=lengths.__getitem__)
        yield (f"realistic.lorem.lengths[{index}]", lengths[index], 2 * min(lengths[index], LOREM_WORDS),
               "the paragraph in the prompt and its echo")


def mechanism_needs(config: dict):
    section = config["mechanism"]
    index = max(range(len(section["lengths"])), key=section["lengths"].__getitem__)
    length = section["lengths"][index]
    yield (f"mechanism.lengths[{index}]", length, (section["shots"] + 1) * (2 * length + 2),
           f"{section['shots']} demonstrations and the test copy")


def position_problems(config: dict, directory_of) -> list[str]:
    """One message per (stage, model) whose longest sequence exceeds the model's position table.
    directory_of(name): the local directory of a registry model, or None."""
    stages = {"icl": lambda chat: icl_needs(config, chat), "finetune": lambda chat: finetune_needs(config),
              "realistic": lambda chat: realistic_needs(config), "mechanism": lambda chat: mechanism_needs(config)}
    problems = []
    # the corpora experiment runs its models through the in-context, fine-tuning and mechanism prompts
    corpora = [name for _, name in corpus_model_keys(config)]
    for stage, needs in stages.items():
        for name in dict.fromkeys(config[stage]["models"] + (corpora if stage != "realistic" else [])):
            folder = directory_of(name)
            limit = position_table(folder) if folder is not None else None
            if limit is None:
                continue
            for key, value, needed, what in needs(config["models"][name]["kind"] == "chat"):
                if needed > limit:
                    problems.append(
                        f"config key {key}: {value} needs at least {needed} positions ({what}), more than model "
                        f"{name!r} has ({limit}, learned absolute positions, {folder}/config.json): use shorter "
                        f"lengths, or take the model out of {stage}.models (or corpora)")
    return problems


def scratch_problems(config: dict) -> list[str]:
    """One message per family whose fixed from-scratch position table (APE's `max_positions`) is
    shorter than its longest sequence, naming the key that set the table: found at start, before
    Snakemake deletes the old model, and not inside the training job."""
    section = config["scratch"]
    if not section["enabled"] or "ape" not in section["positional_encodings"]:
        return []
    problems = []
    for family in _families(config):
        override = section["family_overrides"].get(family, {}).get("model", {})
        if "max_positions" in override:
            key, positions = f"scratch.family_overrides.{family}.model.max_positions", override["max_positions"]
        else:
            key, positions = "scratch.model.max_positions", section["model"]["max_positions"]
        if positions is None:
            continue
        from ..engine.sequences import SCRATCH_LAYOUT  # imports torch: only where a table is fixed

        train, bins = scratch_lengths(section, family)
        longest = max(LengthBin.parse(b).high for b in [train, *bins])
        layout = SCRATCH_LAYOUT.with_eos({family: per_family(section["train_on_eos"], family)},
                                         {family: per_family(section["score_eos"], family)})
        needed = max(layout.sequence_length(get_task(t), longest) for t in config["tasks"] if get_task(t).family == family)
        if positions < needed:
            problems.append(f"config key {key}: {positions} positions are fewer than the longest {family} sequence needs "
                            f"({needed} tokens for length {longest}): raise it, set it to null, or use shorter bins")
    return problems
