"""The C-RASP[pos] programs of the expressible tasks (Jobanputra, Veitsman, et al., NeurIPS 2025, App. A.2, Lemmas 4, 5, 7).

Each reads a string laid out as the tasks lay theirs out: retrieval `x_1 … x_n ⟨sep⟩ q`, then the
answer; copying `x_1 … x_n ⟨sep⟩`, then the copy, one symbol per step. NEXT_a is read at the end of
every prefix from ⟨sep⟩ on (the copy's earlier symbols included), and generation ends where no NEXT_a
holds. Two guards are ours: a retrieval program answers only at the query (the paper reads it at that
one position), and the copy programs read bigrams of the context only (in backward copying the copy
itself holds the bigram x_{k+1} x_k of the symbol just written).
"""

from __future__ import annotations

from ..theory import NEXT, SEPARATOR, Count, Defined, Is, Match, Program, Top

# The query is the symbol after the separator: retrieval answers there and nowhere else.
QUERY = Defined("QUERY", Is(SEPARATOR, back=1))
# A context position: no separator up to it.
CONTEXT = Defined("CONTEXT", Count(Is(SEPARATOR)) == 0)
# The first position of the string.
START = Defined("START", Count(Top()) == 1)
# The first occurrence of its symbol: the count of that symbol up to here is 1 (App. A.2, Lemma 5).
FIRST = Defined("FIRST", Count(Top(), match=Match(0, 0)) == 1)
# The previous position is a first occurrence.
AFTER_FIRST = Defined("AFTER_FIRST", Count(FIRST, distance=1) >= 1)

UR = Program("induction", QUERY & (Count(Is(NEXT), match=Match(1, 0)) >= 1),
             "the symbol after an earlier occurrence of the query (an induction head)")
UL = Program("anti-induction", QUERY & (Count(Is(NEXT, back=1), match=Match(0, 0)) >= 1),
             "the symbol before an earlier occurrence of the query (an anti-induction head)")
NR_FIRST = Program("induction from the first occurrence",
                   QUERY & (Count(Is(NEXT) & AFTER_FIRST, match=Match(1, 0)) >= 1),
                   "the symbol after the query's first occurrence")
NL_FIRST = Program("anti-induction from the first occurrence",
                   QUERY & (Count(Is(NEXT, back=1) & FIRST, match=Match(0, 0)) >= 1),
                   "the symbol before the query's first occurrence")
UF = Program("forward copy by induction",
             (Is(SEPARATOR) & (Count(Is(NEXT) & START) >= 1))
             | (Count(Is(NEXT) & CONTEXT, match=Match(1, 0)) >= 1),
             "at ⟨sep⟩ the first symbol, then the symbol after the current one in the context")
UB = Program("backward copy by anti-induction",
             (Is(SEPARATOR) & Is(NEXT, back=1))
             | (Count(Is(NEXT, back=1) & CONTEXT, match=Match(0, 0)) >= 1),
             "at ⟨sep⟩ the last symbol, then the symbol before the current one in the context")
