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

import numbers
import reprlib
from dataclasses import MISSING, dataclass, field, fields

POSITION_NAMES = "ijklmn"
SHOWN = 120  # the longest operand a message writes out in full


class IllTyped(TypeError):
    """An operation given an operand of the wrong sort (a count where a Boolean belongs, or the other
    way round) or a non-integer where an integer belongs. C-RASP[pos] has no such program, and the
    interpreter would run one anyway and compute what no C-RASP[pos] program can: ⊤ ∧ #[j ≤ i] Q_1(j)
    as numpy's bitwise AND is the count's parity, #[j ≤ i] #[k ≤ j] ⊤ is i(i+1)/2."""


class Marker:
    """A symbol a program names without knowing the alphabet: the output symbol or the separator."""

    def __init__(self, name: str, constant: str):
        self.name, self.constant = name, constant  # as the paper writes it, as Python does

    def __repr__(self) -> str:
        return self.constant


NEXT = Marker("a", "NEXT")  # the a of NEXT_a
SEPARATOR = Marker("⟨sep⟩", "SEPARATOR")


def _position(name: str, back: int) -> str:
    return name if back == 0 else f"{name}−{back}"


def _symbol_at(name: str, back: int) -> str:
    return f"x_{name}" if back == 0 else f"x_{{{_position(name, back)}}}"


def _symbol_name(symbol) -> str:
    return symbol.name if isinstance(symbol, Marker) else f"s{symbol}"


