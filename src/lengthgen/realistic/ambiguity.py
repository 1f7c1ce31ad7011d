"""Where a copy of a paragraph breaks, and whether it breaks after an ambiguous token (docs/spec.md §5,
the authors' realistic/evaluation/eval_copy.py and eval_utils.py, with their bugs fixed).

A token type of the reference is unambiguous when it is always followed by the same token there,
ambiguous when by different ones (a type that only ends the reference is neither). An output that
contains the reference scores 1; one at most 0.75 of its length (in characters) scores 0;
otherwise output and reference tokens are aligned globally (Needleman-Wunsch: match +1, mismatch 0,
gap -1, by Biopython's PairwiseAligner), and every run of matches that an edit (substitution,
insertion, deletion) follows is a break, classed by the last correctly copied reference token. Per
class, score = 1 - breaks after that class / distinct types of that class.

Fixed against the authors: the ambiguous score is divided by the number of ambiguous types (theirs
by the unambiguous count), and averages take every sample, exact copies as 1 and short outputs as 0
(theirs skipped both).
"""

from __future__ import annotations

from dataclasses import dataclass

LENGTH_RATIO = 0.75


def successors(reference: list) -> dict:
    """Each type of the reference -> the set of tokens that follow it there."""
    follow: dict = {}
    for a, b in zip(reference, reference[1:]):
        follow.setdefault(a, set()).add(b)
    return follow


def classes(reference: list) -> tuple[set, set]:
    """(unambiguous types, ambiguous types)."""
    follow = successors(reference)
    return {t for t, s in follow.items() if len(s) == 1}, {t for t, s in follow.items() if len(s) > 1}


def _aligner():
    from Bio import Align

    return Align.PairwiseAligner(mode="global", match_score=1.0, mismatch_score=0.0, gap_score=-1.0)


def alignment(reference: list, output: list) -> list[tuple[str, int | None, int | None]]:
    """One optimal alignment as (operation, reference index, output index) steps, operations
    match / substitute / delete (a reference token left out) / insert (an extra output token)."""
    if not reference or not output:
        return [("delete", i, None) for i in range(len(reference))] + [("insert", None, j) for j in range(len(output))]
    codes = {t: i for i, t in enumerate(dict.fromkeys([*reference, *output]))}
    best = _aligner().align([codes[t] for t in reference], [codes[t] for t in output])[0]
    steps = []
    (ref_path, out_path) = best.coordinates
    for (r0, r1), (o0, o1) in zip(zip(ref_path, ref_path[1:]), zip(out_path, out_path[1:])):
        if r1 - r0 and o1 - o0:
            steps += [("match" if reference[i] == output[j] else "substitute", i, j)
                      for i, j in zip(range(r0, r1), range(o0, o1))]
        elif r1 - r0:
            steps += [("delete", i, None) for i in range(r0, r1)]
        else:
            steps += [("insert", None, j) for j in range(o0, o1)]
    return steps


def alignment_score(steps) -> float:
    return sum(1 if op == "match" else 0 if op == "substitute" else -1 for op, _, _ in steps)


def breaks(reference: list, output: list) -> list[int]:
    """Reference indices of the last correctly copied token before each break."""
    found, last_match = [], None
    for op, i, _ in alignment(reference, output):
        if op == "match":
            last_match = i
        elif last_match is not None:
            found.append(last_match)
            last_match = None
    return found


@dataclass
class CopyScore:
    exact: bool
    too_short: bool
    unambiguous: float | None  # None: the reference has no type of the class
    ambiguous: float | None
    breaks_unambiguous: int
    breaks_ambiguous: int


def score_copy(reference_text: str, output_text: str, tokenize) -> CopyScore:
    """`tokenize`: text -> the model's tokens (ids or strings)."""
    reference = tokenize(reference_text.strip())
    unambiguous, ambiguous = classes(reference)
    if reference_text.strip() in output_text.strip():
        return CopyScore(True, False, 1.0 if unambiguous else None, 1.0 if ambiguous else None, 0, 0)
    shorter, longer = sorted((len(reference_text.strip()), len(output_text.strip())))
    if not longer or shorter / longer <= LENGTH_RATIO:
        return CopyScore(False, True, 0.0 if unambiguous else None, 0.0 if ambiguous else None, 0, 0)
    after = [reference[i] for i in breaks(reference, tokenize(output_text.strip()))]
    count_u = sum(t in unambiguous for t in after)
    count_a = sum(t in ambiguous for t in after)
    return CopyScore(False, False, 1 - count_u / len(unambiguous) if unambiguous else None,
                     1 - count_a / len(ambiguous) if ambiguous else None, count_u, count_a)
