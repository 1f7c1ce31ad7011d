"""C-RASP[pos] is typed: a Boolean where a Boolean belongs, a count where a count belongs, integers
where integers belong. Ill-typed programs are refused with one message naming the operation, the
operand and the sort expected and found, at construction and again at every entry point (for trees
built around the constructors); well-typed random programs agree with a reference evaluator written
here from the definitions (Jobanputra, Veitsman, et al., NeurIPS 2025, App. A.1), not from the
interpreter's arrays."""

import dataclasses
import operator
import re

import numpy as np
import pytest

from lengthgen.theory import (
    AMBIGUOUS,
    NEXT,
    NONE,
    SEPARATOR,
    And,
    Compare,
    Conditional,
    Count,
    Defined,
    IllTyped,
    Is,
    Linear,
    Match,
    Not,
    Or,
    Periodic,
    Program,
    Top,
    check_types,
    evaluate,
    generate,
    next_symbols,
)
from lengthgen.theory.operations import Marker
from lengthgen.theory.plain import expand, expand_program, is_plain

C = Count(Top())  # #[j ≤ i] ⊤, the position

# (what builds it, the exact message)
REFUSED = [
    # the programs: parity by a bitwise AND, i(i+1)/2 by a count of counts
    (lambda: Top() & Count(Is(1)), "And expects Boolean operands; its right operand Count(Is(1)) is a count"),
    (lambda: Count(Count(Top())), "Count expects a Boolean predicate; its predicate Count(Top()) is a count"),
    (lambda: Linear(((0.5, C),)), "Linear expects integer coefficients; term 1's coefficient 0.5 is a float"),
    # the connectives, by operator and by constructor
    (lambda: Is(0) & Count(Is(1)) >= 1,  # & binds before >=: (Is(0) & Count(Is(1))) >= 1
     "And expects Boolean operands; its right operand Count(Is(1)) is a count"),
    (lambda: Count(Is(0)) & Top(), "And expects Boolean operands; its left operand Count(Is(0)) is a count"),
    (lambda: True & Top(), "And expects Boolean operands; its left operand True is a Python bool"),
    (lambda: Top() | 1, "Or expects Boolean operands; its right operand 1 is an integer"),
    (lambda: C | Is(0), "Or expects Boolean operands; its left operand Count(Top()) is a count"),
    (lambda: Or((Top(), Is(0), C)), "Or expects Boolean operands; its operand 3 Count(Top()) is a count"),
    (lambda: And(()), "And expects at least one operand; it has none"),
    (lambda: And([Top()]), "And expects a tuple of Boolean operands; its operands are [Top()], a list"),
    (lambda: ~C, "Not expects a Boolean operand; its operand Count(Top()) is a count"),
    (lambda: Not(2), "Not expects a Boolean operand; its operand 2 is an integer"),
    (lambda: Top() ^ Is(0), "C-RASP[pos] has no ^; write (p & ~q) | (~p & q) (operands Top(), Is(0))"),
    # symbols, offsets, periods
    (lambda: Is(1.0), "Is expects a symbol (an integer, NEXT or SEPARATOR); its symbol 1.0 is a float"),
    (lambda: Is(Marker("b", "B")), "Is expects a symbol (an integer, NEXT or SEPARATOR); its symbol B is a Marker"),
    (lambda: Is(0, back=True), "Is expects an integer back; its back True is a Python bool"),
    (lambda: Is(NEXT, back=1.0), "Is expects an integer back; its back 1.0 is a float"),
    (lambda: Periodic(2.0, 1), "Periodic expects an integer modulus; its modulus 2.0 is a float"),
    (lambda: Periodic(2, np.float64(1)), "Periodic expects an integer residue; its residue np.float64(1.0) is a float64"),
    # comparisons
    (lambda: C >= 1.5, "Compare (>=) expects count or integer operands; its right operand 1.5 is a float"),
    (lambda: C <= Is(0), "Compare (<=) expects count or integer operands; its right operand Is(0) is a Boolean"),
    (lambda: Top() < C, "Compare (<) expects count or integer operands; its left operand Top() is a Boolean"),
    (lambda: C > "1", "Compare (>) expects count or integer operands; its right operand '1' is a str"),
    (lambda: Top() == Is(0), "Compare (==) expects count or integer operands; its left operand Top() is a Boolean"),
    (lambda: C != Is(0), "Compare (!=) expects count or integer operands; its right operand Is(0) is a Boolean"),
    (lambda: C == True, "Compare (==) expects count or integer operands; its right operand True is a Python bool"),  # noqa: E712
    (lambda: Compare(C, "<=", 1), "Compare expects count operands; its right operand 1 is an integer"),
    (lambda: Compare(Is(0), "<=", C), "Compare expects count operands; its left operand Is(0) is a Boolean"),
    (lambda: Compare(C, 1, C), "Compare expects a relation (<=, >=, ==, <, >); its relation 1 is an integer"),
    # named operations and programs
    (lambda: Defined(3, Top()), "Defined expects a str name; its name 3 is an integer"),
    (lambda: Defined("X", C), "Defined expects a Boolean body; its body Count(Top()) is a count"),
    (lambda: Program("p", C), "Program expects a Boolean next (NEXT_a); its next Count(Top()) is a count"),
    (lambda: Program("p", Top(), None), "Program expects a str summary; its summary is None"),
    # counts
    (lambda: Count(C >= 1, distance=1.0), "Count expects an integer distance (or None); its distance 1.0 is a float"),
    (lambda: Count(Top(), match=(0, 0)), "Count expects a Match (or None); its match (0, 0) is a tuple"),
    (lambda: Count(Top(), match=Match(True, 0)), "Match expects an integer inner; its inner True is a Python bool"),
    (lambda: Count(Top(), match=Match(0, 0.0)), "Match expects an integer outer; its outer 0.0 is a float"),
    (lambda: Conditional(C, C, Linear()), "Conditional expects a Boolean condition; its condition Count(Top()) is a count"),
    (lambda: Conditional(Top(), Is(0), C), "Conditional expects count branches; its if_true branch Is(0) is a Boolean"),
    (lambda: Conditional(Top(), C, 0), "Conditional expects count branches; its if_false branch 0 is an integer"),
    # linear combinations, by operator and by constructor
    (lambda: C + Is(0), "Linear (+) expects count or integer operands; its right operand Is(0) is a Boolean"),
    (lambda: Top() + 1, "Linear (+) expects count or integer operands; its left operand Top() is a Boolean"),
    (lambda: 0.5 + C, "Linear (+) expects count or integer operands; its left operand 0.5 is a float"),
    (lambda: C - Periodic(2, 0), "Linear (-) expects count or integer operands; its right operand Periodic(2, 0) is a "
                                 "Boolean"),
    (lambda: False - C, "Linear (-) expects count or integer operands; its left operand False is a Python bool"),
    (lambda: -Is(0), "Linear (-) expects a count operand; its operand Is(0) is a Boolean"),
    (lambda: C * C, "Linear (*) expects a count and an integer; its right operand Count(Top()) is a count"),
    (lambda: 2 * Top(), "Linear (*) expects a count and an integer; its right operand Top() is a Boolean"),
    (lambda: 0.5 * C, "Linear (*) expects a count and an integer; its left operand 0.5 is a float"),
    (lambda: C * True, "Linear (*) expects a count and an integer; its right operand True is a Python bool"),
    (lambda: C % 2, "C-RASP[pos] has no division or modulus of counts (Count(Top()) by 2): parity, for one, is beyond "
                    "it; a period of positions is Periodic(m, r)"),
    (lambda: Linear([(1, C)]), "Linear expects a tuple of (coefficient, count) terms; its terms are "
                               "[(1, Count(Top()))], a list"),
    (lambda: Linear((C,)), "Linear expects (coefficient, count) pairs; its term 1 Count(Top()) is a count"),
    (lambda: Linear(((1, C), (1, Is(0)))), "Linear expects count terms; term 2's count Is(0) is a Boolean"),
    (lambda: Linear(((True, C),)), "Linear expects integer coefficients; term 1's coefficient True is a Python bool"),
    (lambda: Linear(constant=1.5), "Linear expects an integer constant; its constant 1.5 is a float"),
    # dataclasses.replace goes through the constructor
    (lambda: dataclasses.replace(Count(Top()), predicate=C), "Count expects a Boolean predicate; its predicate "
                                                              "Count(Top()) is a count"),
]


