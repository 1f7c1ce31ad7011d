"""A toy extension for the tests: a new input generator (distinct symbols in ascending order) and a
mirror pair of copying tasks on it, each with the unique-copy programs (they need only distinct
symbols). One file: a generator record, two task records."""

import numpy as np

from lengthgen.tasks import Generator, Style, Task, programs, register_generator, register_task


def ascending(rng, n, settings, task):
    return np.sort(rng.choice(settings["alphabet_size"], size=n, replace=False)), -1, []


register_generator(Generator(
    "ascending_copy", {"controlled": Style(ascending)}, min_length=1, pool=(5, 200),
    settings_schema={"type": "object", "additionalProperties": False,
                     "properties": {"alphabet_size": {"$ref": "#/$defs/alphabet", "default": 12}}},
    defaults={"tokens": {}, "chars": {"alphabet_size": 52}, "finetune": {"alphabet_size": 52}},
    max_alphabet={"chars": 52, "finetune": 62}, distinct=True))
register_task(Task("AF", "copying", "forward", True, None, "AB", "ascending_copy",
                   "distinct symbols: the next one is found by matching the current one", programs.UF))
register_task(Task("AB", "copying", "backward", True, None, "AF", "ascending_copy",
                   "distinct symbols: the previous one is found by matching the current one", programs.UB))