# -- sorts -------------------------------------------------------------------------------------------
def is_integer(value) -> bool:
    """A Python or numpy integer. Not a bool: True as a coefficient or an offset is a slip, not a 1."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _sort(value) -> str:
    """What `value` is, in the words of the messages: its sort if it is an operation."""
    if isinstance(value, Bool):
        return "a Boolean"
    if isinstance(value, Counted):
        return "a count"
    if isinstance(value, bool):
        return "a Python bool"
    if is_integer(value):
        return "an integer"
    name = type(value).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def _refuse(operation: str, expected: str, subject: str, value):
    """Raise the one message of a refusal: the operation, what it expects, and what it got instead."""
    found = "is None" if value is None else f"{_show(value)} is {_sort(value)}"
    raise IllTyped(f"{operation} expects {expected}; {subject} {found}")


def _side(k: int, count: int) -> str:
    return {1: "its operand"}.get(count) or (("its left operand", "its right operand")[k] if count == 2
                                             else f"its operand {k + 1}")


def _integer(operation: str, name: str, value) -> None:
    if not is_integer(value):
        _refuse(operation, f"an integer {name}", f"its {name}", value)


def _of_sort(sort: type, operation: str, expected: str, subject: str, value) -> None:
    if not isinstance(value, sort):
        _refuse(operation, expected, subject, value)


class Operation:
    """What Boolean and count operations share. Python's operators build typed operations or raise
    IllTyped; no operation has a Python truth value (`if op:`, `a < b < c` and `and` would silently
    read one as True); equality builds C1 = C2, so hashing is by identity."""

    __array_ufunc__ = None  # numpy scalars defer to the operators below (np.int64(2) * count)
    __hash__ = object.__hash__

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """Refuse fields of the wrong sort (IllTyped) or out of range (ValueError); check_types reruns it."""

    def _get(self, name: str):
        """A field's value; IllTyped for a node built without its constructor and never given it."""
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            raise IllTyped(f"{type(self).__name__} has no {name} (built without its constructor?)") from None

    def children(self) -> tuple:
        return ()

    def render(self, here: str, depth: int) -> str:
        raise NotImplementedError

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        """The constructor call that builds it, fields at their defaults left out: Count(Is(1))."""
        parts = []
        for spec in fields(self):
            value = getattr(self, spec.name, MISSING)
            if value is MISSING:
                parts.append(f"{spec.name}=?")
            elif spec.default is MISSING:
                parts.append(repr(value))
            elif not (value is spec.default or (type(value) is type(spec.default) and value == spec.default)):
                parts.append(f"{spec.name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __bool__(self):
        raise IllTyped(f"{_show(self)} has no Python truth value: it has a value at every position (combine "
                       f"Booleans with &, | and ~, write a < b < c as (a < b) & (b < c), and run it with evaluate)")

    # Boolean connectives: And, Or and Not check their operands' sorts.
    def __and__(self, other) -> And:
        return And((self, other))

    def __rand__(self, other) -> And:
        return And((other, self))

    def __or__(self, other) -> Or:
        return Or((self, other))

    def __ror__(self, other) -> Or:
        return Or((other, self))

    def __xor__(self, other):
        raise IllTyped(f"C-RASP[pos] has no ^; write (p & ~q) | (~p & q) (operands {_show(self)}, {_show(other)})")

    __rxor__ = __xor__

    def __invert__(self) -> Not:
        return Not(self)

    # Integer linear combinations of counts.
    def __add__(self, other) -> Linear:
        return _sum("+", self, other, 1)

    def __radd__(self, other) -> Linear:
        return _sum("+", other, self, 1)

    def __sub__(self, other) -> Linear:
        return _sum("-", self, other, -1)

    def __rsub__(self, other) -> Linear:
        return _sum("-", other, self, -1)

    def __neg__(self) -> Linear:
        _of_sort(Counted, "Linear (-)", "a count operand", "its operand", self)
        return _scaled(self, -1, "right")

    def __mul__(self, other) -> Linear:
        return _scaled(self, other, "right")

    def __rmul__(self, other) -> Linear:
        return _scaled(self, other, "left")

    def _no_division(self, other):
        raise IllTyped(f"C-RASP[pos] has no division or modulus of counts ({_show(self)} by {_show(other)}): "
                       f"parity, for one, is beyond it; a period of positions is Periodic(m, r)")

    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _no_division

    # Comparisons build Compare; != is ¬(C1 = C2).
    def __le__(self, other) -> Compare:
        return _compare(self, "<=", other)

    def __ge__(self, other) -> Compare:
        return _compare(self, ">=", other)

    def __lt__(self, other) -> Compare:
        return _compare(self, "<", other)

    def __gt__(self, other) -> Compare:
        return _compare(self, ">", other)

    def __eq__(self, other) -> Compare:
        return _compare(self, "==", other)

    def __ne__(self, other) -> Not:
        return Not(_compare(self, "==", other, written="!="))


def _operand(operation: str, subject: str, value) -> Linear:
    """A count or an integer as the linear combination it is; IllTyped for anything else."""
    if isinstance(value, Linear):
        return value
    if isinstance(value, Counted):
        return Linear(((1, value),))
    if is_integer(value):
        return Linear((), value)
    _refuse(operation, "count or integer operands", subject, value)


def _sum(written: str, left, right, sign: int) -> Linear:
    operation = f"Linear ({written})"
    left, right = _operand(operation, "its left operand", left), _operand(operation, "its right operand", right)
    return Linear(left.terms + tuple((sign * c, t) for c, t in right.terms), left.constant + sign * right.constant)


def _scaled(count, factor, factor_side: str) -> Linear:
    """count · factor: a count times an integer (a count times a count is not linear)."""
    count_side = "left" if factor_side == "right" else "right"
    _of_sort(Counted, "Linear (*)", "a count and an integer", f"its {count_side} operand", count)
    if not is_integer(factor):
        _refuse("Linear (*)", "a count and an integer", f"its {factor_side} operand", factor)
    linear = _operand("Linear (*)", f"its {count_side} operand", count)
    return Linear(tuple((factor * c, t) for c, t in linear.terms), factor * linear.constant)


def _compare(left, relation: str, right, written: str | None = None) -> Compare:
    operation = f"Compare ({written or relation})"
    return Compare(_operand(operation, "its left operand", left), relation,
                   _operand(operation, "its right operand", right))


_operation = dataclass(frozen=True, eq=False, repr=False)  # equality builds operations; identity hashes


# -- Boolean operations ------------------------------------------------------------------------------
class Bool(Operation):
    """A Boolean-valued operation P(i); `&`, `|` and `~` combine them."""


@_operation
class Top(Bool):
    """⊤, true everywhere."""

    def render(self, here, depth):
        return "⊤"


@_operation
class Is(Bool):
    """x_{i−back} = symbol (false where i − back is before the start); back 0 is Q_symbol(i)."""

    symbol: object  # an alphabet index, NEXT or SEPARATOR
    back: int = 0

    def check(self):
        symbol, back = self._get("symbol"), self._get("back")
        if not (symbol is NEXT or symbol is SEPARATOR or is_integer(symbol)):
            _refuse("Is", "a symbol (an integer, NEXT or SEPARATOR)", "its symbol", symbol)
        _integer("Is", "back", back)
        if back < 0:
            raise ValueError(f"Is looks back, never ahead (causal); got back={back}")

    def render(self, here, depth):
        return f"{_symbol_at(here, self.back)} = {_symbol_name(self.symbol)}"


@_operation
class Not(Bool):
    operand: Bool

    def check(self):
        _of_sort(Bool, "Not", "a Boolean operand", "its operand", self._get("operand"))

    def render(self, here, depth):
        inner = self.operand.render(here, depth)
        return f"¬{inner}" if isinstance(self.operand, (Top, Defined)) else f"¬({inner})"

    def children(self):
        return (self.operand,)


class _Connective(Bool):
    """∧ or ∨ of one or more Boolean operands."""

    def check(self):
        name, operands = type(self).__name__, self._get("operands")
        if not isinstance(operands, tuple):
            raise IllTyped(f"{name} expects a tuple of Boolean operands; its operands are {_show(operands)}, "
                           f"{_sort(operands)}")
        if not operands:
            raise IllTyped(f"{name} expects at least one operand; it has none")
        for k, operand in enumerate(operands):
            _of_sort(Bool, name, "Boolean operands", _side(k, len(operands)), operand)

    def children(self):
        return self.operands


@_operation
class And(_Connective):
    operands: tuple

    def render(self, here, depth):
        return " ∧ ".join(_grouped(o, here, depth, Or) for o in self.operands)


@_operation
class Or(_Connective):
    operands: tuple

    def render(self, here, depth):
        return " ∨ ".join(_grouped(o, here, depth, And) for o in self.operands)


def _grouped(operand: Bool, here: str, depth: int, looser: type) -> str:
    text = operand.render(here, depth)
    return f"({text})" if isinstance(operand, looser) else text


@_operation
class Periodic(Bool):
    """φ(i) = [i ≡ residue (mod modulus)], positions numbered from 1."""

    modulus: int
    residue: int

    def check(self):
        modulus, residue = self._get("modulus"), self._get("residue")
        _integer("Periodic", "modulus", modulus)
        _integer("Periodic", "residue", residue)
        if modulus < 1:
            raise ValueError(f"a period is at least 1, got {modulus}")

    def render(self, here, depth):
        return f"{here} ≡ {self.residue % self.modulus} (mod {self.modulus})"


RELATIONS = {"<=": "≤", ">=": "≥", "==": "=", "<": "<", ">": ">"}


@_operation
class Compare(Bool):
    """A comparison of two counts (the operators make linear combinations of them, constants included)."""

    left: Counted
    relation: str
    right: Counted

    def check(self):
        left, relation, right = self._get("left"), self._get("relation"), self._get("right")
        _of_sort(Counted, "Compare", "count operands", "its left operand", left)
        if not isinstance(relation, str):
            _refuse("Compare", f"a relation ({', '.join(RELATIONS)})", "its relation", relation)
        if relation not in RELATIONS:
            raise ValueError(f"unknown relation {relation!r}; known: {', '.join(RELATIONS)}")
        _of_sort(Counted, "Compare", "count operands", "its right operand", right)

    def render(self, here, depth):
        return f"{self.left.render(here, depth)} {RELATIONS[self.relation]} {self.right.render(here, depth)}"

    def children(self):
        return (self.left, self.right)


@_operation
class Defined(Bool):
    """A named Boolean operation: a line of its own in the program's readable form."""

    name: str
    body: Bool

    def check(self):
        _of_sort(str, "Defined", "a str name", "its name", self._get("name"))
        _of_sort(Bool, "Defined", "a Boolean body", "its body", self._get("body"))

    def render(self, here, depth):
        return f"{self.name}({here})"

    def children(self):
        return (self.body,)


# -- count-valued operations -------------------------------------------------------------------------
class Counted(Operation):
    """A count-valued operation C(i); `+`, `-`, integer `*` and the comparisons build on it."""


@dataclass(frozen=True)
class Match:
    """The symbol condition x_{j−inner} = x_{i−outer} of a count at i over positions j."""

    inner: int = 0
    outer: int = 0

    def __post_init__(self):
        self.check()

    def check(self):
        _integer("Match", "inner", self.inner)
        _integer("Match", "outer", self.outer)
        if self.inner < 0 or self.outer < 0:
            raise ValueError(f"a match looks back, never ahead (causal); got {self}")


@_operation
class Count(Counted):
    """#[j ≤ i, ψ(i, j)] P(j): ψ is ⊤ (distance None) or the local relation j = i − distance;
    `match` adds the condition x_{j−inner} = x_{i−outer} (sugar, see the module docstring)."""

    predicate: Bool
    distance: int | None = None
    match: Match | None = None

    def check(self):
        predicate, distance, match = self._get("predicate"), self._get("distance"), self._get("match")
        _of_sort(Bool, "Count", "a Boolean predicate", "its predicate", predicate)
        if distance is not None:
            if not is_integer(distance):
                _refuse("Count", "an integer distance (or None)", "its distance", distance)
            if distance < 0:
                raise ValueError(f"a count looks back, never ahead (causal); got distance={distance}")
        if match is not None:
            _of_sort(Match, "Count", "a Match (or None)", "its match", match)
            match.check()

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


@_operation
class Conditional(Counted):
    """P(i) ? C1(i) : C2(i)."""

    condition: Bool
    if_true: Counted
    if_false: Counted

    def check(self):
        _of_sort(Bool, "Conditional", "a Boolean condition", "its condition", self._get("condition"))
        _of_sort(Counted, "Conditional", "count branches", "its if_true branch", self._get("if_true"))
        _of_sort(Counted, "Conditional", "count branches", "its if_false branch", self._get("if_false"))

    def render(self, here, depth):
        return (f"({self.condition.render(here, depth)} ? {self.if_true.render(here, depth)} : "
                f"{self.if_false.render(here, depth)})")

    def children(self):
        return (self.condition, self.if_true, self.if_false)


@_operation
class Linear(Counted):
    """Σ coefficient · C(i) + constant, integer coefficients."""

    terms: tuple = ()  # (coefficient, Counted) pairs
    constant: int = 0

    def check(self):
        terms, constant = self._get("terms"), self._get("constant")
        if not isinstance(terms, tuple):
            raise IllTyped(f"Linear expects a tuple of (coefficient, count) terms; its terms are {_show(terms)}, "
                           f"{_sort(terms)}")
        for k, term in enumerate(terms, 1):
            if not (isinstance(term, tuple) and len(term) == 2):
                _refuse("Linear", "(coefficient, count) pairs", f"its term {k}", term)
            coefficient, count = term
            if not is_integer(coefficient):
                _refuse("Linear", "integer coefficients", f"term {k}'s coefficient", coefficient)
            _of_sort(Counted, "Linear", "count terms", f"term {k}'s count", count)
        _integer("Linear", "constant", constant)

    def plus(self, other: Linear, sign: int) -> Linear:
        return _sum("+" if sign == 1 else "-", self, other, sign)

    def times(self, factor: int) -> Linear:
        return _scaled(self, factor, "right")

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


# -- programs ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Program:
    """NEXT_a(i) for every a ∈ Σ: at the last position of a prefix, the next symbol is the a whose
    NEXT_a holds; generation ends where none holds (App. A.1). Uniform in Σ: the alphabet is given
    when the program runs."""

    name: str
    next: Bool
    summary: str = field(default="")

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        for name in ("name", "summary"):
            _of_sort(str, "Program", f"a str {name}", f"its {name}", getattr(self, name, None))
        _of_sort(Bool, "Program", "a Boolean next (NEXT_a)", "its next", getattr(self, "next", None))

    def children(self) -> tuple:
        return (self.next,)

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


OPERATIONS = (Top, Is, Not, And, Or, Periodic, Compare, Defined, Count, Conditional, Linear)


def check_types(program):
    """Recheck a whole program (a Program or one operation) as the constructors check each node, and
    return it. The constructors' checks alone do not cover a tree built around them (object.__new__,
    object.__setattr__, a subclass of our own), so every entry point that runs a program calls this:
    an ill-typed tree is refused, never computed. A node shared by several parents is checked once; a
    node that contains itself is refused (a program is finite)."""
    done: set[int] = set()
    path: set[int] = set()

    def visit(node):
        if id(node) in done:
            return
        if id(node) in path:
            raise IllTyped(f"{_show(node)} contains itself: a C-RASP[pos] program is a finite tree")
        if type(node) not in OPERATIONS and type(node) is not Program:
            kinds = ", ".join(t.__name__ for t in OPERATIONS)
            raise IllTyped(f"check_types expects a Program or a C-RASP[pos] operation ({kinds}); its node "
                           f"{_show(node)} is a {type(node).__name__}")
        path.add(id(node))
        node.check()
        for child in node.children():
            visit(child)
        path.discard(id(node))
        done.add(id(node))

    visit(program)
    return program
