"""The tasks (docs/spec.md §1): their records, length bins, data generators, theory and data checks.

Everything else takes `Task` (and `Generator`) records from here; a task name is looked up once,
where it enters (a wildcard, a config list), never again further down.
"""

from ..extensions import load_extensions
from .definitions import FAMILIES, MIRROR_PAIRS, TASK_NAMES, TASKS, Task, get_task, register_task
from .generators import GENERATORS, Generator, Style, get_generator, register_generator
from .lengths import LengthBin

__all__ = ["FAMILIES", "GENERATORS", "MIRROR_PAIRS", "TASK_NAMES", "TASKS", "Generator", "LengthBin", "Style", "Task",
           "get_generator", "get_task", "register_generator", "register_task"]

# Extension files' records (LENGTHGEN_EXTENSIONS), before any stage binds the task names.
load_extensions()
