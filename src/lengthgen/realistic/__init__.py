"""Realistic tasks (paper section 4.2): echoing lorem-ipsum paragraphs, whose errors come at
ambiguous bigrams, and listing git commits for a revert (a forward copy) or a cherry-pick (a
backward copy).

Rule: `realistic_predict` per (model, task), `realistic_table` (workflow/rules/realistic.smk).
"""

from .git import TASKS as GIT_TASKS

TASKS = ("lorem", *GIT_TASKS)  # the workflow's {realistic} wildcard
