"""Lorem-ipsum paragraphs as the authors made them (their realistic/dataset_creation/
generate_lorem.py), seeded: theirs was not.

The text comes from the `lorem` package's generator, whose word list glues two pairs of words
("etincidunt", "quiquia"): 27 words. A sentence is 4-8 words drawn uniformly, capitalised, with a
full stop; a paragraph 5-10 sentences; a text 3-6 paragraphs. One sample: a text, its paragraphs
joined by spaces, split into sentences at ". "; then, until there are at least 45 sentences,
repeatedly: shuffle the sentences, shuffle the words of one sentence (its first word kept), with
probability 0.3 append 4 copies of a random sentence, with probability 0.5 append 4 copies of one
of a random sentence's words to that sentence; the sentences joined by ". ". Texts seen before are
drawn again. Each is cut to N tokens of the evaluated model's tokenizer.
"""

from __future__ import annotations

import zlib

import numpy as np

WORDS = ("adipisci aliquam amet consectetur dolor dolore dolorem eius est etincidunt ipsum labore magnam modi "
         "neque non numquam porro quaerat quiquia quisquam sed sit tempora ut velit voluptatem").split()
MIN_SENTENCES, COPIES, SENTENCE_P, WORD_P = 45, 4, 0.3, 0.5


def _sentence(rng) -> str:
    words = rng.choice(WORDS, size=int(rng.integers(4, 9)))
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _text(rng) -> str:
    paragraphs = [" ".join(_sentence(rng) for _ in range(int(rng.integers(5, 11))))
                  for _ in range(int(rng.integers(3, 7)))]
    return "\n\n".join(paragraphs)


def _vary(rng, sentences: list[str]) -> list[str]:
    """One round of the authors' process_sentences."""
    sentences = [sentences[i] for i in rng.permutation(len(sentences))]
    pick = int(rng.integers(len(sentences)))
    words = sentences[pick].split()
    if len(words) > 1:
        rest = [words[1:][i] for i in rng.permutation(len(words) - 1)]
        sentences[pick] = " ".join([words[0], *rest])
    if rng.random() < SENTENCE_P:
        sentences += [sentences[int(rng.integers(len(sentences)))]] * COPIES
    if rng.random() < WORD_P:
        pick = int(rng.integers(len(sentences)))
        words = sentences[pick].split()
        sentences[pick] = " ".join(words + [words[int(rng.integers(len(words)))]] * COPIES)
    return sentences


def paragraph(rng) -> str:
    sentences = _text(rng).replace("\n", " ").split(". ")
    while len(sentences) < MIN_SENTENCES:
        sentences = _vary(rng, sentences)
    return ". ".join(sentences)


def paragraphs(tokenizer, tokens: int, count: int, seed: int) -> list[str]:
    """`count` distinct paragraphs of `tokens` tokens of this tokenizer."""
    rng = np.random.default_rng([seed, tokens, zlib.crc32(b"lorem")])
    seen, texts = set(), []
    while len(texts) < count:
        text = paragraph(rng)
        if text in seen:
            continue
        seen.add(text)
        ids = tokenizer(text, add_special_tokens=False).input_ids[:tokens]
        texts.append(tokenizer.decode(ids).strip())
    return texts