@pytest.mark.parametrize("build, message", REFUSED, ids=[m.split(";")[0] + f" #{k}" for k, (_, m) in enumerate(REFUSED)])
def test_an_ill_typed_operation_is_refused_with_its_message(build, message):
    with pytest.raises(IllTyped) as refused:
        build()
    assert str(refused.value) == message
    assert isinstance(refused.value, TypeError)


def test_an_operation_has_no_python_truth_value():
    """`if op:`, `not op`, `a and b` and the chain a < b < c (which Python reads as (a < b) and (b < c))
    would each read an operation as True; every one is refused."""
    at_least_one = C >= 1
    truth = re.escape(f"{at_least_one!r} has no Python truth value")
    for use in [lambda: bool(at_least_one), lambda: not at_least_one, lambda: at_least_one and Top(),
                lambda: 1 < C < 3, lambda: C if Top() else C, lambda: Count(Is(0)) in [C]]:
        with pytest.raises(IllTyped, match="has no Python truth value"):
            use()
    with pytest.raises(IllTyped, match=truth):
        bool(at_least_one)


def test_the_operators_build_typed_operations():
    """Integers (Python or numpy) join counts; != is ¬(=); unary minus and reflected operators scale."""
    assert repr(np.int64(2) * C - 1) == "Linear(terms=((np.int64(2), Count(Top())),), constant=np.int64(-1))"
    assert repr(C != 1) == "Not(Compare(Linear(terms=((1, Count(Top())),)), '==', Linear(constant=1)))"
    assert repr(-C + 3) == "Linear(terms=((-1, Count(Top())),), constant=3)"
    assert repr(1 <= C) == "Compare(Linear(terms=((1, Count(Top())),)), '>=', Linear(constant=1))"
    assert repr(Is(0) & ~Is(NEXT, back=1) | Periodic(2, 1)) == (
        "Or((And((Is(0), Not(Is(NEXT, back=1)))), Periodic(2, 1)))")
    assert repr(Count(Is(SEPARATOR), distance=np.int32(1), match=Match(1, 0))) == (
        "Count(Is(SEPARATOR), distance=np.int32(1), match=Match(inner=1, outer=0))")
    values = evaluate(np.int64(2) * Count(Is(0)) - 1 != C, np.array([[0, 1, 0]]), 2)[0].tolist()
    assert values == [False, True, False]  # 2·#Q_0 − 1 = 1, 1, 3 against i = 1, 2, 3


