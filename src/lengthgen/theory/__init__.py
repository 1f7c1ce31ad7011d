"""C-RASP[pos], executable: the operations of a program, their interpreter, and their plain form.

A language, not an experiment: it imports nothing from the rest of the project, so the task records
(`lengthgen.tasks`) can hold their programs. See `operations` for the definitions and the choices.
"""

from .interpreter import AMBIGUOUS, NONE, evaluate, generate, next_symbols
from .operations import (
                         NEXT,
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
)

__all__ = ["AMBIGUOUS", "NONE", "evaluate", "generate", "next_symbols", "NEXT", "SEPARATOR", "And", "Compare",
           "Conditional", "Count", "Defined", "IllTyped", "Is", "Linear", "Match", "Not", "Or", "Periodic", "Program", "Top",
           "check_types"]
