"""Running a C-RASP[pos] program: every operation's value at every position of a batch of strings.

Semantics (Jobanputra, Veitsman, et al., NeurIPS 2025, App. A.1, restating Huang et al. 2025): an operation's value at
position i depends on x_1 … x_i only (every count ranges over j ≤ i), so one pass over a whole
string gives NEXT_a at the end of each of its prefixes. That is what `next_symbols` returns; reading
it along prompt + answer is the same as generating the answer token by token (teacher forcing).

Values are numpy arrays over (string, position); an operation that mentions the output symbol a has
one more axis, over a ∈ Σ. Counts are prefix sums or shifts along positions; a count with a symbol
match is a join of positions i and j, as the per-symbol sum it abbreviates would compute. A value
that is true for at most one a per position (x_{i−d} = a, and what is built from it by ∧) is kept as
that a's index, so counting over it costs a scatter, not a pass over the whole alphabet.

Symbols: 0 … |Σ|−1 are the alphabet, |Σ| the separator, |Σ|+1 pads strings of a batch to one length
(padding only ever follows a string, so causality keeps it from changing any value before it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
)

NONE = -1  # no NEXT_a holds: generation ends
AMBIGUOUS = -2  # several NEXT_a hold: the program does not define the next symbol
BATCH_CELLS = 1 << 24  # strings × length × max(length, |Σ|): the largest array a batch makes


class OneHot:
    """A value over a ∈ Σ that is `weight` at a = `index` and 0 (false) at every other a."""

    __slots__ = ("index", "weight")

    def __init__(self, index: np.ndarray, weight: np.ndarray):
        self.index, self.weight = index, weight

    def dense(self, size: int) -> np.ndarray:
        out = np.zeros(self.index.shape + (size,), dtype=self.weight.dtype)
        valid = self.index >= 0
        rows, positions = np.nonzero(valid)
        out[rows, positions, self.index[valid]] = self.weight[valid]
        return out


class Batch:
    """Strings of one length, the alphabet size, and the values computed so far."""

    def __init__(self, symbols: np.ndarray, alphabet_size: int):
        self.symbols = np.asarray(symbols, dtype=np.int32)
        if self.symbols.ndim != 2:
            raise ValueError(f"a batch is strings × positions, got shape {self.symbols.shape}")
        self.alphabet_size = alphabet_size
        self.values: dict[int, object] = {}
        self.nodes: list = []  # keeps every cached node alive, so its id stays its own

    @property
    def shape(self) -> tuple[int, int]:
        return self.symbols.shape

    def symbol(self, marker) -> int:
        if marker is SEPARATOR:
            return self.alphabet_size
        if isinstance(marker, (int, np.integer)) and 0 <= marker <= self.alphabet_size:
            return int(marker)
        raise ValueError(f"{marker!r} is not a symbol of an alphabet of {self.alphabet_size}")

    def back(self, distance: int) -> np.ndarray:
        """x_{i−distance} at every i, −1 where that is before the start."""
        return shift(self.symbols, distance, fill=-1)

    def value(self, node):
        key = id(node)
        if key not in self.values:
            self.values[key] = EVALUATE[type(node)](node, self)
            self.nodes.append(node)
        return self.values[key]

    def dense(self, value) -> np.ndarray:
        return value.dense(self.alphabet_size) if isinstance(value, OneHot) else value


def shift(values: np.ndarray, distance: int, fill=0) -> np.ndarray:
    """values[:, i − distance] at every i (positions are axis 1), `fill` before the start."""
    out = np.full_like(values, fill)
    if distance == 0:
        return values.copy()
    if distance < values.shape[1]:
        out[:, distance:] = values[:, :-distance]
    return out


def _broadcast(*values: np.ndarray) -> list[np.ndarray]:
    """Values without the symbol axis get one of size 1 when another value has it."""
    if any(v.ndim == 3 for v in values):
        return [v[..., None] if v.ndim == 2 else v for v in values]
    return list(values)


# -- Boolean operations ------------------------------------------------------------------------------
def _top(node, batch):
    return np.ones(batch.shape, dtype=bool)


def _is(node, batch):
    symbols = batch.back(node.back)
    if node.symbol is NEXT:
        valid = (symbols >= 0) & (symbols < batch.alphabet_size)
        return OneHot(np.where(valid, symbols, -1), valid)
    return symbols == batch.symbol(node.symbol)


def _not(node, batch):
    return ~batch.dense(batch.value(node.operand))


def _and(node, batch):
    result = batch.value(node.operands[0])
    for operand in node.operands[1:]:
        result = _and2(result, batch.value(operand), batch)
    return result


def _and2(left, right, batch):
    if isinstance(right, OneHot) and not isinstance(left, OneHot):
        left, right = right, left
    if isinstance(left, OneHot):
        if isinstance(right, OneHot):
            same = left.weight & right.weight & (left.index == right.index)
            return OneHot(np.where(same, left.index, -1), same)
        if right.ndim == 2:
            kept = left.weight & right
            return OneHot(np.where(kept, left.index, -1), kept)
        left = batch.dense(left)
    left, right = _broadcast(left, right)
    return left & right


def _or(node, batch):
    values = _broadcast(*(batch.dense(batch.value(o)) for o in node.operands))
    return np.logical_or.reduce(np.broadcast_arrays(*values))


def _periodic(node, batch):
    positions = np.arange(1, batch.shape[1] + 1)
    return np.broadcast_to(positions % node.modulus == node.residue % node.modulus, batch.shape).copy()


COMPARE = {"<=": np.less_equal, ">=": np.greater_equal, "==": np.equal, "<": np.less, ">": np.greater}


def _compare(node, batch):
    left, right = batch.value(node.left), batch.value(node.right)
    relation = COMPARE[node.relation]
    if isinstance(left, OneHot) and not isinstance(right, OneHot) and right.ndim == 2 and not relation(0, right).any():
        # The count is 0 at every a but one and the comparison fails for 0: the result stays one-hot.
        holds = relation(left.weight, right) & (left.index >= 0)
        return OneHot(np.where(holds, left.index, -1), holds)
    left, right = _broadcast(batch.dense(left), batch.dense(right))
    return relation(left, right)


def _defined(node, batch):
    return batch.value(node.body)


# -- counts ------------------------------------------------------------------------------------------
def _count(node, batch):
    predicate = batch.value(node.predicate)
    if node.match is not None:
        return _matched_count(node, predicate, batch)
    if node.distance is not None:
        if isinstance(predicate, OneHot):
            index = shift(predicate.index, node.distance, fill=-1)
            return OneHot(index, shift(predicate.weight.astype(np.int32), node.distance))
        return shift(predicate.astype(np.int32), node.distance)
    return np.cumsum(batch.dense(predicate), axis=1, dtype=np.int32)


def _matched_count(node, predicate, batch):
    """#[j ≤ i, ψ](x_{j−inner} = x_{i−outer} ∧ P(j)): a join over pairs of positions (i, j)."""
    length = batch.shape[1]
    keys, queries = batch.back(node.match.inner), batch.back(node.match.outer)
    offsets = np.arange(length)[:, None] - np.arange(length)[None, :]  # i − j
    allowed = offsets >= 0 if node.distance is None else offsets == node.distance
    pairs = allowed[None] & (keys[:, None, :] == queries[:, :, None]) & (keys[:, None, :] >= 0)
    if isinstance(predicate, OneHot):
        rows, at, over = np.nonzero(pairs & predicate.weight[:, None, :].astype(bool))
        out = np.zeros(batch.shape + (batch.alphabet_size,), dtype=np.int32)
        np.add.at(out, (rows, at, predicate.index[rows, over]), predicate.weight[rows, over].astype(np.int32))
        return out
    if predicate.ndim == 2:
        return (pairs & predicate[:, None, :]).sum(axis=2, dtype=np.int32)
    return np.einsum("bij,bja->bia", pairs.astype(np.int32), predicate.astype(np.int32))


