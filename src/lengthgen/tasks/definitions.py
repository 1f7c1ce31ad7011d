"""The ten synthetic tasks of docs/spec.md §1, as data: one record per task.

Everything that depends on "which task is this" (generator, target rule, theory prediction,
mirror partner) reads these records, so adding a task means adding one entry here (or, from outside
the package, one `register_task` call in an extension file: `extensions.py`). A task is
expressible when its record holds its C-RASP[pos] program (`programs.py`), which the workflow's
theory check runs on every example of the run; a task without one gives the paper's reason.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..theory import Program
from . import programs
from .generators import get_generator


@dataclass(frozen=True)
class Task:
    name: str
    family: str  # "retrieval" | "copying"
    direction: str  # "right" | "left" (retrieval), "forward" | "backward" (copying)
    unique: bool  # query occurs once / all symbols distinct
    occurrence: str | None  # "first" | "last" for non-unique retrieval, else None
    mirror: str  # the task with the same inputs and the opposite direction
    generator: str  # its input generator's record (generators.py); tasks sharing it share their inputs
    reason: str  # one line: why the theory predicts what it does (for a task without a program, the paper's proof)
    program: Program | None = None  # its C-RASP[pos] program; None: the paper proves there is none

    @property
    def induction(self) -> bool:
        """True for the right/forward (induction) direction, False for anti-induction."""
        return self.direction in ("right", "forward")

    @property
    def expressible(self) -> bool:
        """Has a C-RASP[pos] program: what the theory predicts to length-generalise (the one name
        of that fact in the code and the tables)."""
        return self.program is not None


_PREFIX = "the count of q up to here is 1 marks the first occurrence"
# The paper's proofs that no program exists (Jobanputra, Veitsman, et al., NeurIPS 2025, App. A.2).
_LAST = ("the last occurrence needs knowledge of what comes later, which prefix counts cannot give: a program "
         "would separate two languages that no C-RASP[pos] program separates (paper App. A.2 Lemma 6, "
         "by Huang et al. 2025 Lemmas 35-36)")
_REPEATS = ("repeated symbols make matching ambiguous; copying needs index addressing, which counting cannot give: "
            "C-RASP[pos] programs need only logarithmic communication between the string's halves, copying "
            "with repeats linear (paper App. A.2 Lemma 8, by Huang et al. 2025 Theorem 12)")
TASKS: dict[str, Task] = {
    t.name: t
    for t in [
        Task("UR", "retrieval", "right", True, None, "UL", "unique_retrieval",
             "q occurs once: attend to the token whose left neighbour is q, a counting test", programs.UR),
        Task("UL", "retrieval", "left", True, None, "UR", "unique_retrieval",
             "q occurs once: attend to the token whose right neighbour is q, a counting test", programs.UL),
        Task("NRFirst", "retrieval", "right", False, "first", "NLFirst", "nonunique_retrieval",
             f"{_PREFIX}; its right neighbour is then one attention step away", programs.NR_FIRST),
        Task("NLFirst", "retrieval", "left", False, "first", "NRFirst", "nonunique_retrieval",
             f"{_PREFIX}; its left neighbour is then one attention step away", programs.NL_FIRST),
        Task("NRLast", "retrieval", "right", False, "last", "NLLast", "nonunique_retrieval", _LAST),
        Task("NLLast", "retrieval", "left", False, "last", "NRLast", "nonunique_retrieval", _LAST),
        Task("UF", "copying", "forward", True, None, "UB", "unique_copy",
             "distinct symbols: the next token is found by matching the current one (induction)", programs.UF),
        Task("UB", "copying", "backward", True, None, "UF", "unique_copy",
             "distinct symbols: the next token is found by matching the current one (anti-induction)", programs.UB),
        Task("NF", "copying", "forward", False, None, "NB", "nonunique_copy", _REPEATS),
        Task("NB", "copying", "backward", False, None, "NF", "nonunique_copy", _REPEATS),
    ]
}

TASK_NAMES: tuple[str, ...] = tuple(TASKS)
FAMILIES: tuple[str, ...] = ("retrieval", "copying")


def _mirror_pairs() -> tuple[tuple[str, str], ...]:
    """(left/backward, right/forward) pairs, in the records' order (the order the paper compares
    them): a pair once both its tasks are records."""
    return tuple((t.name, t.mirror) for t in TASKS.values() if not t.induction and t.mirror in TASKS)


MIRROR_PAIRS: tuple[tuple[str, str], ...] = _mirror_pairs()


def register_task(task: Task) -> None:
    """Add a task's record, and the names and mirror pairs derived from the records, for an extension
    that adds tasks without editing this file. Call it before anything else imports `lengthgen`'s
    stages: they bind `TASK_NAMES` and `MIRROR_PAIRS` when imported (tests/test_toy_task.py)."""
    global TASK_NAMES, MIRROR_PAIRS
    package = sys.modules[__package__]  # its re-exports too (found, not imported: no import circle)

    if task.name in TASKS:
        raise ValueError(f"task {task.name!r} is already a record")
    get_generator(task.generator)  # its inputs' record must come first
    TASKS[task.name] = task
    TASK_NAMES = package.TASK_NAMES = tuple(TASKS)
    MIRROR_PAIRS = package.MIRROR_PAIRS = _mirror_pairs()


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(TASK_NAMES)}") from None
