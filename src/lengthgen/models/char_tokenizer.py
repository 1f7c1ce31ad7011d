"""A character-level tokenizer as a stock `PreTrainedTokenizerFast`: one character, one token.

Used by the embedded pretrained models (so every task symbol is exactly one token, as docs/spec.md
§4 asks) and by tests that build tiny models. Loads with `AutoTokenizer`, no custom code.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from .characters import DEFAULT_CHARACTERS

# Special tokens are named so that the literal "<bos>"/"<eos>" of the copy prompts stay plain text.
SPECIALS = ("<|pad|>", "<|endoftext|>", "<|unk|>")


def build_char_tokenizer(characters: str = DEFAULT_CHARACTERS) -> PreTrainedTokenizerFast:
    vocab = {token: i for i, token in enumerate(SPECIALS)}
    for char in characters:
        vocab.setdefault(char, len(vocab))
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|unk|>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<|pad|>", bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", unk_token="<|unk|>", clean_up_tokenization_spaces=False)
