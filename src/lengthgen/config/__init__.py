"""The workflow config: its schema (the one source of every default), validation, and reading
one stage's or one family's settings."""

from ..settings import ConfigError
from .models_check import check_models, job_model_entry, model_entry
from .schema import load_schema
from .sections import (
    corpus_model_keys,
    corpus_models,
    finetune_bins,
    icl_variants,
    per_family,
    pretrain_section,
    scratch_bins,
    scratch_family_settings,
    scratch_lengths,
)
from .validate import train_settings, validate_config

__all__ = ["ConfigError", "check_models", "corpus_model_keys", "corpus_models",
           "finetune_bins", "icl_variants",
           "load_schema", "job_model_entry", "model_entry",
           "per_family", "pretrain_section", "scratch_bins", "scratch_family_settings", "scratch_lengths",
           "train_settings", "validate_config"]
