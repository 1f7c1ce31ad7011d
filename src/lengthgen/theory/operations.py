"""The operations of a C-RASP[pos] program, as data, and their readable form.

C-RASP[pos] is Huang et al.'s C-RASP[periodic, local] (2025, arXiv 2410.02140): C-RASP (Yang and
Chiang 2024) with periodic unary and local binary positional relations. The operations here are
those of Definition 3 in Jobanputra, Veitsman, et al. (NeurIPS 2025, App. A.1), which restates it:

- Boolean: Q_σ(i) (the symbol at i is σ), ¬, ∧, ⊤, a periodic relation φ(i), and C1(i) ≤ C2(i);
- counts: #[j ≤ i, ψ(i, j)] P(j) with ψ = ⊤ or a local relation, P(i) ? C1(i) : C2(i), C1 + C2,
  C1 − C2 and the constant 1.

Choices where the definition leaves one:
- the local relation is one distance, ψ(i, j) = [j = i − d] (a finite set of distances is a sum of
  such counts); the periodic relation is φ(i) = [i ≡ r (mod m)], positions numbered from 1;
- sugar, each written out into the operations above by `plain.expand` (tests check both agree):
  ∨, comparisons ≥ = < > and integer linear combinations of counts (over integers these are ≤,
  sums and constants); `Is(σ, back=d)`, x_{i−d} = σ, for #[j ≤ i, j = i − d] Q_σ(j) ≥ 1;
  `Count(P, match=Match(dj, di))`, #[j ≤ i](x_{j−dj} = x_{i−di} ∧ P(j)), for
  Σ_σ (x_{i−di} = σ ? #[j ≤ i](x_{j−dj} = σ ∧ P(j)) : 0), the per-symbol disjunction the paper's
  programs write out (App. A.2, Lemma 4: "the bigram σa where σ is the symbol at position i");
- a program is one Boolean operation NEXT_a(i) with `NEXT` standing for a: one operation per a ∈ Σ,
  the output symbols (App. A.1). The separator is an input symbol, never an output one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

POSITION_NAMES = "ijklmn"


class Marker:
    """A symbol a program names without knowing the alphabet: the output symbol or the separator."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEXT = Marker("a")  # the a of NEXT_a
SEPARATOR = Marker("⟨sep⟩")


def _position(name: str, back: int) -> str:
    return name if back == 0 else f"{name}−{back}"


def _symbol_at(name: str, back: int) -> str:
    return f"x_{name}" if back == 0 else f"x_{{{_position(name, back)}}}"


def _symbol_name(symbol) -> str:
    return symbol.name if isinstance(symbol, Marker) else f"s{symbol}"


# -- Boolean operations ------------------------------------------------------------------------------
class Bool:
    """A Boolean-valued operation P(i); `&`, `|` and `~` combine them."""

    def __and__(self, other: Bool) -> Bool:
        return And((self, other))

    def __or__(self, other: Bool) -> Bool:
        return Or((self, other))

    def __invert__(self) -> Bool:
        return Not(self)

    def render(self, here: str, depth: int) -> str:
        raise NotImplementedError

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True, eq=False)
class Top(Bool):
    """⊤, true everywhere."""

    def render(self, here, depth):
        return "⊤"


@dataclass(frozen=True, eq=False)
class Is(Bool):
    """x_{i−back} = symbol (false where i − back is before the start); back 0 is Q_symbol(i)."""

    symbol: object  # an alphabet index, NEXT or SEPARATOR
    back: int = 0

    def __post_init__(self):
        if self.back < 0:
            raise ValueError(f"Is looks back, never ahead (causal); got back={self.back}")

    def render(self, here, depth):
        return f"{_symbol_at(here, self.back)} = {_symbol_name(self.symbol)}"


@dataclass(frozen=True, eq=False)
class Not(Bool):
    operand: Bool

    def render(self, here, depth):
        inner = self.operand.render(here, depth)
        return f"¬{inner}" if isinstance(self.operand, (Top, Defined)) else f"¬({inner})"

    def children(self):
        return (self.operand,)


