"""Tiny models the tests make and save: a one-layer GPT-2 over the character tokenizer."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from lengthgen.models.char_tokenizer import build_char_tokenizer


def save_tiny_model(path):
    tokenizer = build_char_tokenizer()
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2, n_positions=512,
                               eos_token_id=tokenizer.eos_token_id)).save_pretrained(path)
    tokenizer.save_pretrained(path)