def test_the_values_out_of_range_stay_value_errors():
    for build, message in [(lambda: Is(0, back=-1), "Is looks back"), (lambda: Periodic(0, 0), "a period is at least 1"),
                           (lambda: Count(Top(), distance=-1), "a count looks back"),
                           (lambda: Compare(C, "!=", C), "unknown relation '!='")]:
        with pytest.raises(ValueError, match=message):
            build()


# -- trees built around the constructors ----------------------------------------------------------------
def around(cls, **values):
    """An operation made without its constructor, as object.__new__ and object.__setattr__ allow."""
    node = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(node, name, value)
    return node


PARITY = around(And, operands=(Top(), Count(Is(1))))  # evaluates as count mod 2 if let through
TRIANGLE = around(Count, predicate=Count(Top()))  # i(i+1)/2 if let through


def program(next_a):
    return Program("p", next_a)


ENTRY_POINTS = [
    ("evaluate", lambda node: evaluate(node, np.array([[0, 1, 1]]), 2)),
    ("is_plain", is_plain),
    ("expand", lambda node: expand(node, 2)),
    ("check_types", check_types),
    ("next_symbols", lambda node: next_symbols(program(node), [[0, 1]], 2)),
    ("generate", lambda node: generate(program(node), [0, 1], 2, limit=3)),
    ("expand_program", lambda node: expand_program(program(node), 2)),
]


@pytest.mark.parametrize("entry, run", ENTRY_POINTS, ids=[e for e, _ in ENTRY_POINTS])
def test_every_entry_point_refuses_a_tree_built_around_the_constructors(entry, run):
    with pytest.raises(IllTyped) as refused:
        run(PARITY)
    assert str(refused.value) == "And expects Boolean operands; its right operand Count(Is(1)) is a count"
    deep = Is(0) | Not(TRIANGLE >= 1)  # the constructors see a Count; only the recheck sees inside it
    with pytest.raises(IllTyped, match=re.escape("Count expects a Boolean predicate; its predicate Count(Top()) "
                                                 "is a count")):
        run(deep)