@dataclass(frozen=True, eq=False)
class And(Bool):
    operands: tuple

    def render(self, here, depth):
        return " ∧ ".join(_grouped(o, here, depth, Or) for o in self.operands)

    def children(self):
        return self.operands


@dataclass(frozen=True, eq=False)
class Or(Bool):
    operands: tuple

    def render(self, here, depth):
        return " ∨ ".join(_grouped(o, here, depth, And) for o in self.operands)

    def children(self):
        return self.operands


def _grouped(operand: Bool, here: str, depth: int, looser: type) -> str:
    text = operand.render(here, depth)
    return f"({text})" if isinstance(operand, looser) else text


@dataclass(frozen=True, eq=False)
class Periodic(Bool):
    """φ(i) = [i ≡ residue (mod modulus)], positions numbered from 1."""

    modulus: int
    residue: int

    def __post_init__(self):
        if self.modulus < 1:
            raise ValueError(f"a period is at least 1, got {self.modulus}")

    def render(self, here, depth):
        return f"{here} ≡ {self.residue % self.modulus} (mod {self.modulus})"


RELATIONS = {"<=": "≤", ">=": "≥", "==": "=", "<": "<", ">": ">"}


@dataclass(frozen=True, eq=False)
class Compare(Bool):
    """A comparison of two linear combinations of counts (constants included)."""

    left: Linear
    relation: str
    right: Linear

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"unknown relation {self.relation!r}; known: {', '.join(RELATIONS)}")

    def render(self, here, depth):
        return f"{self.left.render(here, depth)} {RELATIONS[self.relation]} {self.right.render(here, depth)}"

    def children(self):
        return (self.left, self.right)


@dataclass(frozen=True, eq=False)
class Defined(Bool):
    """A named Boolean operation: a line of its own in the program's readable form."""

    name: str
    body: Bool

    def render(self, here, depth):
        return f"{self.name}({here})"

    def children(self):
        return (self.body,)


# -- count-valued operations -------------------------------------------------------------------------
class Counted:
    """A count-valued operation C(i); `+`, `-`, integer `*` and the comparisons build on it."""

    def __add__(self, other) -> Linear:
        return _linear(self).plus(_linear(other), 1)

    def __radd__(self, other) -> Linear:
        return _linear(other).plus(_linear(self), 1)

    def __sub__(self, other) -> Linear:
        return _linear(self).plus(_linear(other), -1)

    def __rsub__(self, other) -> Linear:
        return _linear(other).plus(_linear(self), -1)

    def __mul__(self, factor: int) -> Linear:
        return _linear(self).times(factor)

    __rmul__ = __mul__

    def __ge__(self, other) -> Compare:
        return Compare(_linear(self), ">=", _linear(other))

    def __le__(self, other) -> Compare:
        return Compare(_linear(self), "<=", _linear(other))

    def __gt__(self, other) -> Compare:
        return Compare(_linear(self), ">", _linear(other))

    def __lt__(self, other) -> Compare:
        return Compare(_linear(self), "<", _linear(other))

    def __eq__(self, other) -> Compare:  # builds an operation; identity is what hashing uses
        return Compare(_linear(self), "==", _linear(other))

    __hash__ = object.__hash__

    def render(self, here: str, depth: int) -> str:
        raise NotImplementedError

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Match:
    """The symbol condition x_{j−inner} = x_{i−outer} of a count at i over positions j."""

    inner: int = 0
    outer: int = 0

    def __post_init__(self):
        if self.inner < 0 or self.outer < 0:
            raise ValueError(f"a match looks back, never ahead (causal); got {self}")