def _conditional(node, batch):
    condition, if_true, if_false = (batch.dense(batch.value(n)) for n in (node.condition, node.if_true, node.if_false))
    return np.where(*_broadcast(condition, if_true, if_false))


def _linear(node, batch):
    if len(node.terms) == 1 and node.terms[0][0] == 1 and node.constant == 0:
        return batch.value(node.terms[0][1])  # a bare count, kept one-hot where it is
    total = np.full(batch.shape, node.constant, dtype=np.int32)
    for coefficient, term in node.terms:
        total, value = _broadcast(total, batch.dense(batch.value(term)))
        total = total + coefficient * value
    return total


EVALUATE = {Top: _top, Is: _is, Not: _not, And: _and, Or: _or, Periodic: _periodic, Compare: _compare,
            Defined: _defined, Count: _count, Conditional: _conditional, Linear: _linear}


def evaluate(node, symbols: np.ndarray, alphabet_size: int):
    """The value of one operation at every position of every string (rows of `symbols`): a bool or
    integer array over (string, position), with a last axis over a ∈ Σ where it mentions a.
    An ill-typed tree is refused (IllTyped) before anything is computed."""
    check_types(node)
    batch = Batch(symbols, alphabet_size)
    return batch.dense(batch.value(node))


# -- the next symbol ---------------------------------------------------------------------------------
def _read(value, batch) -> np.ndarray:
    if isinstance(value, OneHot):
        return np.where(value.weight, value.index, NONE)
    if value.ndim == 2:  # NEXT_a that does not depend on a: all or none of them hold
        return np.where(value, AMBIGUOUS if batch.alphabet_size > 1 else 0, NONE)
    holding = value.sum(axis=2)
    return np.where(holding == 0, NONE, np.where(holding == 1, value.argmax(axis=2), AMBIGUOUS))