def test_the_recheck_covers_mutation_missing_fields_foreign_nodes_and_cycles():
    mutated = Count(Is(0)) >= 1
    object.__setattr__(mutated.left.terms[0][1], "distance", 1.5)
    with pytest.raises(IllTyped, match=r"^Count expects an integer distance \(or None\); its distance 1.5 is a float$"):
        evaluate(mutated, np.array([[0]]), 1)
    with pytest.raises(IllTyped, match=r"^Not has no operand \(built without its constructor\?\)$"):
        is_plain(object.__new__(Not))

    class Parity(Top):  # evaluates nowhere: the interpreter has no rule for it
        pass

    with pytest.raises(IllTyped, match=r"^check_types expects a Program or a C-RASP\[pos\] operation \(Top, Is, .*\); "
                                       r"its node Parity\(\) is a Parity$"):
        evaluate(Is(0) & Parity(), np.array([[0]]), 1)
    loop = around(Not)
    object.__setattr__(loop, "operand", loop)
    with pytest.raises(IllTyped, match=r"^Not\(\.\.\.\) contains itself: a C-RASP\[pos\] program is a finite tree$"):
        check_types(loop)
    with pytest.raises(IllTyped, match="its next is None"):
        check_types(around(Program, name="p", summary=""))


def test_the_tasks_programs_and_shared_nodes_pass_the_recheck():
    from lengthgen.tasks import TASKS

    for task in TASKS.values():
        if task.program is not None:
            assert check_types(task.program) is task.program
            assert all(is_plain(check_types(p)) for p in expand_program(task.program, 3).values())
    shared = Is(0) & (Count(Is(1)) >= 1)
    assert check_types(shared | shared) is not None


# -- well-typed random programs against a reference evaluator ---------------------------------------------
RELATION = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "<": operator.lt, ">": operator.gt}


def reference(node, x, i, a, n, memo):
    """The value of `node` at position i (from 1) of string x, output symbol a, alphabet size n (the
    separator is n), straight from Definition 3: a count is a sum over j ≤ i, one position at a time."""
    key = (id(node), i, a)
    if key in memo:
        return memo[key]

    def at(p):  # x_p, None before the start
        return x[p - 1] if p >= 1 else None

    def value(child, position=i):
        return reference(child, x, position, a, n, memo)

    kind = type(node)
    if kind is Top:
        result = True
    elif kind is Is:
        symbol = a if node.symbol is NEXT else n if node.symbol is SEPARATOR else node.symbol
        result = at(i - node.back) == symbol
    elif kind is Not:
        result = not value(node.operand)
    elif kind is And:
        result = all(value(o) for o in node.operands)
    elif kind is Or:
        result = any(value(o) for o in node.operands)
    elif kind is Periodic:
        result = i % node.modulus == node.residue % node.modulus
    elif kind is Compare:
        result = RELATION[node.relation](value(node.left), value(node.right))
    elif kind is Defined:
        result = value(node.body)
    elif kind is Count:
        result = 0
        for j in range(1, i + 1):
            if node.distance is not None and j != i - node.distance:
                continue
            if node.match is not None:
                key_symbol, query_symbol = at(j - node.match.inner), at(i - node.match.outer)
                if key_symbol is None or key_symbol != query_symbol:
                    continue
            result += bool(value(node.predicate, j))
    elif kind is Conditional:
        result = value(node.if_true) if value(node.condition) else value(node.if_false)
    elif kind is Linear:
        result = sum(int(c) * value(t) for c, t in node.terms) + int(node.constant)
    else:
        raise AssertionError(f"not an operation: {node!r}")
    memo[key] = result
    return result


