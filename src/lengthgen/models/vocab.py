"""Token vocabulary of the from-scratch models: special tokens plus one token per symbol.

Saved as a plain `PreTrainedTokenizerFast` (word-level), so `AutoTokenizer` loads it with no
custom code and the text columns of the data (`s0 s4 s2`) tokenize to one id per symbol.
"""

from __future__ import annotations

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

SPECIALS = ("<pad>", "<bos>", "<sep>", "<eos>", "<unk>")
PAD, BOS, SEP, EOS, UNK = range(len(SPECIALS))


def symbol_id(symbol: int) -> int:
    return len(SPECIALS) + symbol


def vocab_size(alphabet_size: int) -> int:
    return len(SPECIALS) + alphabet_size


def build_tokenizer(alphabet_size: int) -> PreTrainedTokenizerFast:
    vocab = {token: i for i, token in enumerate(SPECIALS)}
    vocab.update({f"s{s}": symbol_id(s) for s in range(alphabet_size)})
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", bos_token="<bos>",
                                   eos_token="<eos>", unk_token="<unk>", sep_token="<sep>")
