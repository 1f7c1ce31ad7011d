"""The character-level tokenizer's characters, apart from the tokenizer, so that corpus code (and the
workflow that imports it at parse time) reads them without loading transformers."""

import string

# Printable ASCII (task alphabets, prompt punctuation, code) plus newline and tab.
DEFAULT_CHARACTERS = "".join(sorted(set(string.printable) - set("\r\x0b\x0c")))