class Random:
    """Random well-typed operations: every constructor and operator, symbols, markers, offsets,
    matches and numpy integers, nested a few levels."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def pick(self, *options):
        return options[self.rng.integers(len(options))]

    def integer(self, low, high):
        value = int(self.rng.integers(low, high + 1))
        return np.int64(value) if self.rng.random() < 0.2 else value

    def boolean(self, depth):
        leaves = ["top", "is", "periodic"]
        kind = self.pick(*leaves, *(["not", "and", "or", "compare", "compare", "defined", "ne"] if depth > 0 else []))
        if kind == "top":
            return Top()
        if kind == "is":
            return Is(self.pick(0, 1, 2, NEXT, NEXT, SEPARATOR), back=self.integer(0, 2))
        if kind == "periodic":
            return Periodic(self.integer(1, 3), self.integer(-1, 3))
        if kind == "not":
            return ~self.boolean(depth - 1)
        if kind in ("and", "or"):
            operands = tuple(self.boolean(depth - 1) for _ in range(self.rng.integers(2, 4)))
            if self.rng.random() < 0.5:
                return (And if kind == "and" else Or)(operands)
            result = operands[0]
            for o in operands[1:]:
                result = result & o if kind == "and" else result | o
            return result
        if kind == "defined":
            return Defined("D", self.boolean(depth - 1))
        left, right = self.count(depth - 1), self.pick(self.count(depth - 1), self.integer(-1, 3))
        if kind == "ne":
            return left != right
        relation = self.pick(*RELATION)
        if self.rng.random() < 0.3:
            return Compare(left, relation, right if not isinstance(right, (int, np.integer)) else Linear((), right))
        return RELATION[relation](left, right)

    def next_a(self):
        """NEXT_a: any Boolean, or one that singles out an a as the tasks' programs do (the one-hot paths)."""
        guard = Is(NEXT, back=self.integer(0, 2))
        return self.pick(
            self.boolean(3),
            self.boolean(2) & guard,
            Count(guard & self.boolean(1), match=Match(self.integer(0, 2), self.integer(0, 1))) >= self.integer(1, 2),
            self.boolean(1) & (Count(guard, distance=self.pick(None, self.integer(1, 2))) > self.count(1)))

    def count(self, depth):
        kind = self.pick("count", "count", *(["conditional", "linear", "operators"] if depth > 0 else []))
        if kind == "count":
            distance = self.pick(None, None, self.integer(0, 2))
            match = self.pick(None, Match(self.integer(0, 2), self.integer(0, 2)))
            return Count(self.boolean(max(depth - 1, 0)), distance=distance, match=match)
        if kind == "conditional":
            return Conditional(self.boolean(depth - 1), self.count(depth - 1), self.count(depth - 1))
        if kind == "linear":
            terms = tuple((self.integer(-2, 2), self.count(depth - 1)) for _ in range(self.rng.integers(0, 3)))
            return Linear(terms, self.integer(-2, 2))
        left, right = self.count(depth - 1), self.count(depth - 1)
        return self.pick(left + right, left - 1, 2 - right, self.integer(-2, 2) * left, -left, left * 3)


def nodes(root):
    seen, out = set(), []

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
            for child in node.children():
                visit(child)

    visit(root)
    return out


ALPHABET = 3  # symbols 0, 1, 2; 3 is the separator


def test_random_well_typed_programs_agree_with_the_reference_evaluator():
    """60 random programs (seed fixed): every operation of each evaluated on a batch against the
    reference, NEXT_a read by next_symbols on strings of several lengths, and the program written out
    per output symbol (plain C-RASP[pos]) against the reference too."""
    make = Random(31)
    rng = np.random.default_rng(32)
    strings = rng.integers(0, ALPHABET + 1, size=(12, 7))
    ragged = [list(rng.integers(0, ALPHABET + 1, size=k)) for k in (0, 1, 2, 5, 9)]
    checked = 0
    for k in range(60):
        program = Program(f"random {k}", make.next_a())
        memos = [{} for _ in range(len(strings))]
        for node in nodes(program.next):
            got = evaluate(node, strings, ALPHABET)
            got = np.broadcast_to(got[..., None] if got.ndim == 2 else got, strings.shape + (ALPHABET,))
            want = [[[reference(node, list(s), i, a, ALPHABET, memos[r]) for a in range(ALPHABET)]
                     for i in range(1, strings.shape[1] + 1)] for r, s in enumerate(strings)]
            assert got.tolist() == want, (k, node)
            checked += 1
        plain = expand_program(program, ALPHABET)
        assert all(is_plain(p) for p in plain.values())
        written_out = np.stack([evaluate(plain[a], strings, ALPHABET) for a in range(ALPHABET)], axis=-1)
        want = [[[reference(program.next, list(s), i, a, ALPHABET, memos[r]) for a in range(ALPHABET)]
                 for i in range(1, strings.shape[1] + 1)] for r, s in enumerate(strings)]
        assert written_out.tolist() == want, k
        for string, got in zip(ragged, next_symbols(program, ragged, ALPHABET)):
            memo = {}
            expected = []
            for i in range(1, len(string) + 1):
                holding = [a for a in range(ALPHABET) if reference(program.next, string, i, a, ALPHABET, memo)]
                expected.append(NONE if not holding else holding[0] if len(holding) == 1 else AMBIGUOUS)
            assert got.tolist() == expected, (k, string)
    assert checked > 400  # the programs are not trivially small