def next_symbols(program: Program, strings: Sequence[Sequence[int]], alphabet_size: int) -> list[np.ndarray]:
    """For every string, the symbol NEXT defines at the end of each of its prefixes: an a ∈ Σ,
    NONE (generation ends) or AMBIGUOUS. Strings are batched by length. An ill-typed program is
    refused (IllTyped)."""
    check_types(program)
    return _next_symbols(program, strings, alphabet_size)


def _next_symbols(program: Program, strings: Sequence[Sequence[int]], alphabet_size: int) -> list[np.ndarray]:
    """`next_symbols` of a program already checked."""
    strings = [np.asarray(s, dtype=np.int32) for s in strings]
    if any(len(s) and (s.min() < 0 or s.max() > alphabet_size) for s in strings):
        raise ValueError(f"symbols must lie in 0..{alphabet_size} (the last is the separator)")
    order = sorted(range(len(strings)), key=lambda k: len(strings[k]))
    results: list[np.ndarray | None] = [None] * len(strings)

    def cells(count: int, length: int) -> int:  # the largest array of a batch: a join or a value over Σ
        return count * length * max(length, alphabet_size)

    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and cells(stop - start + 1, len(strings[order[stop]])) <= BATCH_CELLS:
            stop += 1
        chunk = order[start:stop]
        padded = np.full((len(chunk), max(1, len(strings[chunk[-1]]))), alphabet_size + 1, dtype=np.int32)
        for row, k in enumerate(chunk):
            padded[row, :len(strings[k])] = strings[k]
        batch = Batch(padded, alphabet_size)
        read = _read(batch.value(program.next), batch)
        for row, k in enumerate(chunk):
            results[k] = read[row, :len(strings[k])]
        start = stop
    return results


def generate(program: Program, prompt: Sequence[int], alphabet_size: int, limit: int) -> tuple[list[int], str]:
    """Generate from `prompt` one symbol at a time: the symbols, and why generation stopped ("end":
    no NEXT_a holds; "ambiguous": several do; "limit": `limit` symbols made). The program is checked
    once (IllTyped if ill-typed), not at every step."""
    check_types(program)
    made: list[int] = []
    while len(made) < limit:
        symbol = int(_next_symbols(program, [list(prompt) + made], alphabet_size)[0][-1])
        if symbol == NONE:
            return made, "end"
        if symbol == AMBIGUOUS:
            return made, "ambiguous"
        made.append(symbol)
    return made, "limit"
