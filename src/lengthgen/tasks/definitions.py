"""The ten synthetic tasks of SPEC section 1, as data: one record per task.

Everything that depends on "which task is this" (generator, target rule, theory prediction,
mirror partner) reads these records, so adding a task means adding one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    name: str
    family: str  # "retrieval" | "copying"
    direction: str  # "right" | "left" (retrieval), "forward" | "backward" (copying)
    unique: bool  # query occurs once / all symbols distinct
    occurrence: str | None  # "first" | "last" for non-unique retrieval, else None
    expressible: bool  # has a C-RASP[pos] program
    mirror: str  # the task with the same inputs and the opposite direction
    reason: str  # one line: why the theory predicts what it does

    @property
    def generator(self) -> str:
        """Name of the input generator; tasks sharing it share their inputs."""
        kind = "unique" if self.unique else "nonunique"
        return f"{kind}_{'retrieval' if self.family == 'retrieval' else 'copy'}"

    @property
    def induction(self) -> bool:
        """True for the right/forward (induction) direction, False for anti-induction."""
        return self.direction in ("right", "forward")

    @property
    def predicted_to_generalise(self) -> bool:
        return self.expressible


_PREFIX = "the count of q up to here is 1 marks the first occurrence"
TASKS: dict[str, Task] = {
    t.name: t
    for t in [
        Task("UR", "retrieval", "right", True, None, True, "UL",
             "q occurs once: attend to the token whose left neighbour is q, a counting test"),
        Task("UL", "retrieval", "left", True, None, True, "UR",
             "q occurs once: attend to the token whose right neighbour is q, a counting test"),
        Task("NRFirst", "retrieval", "right", False, "first", True, "NLFirst",
             f"{_PREFIX}; its right neighbour is then one attention step away"),
        Task("NLFirst", "retrieval", "left", False, "first", True, "NRFirst",
             f"{_PREFIX}; its left neighbour is then one attention step away"),
        Task("NRLast", "retrieval", "right", False, "last", False, "NLLast",
             "the last occurrence needs knowledge of what comes later, which prefix counts cannot give"),
        Task("NLLast", "retrieval", "left", False, "last", False, "NRLast",
             "the last occurrence needs knowledge of what comes later, which prefix counts cannot give"),
        Task("UF", "copying", "forward", True, None, True, "UB",
             "distinct symbols: the next token is found by matching the current one (induction)"),
        Task("UB", "copying", "backward", True, None, True, "UF",
             "distinct symbols: the next token is found by matching the current one (anti-induction)"),
        Task("NF", "copying", "forward", False, None, False, "NB",
             "repeated symbols make matching ambiguous; copying needs index addressing, which counting cannot give"),
        Task("NB", "copying", "backward", False, None, False, "NF",
             "repeated symbols make matching ambiguous; copying needs index addressing, which counting cannot give"),
    ]
}

TASK_NAMES: tuple[str, ...] = tuple(TASKS)
FAMILIES: tuple[str, ...] = ("retrieval", "copying")

# (left/backward, right/forward) pairs, in the order the paper compares them.
MIRROR_PAIRS: tuple[tuple[str, str], ...] = (
    ("UL", "UR"), ("NLFirst", "NRFirst"), ("NLLast", "NRLast"), ("UB", "UF"), ("NB", "NF"),
)

def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(TASK_NAMES)}") from None

