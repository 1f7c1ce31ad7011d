"""The tasks (docs/spec.md §1): their records, length bins, data generators, theory and data checks.

Everything else takes `Task` records from here; a task name is looked up once, where it enters
(a wildcard, a config list), never again further down.
"""

from .definitions import FAMILIES, MIRROR_PAIRS, TASK_NAMES, TASKS, Task, get_task, register_task
from .lengths import LengthBin

__all__ = ["FAMILIES", "MIRROR_PAIRS", "TASK_NAMES", "TASKS", "Task", "get_task", "register_task", "LengthBin"]
