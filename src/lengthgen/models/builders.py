"""The models this workflow initialises itself, all stock Hugging Face classes (a saved model
loads with `AutoModelForCausalLM` and no custom code).

From scratch, the positional encoding is one switch: `ape` is GPT-2 (learned absolute positions);
`rope` is a stock Llama, as the authors built it (rope base 500, linear rope scaling by 64; both
settings); `nope` is SmolLM3 with rotary embeddings in no layer (Llama cannot switch them off). The
embedded pretrained model is a character-level GPT-2 or Llama.
"""

from __future__ import annotations

from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    SmolLM3Config,
    SmolLM3ForCausalLM,
)

from .vocab import BOS, EOS, PAD

POSITIONAL_ENCODINGS = ("ape", "rope", "nope")
CHAR_ARCHITECTURES = ("gpt2", "llama")


def build_model(pe: str, vocab_size: int, max_positions: int, layers: int, heads: int, d_model: int,
                d_ff: int | None = None, dropout: float = 0.0, seed: int = 0, rope_theta: float = 500.0,
                rope_scaling: float = 64.0) -> PreTrainedModel:
    """A freshly initialised model; the same seed gives the same weights."""
    import torch

    torch.manual_seed(seed)
    d_ff = d_ff or 4 * d_model
    ids = dict(bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
    if pe == "ape":
        # GPT-2's own tanh-approximate GELU, computed by one fused kernel instead of six element-wise
        # operations ("gelu_new"): the same function, 1.2-1.4x faster training steps at these sizes on CPU.
        config = GPT2Config(vocab_size=vocab_size, n_positions=max_positions, n_embd=d_model, n_layer=layers,
                            n_head=heads, n_inner=d_ff, activation_function="gelu_pytorch_tanh",
                            resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout, **ids)
        return GPT2LMHeadModel(config)
    if pe == "rope":
        rope = ({"rope_type": "linear", "factor": float(rope_scaling)} if rope_scaling != 1 else {"rope_type": "default"})
        config = LlamaConfig(vocab_size=vocab_size, hidden_size=d_model, intermediate_size=d_ff,
                             num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                             max_position_embeddings=max_positions, attention_dropout=dropout,
                             rope_parameters={**rope, "rope_theta": float(rope_theta)}, **ids)
        return LlamaForCausalLM(config)
    if pe == "nope":
        config = SmolLM3Config(vocab_size=vocab_size, hidden_size=d_model, intermediate_size=d_ff,
                               num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                               max_position_embeddings=max_positions, attention_dropout=dropout,
                               no_rope_layers=[0] * layers, tie_word_embeddings=True, use_sliding_window=False, **ids)
        return SmolLM3ForCausalLM(config)
    raise ValueError(f"unknown positional encoding {pe!r}; known: {', '.join(POSITIONAL_ENCODINGS)}")


def build_char_model(architecture: str, vocab_size: int, context: int, layers: int, heads: int, d_model: int,
                     seed: int, special_ids: dict):
    """A freshly initialised character-level LM for pretraining (the embedded model)."""
    import torch

    torch.manual_seed(seed)
    if architecture == "gpt2":
        return GPT2LMHeadModel(GPT2Config(vocab_size=vocab_size, n_positions=context, n_embd=d_model, n_layer=layers,
                                          n_head=heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                          **special_ids))
    if architecture == "llama":
        return LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, hidden_size=d_model, intermediate_size=4 * d_model,
                                            num_hidden_layers=layers, num_attention_heads=heads,
                                            num_key_value_heads=heads, max_position_embeddings=context,
                                            tie_word_embeddings=True, **special_ids))
    raise ValueError(f"unknown architecture {architecture!r}; known: {', '.join(CHAR_ARCHITECTURES)}")