@dataclass(frozen=True, eq=False)
class Count(Counted):
    """#[j ≤ i, ψ(i, j)] P(j): ψ is ⊤ (distance None) or the local relation j = i − distance;
    `match` adds the condition x_{j−inner} = x_{i−outer} (sugar, see the module docstring)."""

    predicate: Bool
    distance: int | None = None
    match: Match | None = None

    def __post_init__(self):
        if self.distance is not None and self.distance < 0:
            raise ValueError(f"a count looks back, never ahead (causal); got distance={self.distance}")

    def render(self, here, depth):
        inner = POSITION_NAMES[depth + 1]
        relation = f"{inner} ≤ {here}" + ("" if self.distance is None else f", {inner} = {_position(here, self.distance)}")
        conditions = []
        if self.match is not None:
            conditions.append(f"{_symbol_at(inner, self.match.inner)} = {_symbol_at(here, self.match.outer)}")
        if not isinstance(self.predicate, Top) or not conditions:
            conditions.append(_grouped(self.predicate, inner, depth + 1, Or))
        body = " ∧ ".join(conditions)
        return f"#[{relation}]({body})"

    def children(self):
        return (self.predicate,)


@dataclass(frozen=True, eq=False)
class Conditional(Counted):
    """P(i) ? C1(i) : C2(i)."""

    condition: Bool
    if_true: Counted
    if_false: Counted

    def render(self, here, depth):
        return (f"({self.condition.render(here, depth)} ? {self.if_true.render(here, depth)} : "
                f"{self.if_false.render(here, depth)})")

    def children(self):
        return (self.condition, self.if_true, self.if_false)


@dataclass(frozen=True, eq=False)
class Linear(Counted):
    """Σ coefficient · C(i) + constant, integer coefficients."""

    terms: tuple = ()  # (coefficient, Counted) pairs
    constant: int = 0

    def plus(self, other: Linear, sign: int) -> Linear:
        return Linear(self.terms + tuple((sign * c, t) for c, t in other.terms), self.constant + sign * other.constant)

    def times(self, factor: int) -> Linear:
        if not isinstance(factor, int):
            raise TypeError(f"counts are scaled by integers, got {factor!r}")
        return Linear(tuple((factor * c, t) for c, t in self.terms), factor * self.constant)

    def render(self, here, depth):
        parts = []
        for coefficient, term in self.terms:
            text = term.render(here, depth)
            size = abs(coefficient)
            parts.append(("−" if coefficient < 0 else "+", text if size == 1 else f"{size}·{text}"))
        if self.constant or not parts:
            parts.append(("−" if self.constant < 0 else "+", str(abs(self.constant))))
        first_sign, first = parts[0]
        return ("−" if first_sign == "−" else "") + first + "".join(f" {s} {t}" for s, t in parts[1:])

    def children(self):
        return tuple(t for _, t in self.terms)


def _linear(value) -> Linear:
    if isinstance(value, Linear):
        return value
    if isinstance(value, Counted):
        return Linear(((1, value),))
    if isinstance(value, int) and not isinstance(value, bool):
        return Linear((), value)
    raise TypeError(f"not a count or an integer: {value!r}")


# -- programs ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Program:
    """NEXT_a(i) for every a ∈ Σ: at the last position of a prefix, the next symbol is the a whose
    NEXT_a holds; generation ends where none holds (App. A.1). Uniform in Σ: the alphabet is given
    when the program runs."""

    name: str
    next: Bool
    summary: str = field(default="")

    def definitions(self) -> list[Defined]:
        """The named operations NEXT_a uses, each after the ones it uses."""
        ordered, seen = [], set()

        def visit(node):
            if id(node) in seen:
                return
            seen.add(id(node))
            for child in node.children():
                visit(child)
            if isinstance(node, Defined):
                ordered.append(node)

        visit(self.next)
        return ordered

    def lines(self) -> list[str]:
        """The program as the paper writes one: a line per named operation, then NEXT_a."""
        lines = [f"{d.name}(i) := {d.body.render('i', 0)}" for d in self.definitions()]
        return lines + [f"NEXT_a(i) := {self.next.render('i', 0)}"]

    def __str__(self) -> str:
        return "; ".join(self.lines())
