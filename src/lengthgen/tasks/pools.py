"""Demonstration pools: each generator's short examples that few-shot prompts draw their
demonstrations from, as the authors' pool files (retrieval: 100 unique-query contexts of 5 symbols,
1,500 repeated-query contexts of 6; copying: 1,500 strings of 5), in the `chars` encoding."""

from __future__ import annotations

from .definitions import Task
from .generate import generate_inputs
from .generators import get_generator
from .lengths import LengthBin


def demonstration_pool(task: Task, settings: dict, seed: int) -> list[tuple]:
    """The generator's pool of short examples: (context, query, occurrences), shared by every task
    of the generator."""
    length, size = get_generator(task.generator).pool  # (context length, size)
    return [(tuple(c), q, o) for c, q, o in generate_inputs(task, "chars", settings, LengthBin(length, length), size,
                                                             seed, stream="demonstration-pool")]
