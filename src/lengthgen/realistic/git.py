"""Git revert and cherry-pick as the authors posed them (their realistic/dataset_creation/
generate_gitcommits.py and prompts/realistic/codeassist/), seeded: theirs was not.

A history is n commit lines, newest first, each ``<7 hex chars> <action> <topic>``. Reverting lists
them in the same order (a forward copy); cherry-picking lists them oldest first (a backward copy).
"""

from __future__ import annotations

import zlib

import numpy as np

ACTIONS = ("Add", "Remove", "Fix", "Refactor", "Update", "Improve", "Optimize", "Document", "Cleanup", "Merge",
           "Revert", "Bug fix")
TOPICS = ("authentication", "API", "search", "database", "UI", "CLI", "logging", "tests", "deployment", "config",
          "caching")
HEX = "0123456789abcdef"
TASKS = ("revert", "cherrypick")  # forward, backward


def history(rng, commits: int) -> list[str]:
    return [f"{''.join(rng.choice(list(HEX), size=7))} {rng.choice(ACTIONS)} {rng.choice(TOPICS)}"
            for _ in range(commits)]


def histories(commits: int, count: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng([seed, commits, zlib.crc32(b"git")])
    return [history(rng, commits) for _ in range(count)]


def answer(lines: list[str], task: str) -> list[str]:
    return list(lines) if task == "revert" else list(reversed(lines))


# Their prompts, verbatim (trailing double spaces are Markdown line breaks; "cherry‑pick" has a
# non-breaking hyphen, as theirs).
BASE = {
    "revert": ("Below is part of a Git commit history (newest at the top, oldest at the bottom).\n\n"
               "Task  \nList every commit line that must be reverted to roll the codebase back.\n"
               "1. Output the lines **from newest to oldest**.\n2. One complete commit line per output line.  \n"
               "3. Do **not** output anything else.\n\n"),
    "cherrypick": ("Below is a part of a Git commit history (newest at the top, oldest at the bottom).\n\n"
                   "Task  \nList every commit line that must be cherry‑picked onto the release branch.  \n"
                   "1. Output them **from oldest to newest** (the order `git cherry‑pick` expects).  \n"
                   "2. One complete commit line per output line.  \n3. Do **not** output anything else.\n\n"),
}
CHAT = {
    "revert": ("**NEW HISTORY** is a part of a Git commit history (newest at the beginning, oldest at the end).\n\n"
               "Task: List every commit line that must be reverted to roll the codebase back for the **NEW HISTORY**. "
               "Output the commits **from newest to oldest**. \n\n"
               "For the understanding the task better look at the **EXAMPLES** below:\n\n"),
    "cherrypick": ("**NEW HISTORY** is a part of a Git commit history (newest at the beginning, oldest at the end).\n\n"
                   "Task: List every commit line that must be cherry‑picked onto the release branch for the "
                   "**NEW HISTORY**. Output the commits **from oldest to newest** (the order `git cherry‑pick` "
                   "expects). \n\nFor the output format look at the **EXAMPLES** below:\n\n"),
}


def _block(lines: list[str], task: str) -> str:
    return "\n".join(["=== NEW HISTORY ===", *lines, "=== ANSWER ===", "<start>", *answer(lines, task), "<end>"])


def prompt(lines: list[str], task: str, demonstrations: list[list[str]], variant: str, chat: bool,
           style: str = "lengthgen") -> str:
    """variant "instruction": theirs; "bare": the demonstrations and the history only (for models too
    small to read an instruction, or whose context it would not fit). style "authors": a base prompt
    ends at `<start>`, as their template (the model writes the newline); ours ends with it, so the
    first answer token is a hash."""
    shots = "\n\n".join(_block(d, task) for d in demonstrations)
    if chat:
        return (CHAT[task] + f"=== EXAMPLES ===\n{shots}\n================\n\n"
                "Now perform the task on the following commit history:\n\n"
                "=== NEW HISTORY ===\n" + "\n".join(lines) + "\n================\n\n"
                "Put your answer between the <start> and <end> tags. Start your response with the answer first, "
                "no need to explain anything.")
    head = BASE[task] if variant == "instruction" else ""
    query = "\n".join(["=== NEW HISTORY ===", *lines, "=== ANSWER ===", "<start>"]) + ("" if style == "authors" else "\n")
    return head + (f"{shots}\n" if shots else "") + query


def score(completion: str, gold: list[str]) -> tuple[bool, float]:
    """(exact, share of lines right): the stripped non-empty lines up to <end>, after <start> where the
    output has one (a chat answer), against the gold ones. (The authors' released scorer sliced from
    `<start>` in every output: a base model's output, which follows the prompt's `<start>`, then
    lost its first six characters and never matched.)"""
    text = completion.split("<end>")[0]
    if "<start>" in text:
        text = text.split("<start>", 1)[1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    right = sum(a == b for a, b in zip(lines, gold))
    return lines == gold, right / len(gold)
