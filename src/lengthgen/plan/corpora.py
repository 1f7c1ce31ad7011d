"""The corpora experiment (beyond the paper): models pretrained alike on corpus variants, several
pretraining seeds an arm, measured by the manipulation check, the mechanism stage, the in-context
copy measures and a short fine-tuning, each in its own files so that the paper's stages and
findings keep their own models."""

from __future__ import annotations

from itertools import product

from ..config import corpus_models
from ..layout import CORPUS_FINETUNE, CORPUS_ICL, CORPUS_MANIPULATION, CORPUS_MECHANISM
from ..settings import CorpusStatisticsSettings, ManipulationSettings
from . import finetune, icl, mechanism
from .grid import known, tasks

FAMILY = "copying"  # the in-context measures compared: forward against backward copy


def roles(config: dict) -> dict[str, tuple[str, ...]]:
    """corpus -> its registry models (one per pretraining seed), for the corpora the config names."""
    return corpus_models(config)


def models(config: dict) -> list[str]:
    """Every model of the experiment, arm by arm."""
    return [name for names in roles(config).values() for name in names]


def enabled(config: dict) -> bool:
    return bool(roles(config))


def dose_enabled(config: dict) -> bool:
    """The dose-response's tables: where the config names a dose arm between forward- and backward-only."""
    return any(arm in roles(config) for arm in ("reversed-25", "reversed-50", "reversed-75"))


def model(config: dict, name: str) -> str:
    """A {model} wildcard of this experiment's rules, checked."""
    return known("corpora model", name, {m: m for m in models(config)})


def manipulation_params(config: dict, name: str) -> ManipulationSettings:
    """The manipulation check of a registry model: copies drawn as the corpora insert theirs
    (`pretrain.insertion`), in the natural corpus as the pretrain stage cuts it and holds out its tail."""
    pretrain, insertion = config["pretrain"], config["pretrain"]["insertion"]
    return ManipulationSettings.from_config({
        "subject": model(config, name), "model": config["models"][name], **config["corpora"]["manipulation"],
        "corpus_chars": pretrain["corpus_chars"], "validation_fraction": pretrain["validation_fraction"],
        "passage_chars": insertion["passage_chars"], "gap_passages": insertion["gap_passages"]})


def manipulations(config: dict) -> list[str]:
    return [CORPUS_MANIPULATION.format(model=m) for m in models(config)]


def mechanism_params(config: dict, name: str) -> dict:
    """The mechanism stage's analysis of a registry model, under its registry name."""
    return mechanism.analysis_params(config, model(config, name), {"kind": "registry", "model": config["models"][name]})


def icl_params(config: dict, name: str) -> dict:
    return icl.predict_params(config, model(config, name), FAMILY)


def icl_data(config: dict, name: str) -> list[str]:
    return icl.data_inputs(config, FAMILY, model(config, name))


def finetune_tasks(config: dict) -> list[str]:
    section = config["corpora"]["finetune"]
    return [t for t in section["tasks"] if t in tasks(config)] if section["max_steps"] else []


def finetune_params(config: dict, name: str, task: str) -> dict:
    """The fine-tuning stage's job parameters for this model and task, with the short run's steps
    and evaluations (its learning curve's points)."""
    section = config["corpora"]["finetune"]
    return finetune.train_params(config, model(config, name), task,
                                 fixed={"max_steps": section["max_steps"], "eval_every": section["eval_every"]})


def finetune_evals(config: dict) -> list[str]:
    return [f"{CORPUS_FINETUNE.format(model=m, task=t, seed=s)}/eval.parquet"
            for m, t, s in product(models(config), finetune_tasks(config), config["seeds"])]


def finetune_histories(config: dict) -> list[str]:
    """Every short fine-tuning's training history (its learning curve), in the order of `finetune_evals`."""
    return [path.replace("/eval.parquet", "/training.parquet") for path in finetune_evals(config)]


def finetune_data(config: dict) -> list[str]:
    """The test files of the short fine-tuning (the fine-tuning stage's bins)."""
    return [f for t in finetune_tasks(config) for s in config["seeds"] for f in finetune.eval_data(config, t, s)]


def data_files(config: dict) -> list[str]:
    """Every data file the experiment reads (the data stage makes them)."""
    if not enabled(config):
        return []
    icl_files = [f for m in models(config) for f in icl_data(config, m)] if FAMILY in icl.families(config) else []
    return list(dict.fromkeys(icl_files + finetune_data(config)))


def heads(config: dict) -> list[str]:
    return [f"{CORPUS_MECHANISM.format(model=m)}/heads.parquet" for m in models(config)]


def icl_predictions(config: dict) -> list[str]:
    if FAMILY not in icl.families(config):
        return []
    return [CORPUS_ICL.format(model=m, family=FAMILY) for m in models(config)]


def pairs_params(config: dict) -> dict:
    """What the corpus pairs read of the config: which model is which corpus, the seeds, the tasks."""
    return {"roles": {role: list(names) for role, names in roles(config).items()}, "seeds": config["seeds"],
            "tasks": config["tasks"], "finetune": config["corpora"]["finetune"]}


def statistics_params(config: dict) -> CorpusStatisticsSettings:
    """The corpora's repeat statistics: the corpora as the pretrain stage builds them."""
    pretrain = config["pretrain"]
    return CorpusStatisticsSettings.from_config({
        "corpora": list(roles(config)), "corpus_chars": pretrain["corpus_chars"], "seeds": pretrain["seeds"],
        "insertion": pretrain["insertion"], **config["corpora"]["statistics"]})

