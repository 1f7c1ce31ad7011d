"""Tiny GGUF files the tests write themselves: a two-layer Llama and a byte-level vocabulary, in
llama.cpp's layout (tensor names, the rotary permutation of the query and key rows, reversed
shapes), with the 2-D weights stored plain (F32) or quantised (Q8_0, Q4_1)."""

import gguf
import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM

SPECIAL = ["<|endoftext|>", "<|pad|>"]
MERGES = [f"Ġ {letter}" for letter in "abcdefghijklmnopqrstuvwxyz"] + ["a b"]  # " a" one token, as in a BPE LM


def byte_spellings() -> list[str]:
    """Byte-level BPE's printable spelling of the 256 bytes: printable Latin-1 bytes stand for
    themselves, the others for the code points from 256 on, in byte order."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    spellings, extra = [], 0
    for byte in range(256):
        if byte in printable:
            spellings.append(chr(byte))
        else:
            spellings.append(chr(256 + extra))
            extra += 1
    return spellings


def vocabulary() -> tuple[list[str], list[int]]:
    """Byte-level tokens (each byte's printable spelling), a few merges, two control tokens."""
    tokens = byte_spellings() + [m.replace(" ", "") for m in MERGES] + SPECIAL
    types = [gguf.TokenType.NORMAL] * (len(tokens) - len(SPECIAL)) + [gguf.TokenType.CONTROL] * len(SPECIAL)
    return tokens, types


def tiny_llama(vocab_size: int, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False,
                         bos_token_id=vocab_size - 2, eos_token_id=vocab_size - 2, pad_token_id=vocab_size - 1)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # norms away from 1, so a norm read from the wrong tensor shows
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.uniform_(0.5, 1.5)
    return model


def rotary_layout(weight: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp orders each head's query/key rows as interleaved rotary pairs; Hugging Face keeps
    the two halves apart. Rows (h, half, i) -> (h, i, half)."""
    rows = weight.shape[0] // heads // 2
    return weight.reshape(heads, 2, rows, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def gguf_names(config: LlamaConfig) -> dict[str, str]:
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    parts = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for layer in range(config.num_hidden_layers):
        for ours, theirs in parts.items():
            names[f"model.layers.{layer}.{ours}.weight"] = f"blk.{layer}.{theirs}.weight"
    return names


def write_tiny_gguf(path, quantisation: str = "F32", seed: int = 0) -> LlamaForCausalLM:
    """Write the file and return the model it holds: the written model itself for F32, or, for a
    quantised file, the same model with every 2-D weight rounded as the file stores it."""
    tokens, types = vocabulary()
    model = tiny_llama(len(tokens), seed)
    config = model.config
    qtype = gguf.GGMLQuantizationType[quantisation]
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if quantisation == "F32" else
                         gguf.LlamaFileType[f"MOSTLY_{quantisation}"])
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(MERGES)
    writer.add_bos_token_id(config.bos_token_id)
    writer.add_eos_token_id(config.eos_token_id)
    writer.add_pad_token_id(config.pad_token_id)
    writer.add_add_bos_token(False)
    state = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    stored = {}
    for name, theirs in gguf_names(config).items():
        weight = state[name]
        if name.endswith("q_proj.weight"):
            weight = rotary_layout(weight, config.num_attention_heads)
        elif name.endswith("k_proj.weight"):
            weight = rotary_layout(weight, config.num_key_value_heads)
        if weight.ndim == 2 and quantisation != "F32":
            blocks = gguf.quants.quantize(weight, qtype)
            writer.add_tensor(theirs, blocks, raw_dtype=qtype)
            rounded = gguf.quants.dequantize(blocks, qtype).reshape(weight.shape)
            stored[name] = rounded if "q_proj" not in name and "k_proj" not in name else None
            if stored[name] is None:  # back to Hugging Face's row order
                heads = config.num_attention_heads if "q_proj" in name else config.num_key_value_heads
                rows = rounded.shape[0] // heads // 2
                stored[name] = rounded.reshape(heads, rows, 2, -1).swapaxes(1, 2).reshape(rounded.shape)
        else:
            writer.add_tensor(theirs, weight)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with torch.no_grad():
        for name, value in stored.items():
            model.get_parameter(name).copy_(torch.from_numpy(np.ascontiguousarray(value)))
    return model
