"""The tiny models every test builds: one function for each architecture and size, over the character
tokenizer (one token per character, so task symbols are single tokens), randomly initialised from
seed 0 so that tests may pin exact numbers."""

import torch
from transformers import (
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from lengthgen.models.char_tokenizer import build_char_tokenizer

TOKENIZER = build_char_tokenizer()
TOKEN_IDS = dict(vocab_size=len(TOKENIZER), bos_token_id=TOKENIZER.bos_token_id, eos_token_id=TOKENIZER.eos_token_id,
                 pad_token_id=TOKENIZER.pad_token_id)
OTHER_ARCHITECTURES = {"llama": (LlamaConfig, LlamaForCausalLM), "qwen2": (Qwen2Config, Qwen2ForCausalLM),
                       "gemma3": (Gemma3TextConfig, Gemma3ForCausalLM)}


def tiny_model(kind: str = "gpt2", *, layers: int = 1, heads: int = 2, width: int = 16, positions: int = 512,
               **config):
    """A causal LM of `kind` ("gpt2", "llama", "qwen2", "gemma3") in evaluation mode, with the
    character tokenizer's vocabulary and special tokens. Llama-like models get a feed-forward twice
    `width` and half as many key/value heads as heads; `config` sets any other config field."""
    torch.manual_seed(0)
    if kind == "gpt2":
        return GPT2LMHeadModel(GPT2Config(n_embd=width, n_layer=layers, n_head=heads, n_positions=positions,
                                          **{**TOKEN_IDS, **config})).eval()
    config_class, model_class = OTHER_ARCHITECTURES[kind]
    shape = dict(hidden_size=width, intermediate_size=2 * width, num_hidden_layers=layers, num_attention_heads=heads,
                 num_key_value_heads=max(1, heads // 2), max_position_embeddings=positions)
    return model_class(config_class(**{**shape, **TOKEN_IDS, **config})).eval()


def save_tiny_model(path, **shape):
    """A tiny model (`tiny_model`'s arguments) saved with the character tokenizer, as a model
    directory the registry loads by path."""
    tiny_model(**shape).save_pretrained(path)
    TOKENIZER.save_pretrained(path)
    return path


def tiny_training_section(**training) -> dict:
    """The job parameters of a tiny from-scratch run (one layer, d_model 16, alphabet 5), every
    training setting given, as a rule's params give them; `training` overrides some."""
    return {
        "data": {"alphabet_size": 5, "pool_fraction": None}, "train_lengths": "1-6", "max_length": 10,
        "model": {"layers": 1, "heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1},
        "training": {"lr": 3e-3, "weight_decay": 0.01, "batch_size": 8, "max_steps": 120, "eval_every": 20,
                     "warmup_steps": 5, "schedule": "linear", "precision": "fp32", "checkpoint_every": 10,
                     "eval_examples": 32, "eval_batch_size": 64, "length_buckets": 1, "warmup_ratio": None,
                     "max_grad_norm": 1.0, "early_stop": True, "patience": None, **training},
        "eos": {"train": True, "score": False},
    }
