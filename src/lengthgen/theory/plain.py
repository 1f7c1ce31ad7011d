"""Writing a program's shorthands out into plain C-RASP[pos] operations over a given alphabet.

`Is(σ, back=d)` becomes #[j ≤ i, j = i − d] Q_σ(j) ≥ 1, a count with a match becomes one conditional
count per input symbol (Σ and the separator), and NEXT becomes each output symbol in turn. What
remains are Definition 3's operations (Jobanputra, Veitsman, et al., NeurIPS 2025, App. A.1) with comparisons of integer
linear combinations. Running the written-out program gives the same values as the shorthand one
(tests/test_theory.py), so the interpreter's fast paths compute C-RASP[pos] and nothing more.
"""

from __future__ import annotations

from .operations import (
    NEXT,
    SEPARATOR,
    And,
    Compare,
    Conditional,
    Count,
    Defined,
    Is,
    Linear,
    Not,
    Or,
    Periodic,
    Program,
    Top,
    check_types,
    is_integer,
)


class _Expander:
    def __init__(self, alphabet_size: int, output_symbol: int):
        self.alphabet_size, self.output_symbol = alphabet_size, output_symbol
        self.done: dict[int, object] = {}
        self.kept: list = []

    def symbol(self, marker) -> int:
        if marker is NEXT:
            return self.output_symbol
        return self.alphabet_size if marker is SEPARATOR else marker

    def holds(self, symbol: int, back: int):
        """x_{i−back} = symbol with an initial operation and, looking back, a local count."""
        return Is(symbol) if back == 0 else Count(Is(symbol), distance=back) >= 1

    def __call__(self, node):
        if id(node) not in self.done:
            self.done[id(node)] = self.expand(node)
            self.kept.append(node)
        return self.done[id(node)]

    def expand(self, node):
        if isinstance(node, (Top, Periodic)):
            return node
        if isinstance(node, Is):
            return self.holds(self.symbol(node.symbol), node.back)
        if isinstance(node, Not):
            return Not(self(node.operand))
        if isinstance(node, (And, Or)):
            return type(node)(tuple(self(o) for o in node.operands))
        if isinstance(node, Compare):
            return Compare(self(node.left), node.relation, self(node.right))
        if isinstance(node, Defined):
            return Defined(node.name, self(node.body))
        if isinstance(node, Conditional):
            return Conditional(self(node.condition), self(node.if_true), self(node.if_false))
        if isinstance(node, Linear):
            return Linear(tuple((c, self(t)) for c, t in node.terms), node.constant)
        if isinstance(node, Count):
            predicate = self(node.predicate)
            if node.match is None:
                return Count(predicate, node.distance)
            # Σ_σ (x_{i−outer} = σ ? #[j ≤ i, ψ](x_{j−inner} = σ ∧ P(j)) : 0)
            return Linear(tuple(
                (1, Conditional(self.holds(s, node.match.outer),
                                Count(And((self.holds(s, node.match.inner), predicate)), node.distance), Linear()))
                for s in range(self.alphabet_size + 1)))
        raise TypeError(f"not a C-RASP operation: {node!r}")


def expand(node, alphabet_size: int, output_symbol: int = 0):
    """`node` in plain operations over an alphabet of `alphabet_size` (the separator is the next index).
    An ill-typed tree is refused (IllTyped): writing it out would hide the error, not remove it."""
    check_types(node)
    return _Expander(alphabet_size, output_symbol)(node)


def expand_program(program: Program, alphabet_size: int) -> dict[int, object]:
    """NEXT_a written out for each output symbol a."""
    check_types(program)
    return {a: expand(program.next, alphabet_size, a) for a in range(alphabet_size)}


def is_plain(node) -> bool:
    """True when `node` uses Definition 3's operations only (no shorthand left). An ill-typed tree is
    refused (IllTyped), not answered: `Top() & Count(Is(1))` uses Definition 3's operations, wrongly."""
    check_types(node)
    return _plain(node)


def _plain(node) -> bool:
    if isinstance(node, Is):
        return node.back == 0 and is_integer(node.symbol)
    if isinstance(node, Count) and node.match is not None:
        return False
    return all(_plain(child) for child in node.children())
