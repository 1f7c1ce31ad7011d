"""The mechanism tables: head scores per model, and what each removal does to copying."""

from __future__ import annotations

import polars as pl

from ..records.files import read_frame
from ..records.provenance import Provenance
from ..records.tables import to_markdown, write_table
from ..stats import bootstrap_mean, interval_text, paired_comparison, wilson
from .scores import PER_PROMPT, SCORES

STRONG = 0.2  # a head "counts" as an induction / anti-induction head above this mean attention
COPIES = 0.5  # a model copies a direction when its clean teacher-forced copy accuracy is at least this
USED = 0.5  # a circuit carries a copy when removing its edges raises the copy's loss by more than this
CIRCUIT = {"forward": "induction", "backward": "anti-induction"}


def verdict(carried: dict[str, bool], comparison: str) -> str:
    """The words both tables end each model's line with, so the two can be compared: for each
    direction the model copies, whether that direction's circuit carries the copy; then the paper's
    comparison, induction against anti-induction, with its paired test."""
    copies = [f"{d} copies {'by' if by else 'not by'} {CIRCUIT[d]}" for d, by in carried.items()]
    return "; ".join([*copies, comparison])


def _pair(pairs: pl.DataFrame, model: str, measure: str, first_starts: str = "") -> dict:
    rows = pairs.filter((pl.col("model") == model) & (pl.col("measure") == measure)
                        & pl.col("first").str.starts_with(first_starts))
    return rows.row(0, named=True)


def heads_table(paths) -> pl.DataFrame:
    """Per (model, direction, length, layer, head): each score, mean over seeds, the 95% interval of
    the induction and anti-induction scores over prompts, and the prompt set's teacher-forced copy
    accuracy."""
    frame = pl.concat([read_frame(p) for p in paths])
    keys = ["model", "direction", "length", "layer", "head"]
    table = frame.group_by(keys, maintain_order=True).agg(
        *(pl.col(s).mean() for s in SCORES), pl.col("copy_accuracy").mean(), pl.len().alias("seeds"),
        *(pl.col(f"{s}_per_prompt").explode().alias(f"_{s}") for s in PER_PROMPT if f"{s}_per_prompt" in frame.columns))
    for score in PER_PROMPT:
        if f"_{score}" in table.columns:
            bounds = [bootstrap_mean(values) for values in table[f"_{score}"].to_list()]
            table = table.with_columns(pl.Series(f"{score}_low", [b[0] for b in bounds]),
                                       pl.Series(f"{score}_high", [b[1] for b in bounds])).drop(f"_{score}")
    return table


def heads_summary(table: pl.DataFrame) -> pl.DataFrame:
    """Per model: the best induction head on forward copies against the best anti-induction head on
    backward copies (attention to the earlier occurrence itself: the edge the patching removes), how
    many heads pass STRONG, the best positional before-occurrence head on backward copies, and each
    direction's copy accuracy; models in the table's order (a group_by without it orders them
    differently from run to run)."""
    per_head = table.group_by(["model", "direction", "layer", "head"], maintain_order=True).agg(
        *(pl.col(s).mean() for s in SCORES), pl.col("copy_accuracy").mean())
    rows = []
    for (model,), heads in per_head.group_by(["model"], maintain_order=True):
        forward, backward = (heads.filter(pl.col("direction") == d) for d in ("forward", "backward"))
        best_i, best_a = forward.sort("induction").row(-1, named=True), backward.sort("anti_induction").row(-1, named=True)
        best_p = backward.sort("before_occurrence").row(-1, named=True)
        rows.append({"model": model, "best_induction": best_i["induction"],
                     "induction_head": f"{best_i['layer']}.{best_i['head']}",
                     "best_anti_induction": best_a["anti_induction"],
                     "anti_induction_head": f"{best_a['layer']}.{best_a['head']}",
                     "induction_heads": int((forward.get_column("induction") > STRONG).sum()),
                     "anti_induction_heads": int((backward.get_column("anti_induction") > STRONG).sum()),
                     "best_before_occurrence": best_p["before_occurrence"],
                     "before_occurrence_head": f"{best_p['layer']}.{best_p['head']}",
                     "forward_copy_accuracy": forward.get_column("copy_accuracy").mean(),
                     "backward_copy_accuracy": backward.get_column("copy_accuracy").mean()})
    return pl.DataFrame(rows)


def heads_verdicts(summary: pl.DataFrame, pairs: pl.DataFrame) -> list[str]:
    """Per model, from attention alone: a direction it copies is carried by its circuit when the
    best head of that circuit is above STRONG with its whole 95% interval (and, backward, attends
    to the occurrence more than a positional head attends before it); otherwise induction against
    anti-induction on the same prompts, with the paired test's verdict."""
    lines = []
    for r in summary.iter_rows(named=True):
        compared = _pair(pairs, r["model"], "best head score")
        carried = {}
        if r["forward_copy_accuracy"] >= COPIES:
            carried["forward"] = compared["first_low"] > STRONG
        if r["backward_copy_accuracy"] >= COPIES:
            carried["backward"] = (compared["second_low"] > STRONG
                                   and r["best_anti_induction"] >= r["best_before_occurrence"])
        by_position = ("backward" in carried and not carried["backward"]
                       and r["best_before_occurrence"] > r["best_anti_induction"])
        lines.append(f"- {r['model']}: induction {compared['first_value']:.2f} "
                     f"{interval_text(compared['first_low'], compared['first_high'])} (head {r['induction_head']}) vs "
                     f"anti-induction {compared['second_value']:.2f} "
                     f"{interval_text(compared['second_low'], compared['second_high'])} (head "
                     f"{r['anti_induction_head']}): " + verdict(carried, compared["verdict"])
                     + (f" (by position: before-occurrence {r['best_before_occurrence']:.2f})" if by_position else ""))
    return lines


def write_heads_table(paths, pairs_path, provenance: Provenance, outputs) -> None:
    provenance, table = provenance.record(), heads_table(paths)
    summary = heads_summary(table)
    verdicts = heads_verdicts(summary, read_frame(pairs_path))
    markdown = ("# Mechanism: attention heads on copy prompts\n\n"
                "Mean attention (over prompts, copy positions, lengths and seeds) of the best head: induction "
                "(to the token after the earlier occurrence, on forward copies) and anti-induction (to the earlier "
                "occurrence itself, on backward copies: its value carries the token before it; the edge "
                f"remove_anti_induction patches); heads above {STRONG}; before-occurrence (to the token before "
                "the occurrence, on backward copies: where a model copying backward by position attends, not a "
                "circuit of content); teacher-forced copy accuracy (share of copied tokens ranked first).\n\n"
                + to_markdown(summary) + "\nEach line: the best heads' mean scores with 95% intervals over prompts, "
                "and for a model that copies neither direction, induction against anti-induction on the same "
                "prompts (paired permutation test; `mechanism_pairs.md`).\n\n" + "\n".join(verdicts) + "\n\n"
                f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")
    write_table(table, outputs, provenance, markdown=markdown)


def patching_table(paths) -> pl.DataFrame:
    """Per (model, direction, length, condition): accuracy and loss, mean over seeds, the change from
    the unpatched run, and 95% intervals over prompts (Wilson for the accuracy, a bootstrap for the
    loss and for each prompt's own loss change)."""
    frame = pl.concat([read_frame(p) for p in paths])
    keys = ["model", "direction", "length"]
    table = frame.group_by([*keys, "condition"], maintain_order=True).agg(
        pl.col("accuracy").mean(), pl.col("loss").mean(), pl.len().alias("seeds"),
        pl.col("correct").explode().alias("_correct"), pl.col("losses").explode().alias("_losses"))
    clean = table.filter(pl.col("condition") == "none").select(
        *keys, pl.col("accuracy").alias("_a"), pl.col("loss").alias("_l"), pl.col("_losses").alias("_clean"))
    table = (table.join(clean, on=keys)
             .with_columns((pl.col("accuracy") - pl.col("_a")).alias("accuracy_change"),
                           (pl.col("loss") - pl.col("_l")).alias("loss_change")))
    bounds = {"accuracy": [wilson(sum(c), len(c)) for c in table["_correct"].to_list()],
              "loss": [bootstrap_mean(v) for v in table["_losses"].to_list()],
              "loss_change": [bootstrap_mean([a - b for a, b in zip(v, c)])
                              for v, c in zip(table["_losses"].to_list(), table["_clean"].to_list())]}
    for name, pairs in bounds.items():
        table = table.with_columns(pl.Series(f"{name}_low", [b[0] for b in pairs]),
                                   pl.Series(f"{name}_high", [b[1] for b in pairs]))
    return table.drop("_a", "_l", "_clean", "_correct", "_losses")


# -- paired comparisons ---------------------------------------------------------------------------
def per_prompt(rows: pl.DataFrame, column: str) -> dict[tuple, float]:
    """Each prompt's value, keyed by (length, seed, prompt index): prompt i of a forward and a
    backward set copies the same letters, so the keys pair them."""
    return {(r["length"], r["seed"], i): v for r in rows.iter_rows(named=True) for i, v in enumerate(r[column])}


def compare_prompts(model, first, second, measure, a: dict, b: dict, above, below) -> dict:
    """Two per-prompt measures on the prompts both have (paired sign-flip permutation test)."""
    keys = sorted(set(a) & set(b))
    return {"model": model, "first": first, "second": second, "measure": measure,
            **paired_comparison([a[k] for k in keys], [b[k] for k in keys], False, above=above, below=below).row()}


BEST = {"forward": "induction", "backward": "anti_induction"}  # the score each direction's circuit is judged by


def best_head(rows: pl.DataFrame, direction: str) -> tuple[str, dict[tuple, float]]:
    """One model's head with the highest mean score of `direction`'s circuit over lengths and seeds
    (ties: the later head), named, with its score on each prompt."""
    score = BEST[direction]
    rows = rows.filter(pl.col("direction") == direction)
    top = rows.group_by(["layer", "head"]).agg(pl.col(score).mean()).sort([score, "layer", "head"]).row(-1, named=True)
    head = rows.filter((pl.col("layer") == top["layer"]) & (pl.col("head") == top["head"]))
    return f"{score.replace('_', '-')} head {top['layer']}.{top['head']}", per_prompt(head, f"{score}_per_prompt")


def _losses(patching: pl.DataFrame, direction: str, condition: str) -> dict[tuple, float]:
    return per_prompt(patching.filter((pl.col("direction") == direction) & (pl.col("condition") == condition)),
                      "losses")


def mechanism_pairs(heads_paths, patching_paths) -> pl.DataFrame:
    """Per model, on the same prompts: its best induction head (on forward copies) against its best
    anti-induction head (on backward copies), the heads chosen by their mean score; the loss that
    removing induction edges adds to forward copies against the loss removing anti-induction edges
    adds to backward copies; and for each direction whether removing its own circuit's edges raises
    its loss at all (paired sign-flip permutation tests, 95% bootstrap intervals)."""
    heads = pl.concat([read_frame(p) for p in heads_paths])
    patching = pl.concat([read_frame(p) for p in patching_paths])
    rows = []
    for (model,), of_model in heads.group_by(["model"], maintain_order=True):
        (induction, forward), (anti, backward) = best_head(of_model, "forward"), best_head(of_model, "backward")
        rows.append(compare_prompts(model, induction, anti, "best head score", forward, backward,
                                    "induction above anti-induction", "anti-induction above induction"))
        removed = patching.filter(pl.col("model") == model)
        change = {d: {k: v - _losses(removed, d, "none")[k] for k, v in _losses(removed, d, c).items()}
                  for d, c in (("forward", "remove_induction"), ("backward", "remove_anti_induction"))}
        rows.append(compare_prompts(model, "remove induction, forward copies",
                                    "remove anti-induction, backward copies", "loss change", change["forward"],
                                    change["backward"], "removing induction costs forward copies more",
                                    "removing anti-induction costs backward copies more"))
        for direction, condition in (("forward", "remove_induction"), ("backward", "remove_anti_induction")):
            rows.append(compare_prompts(model, f"remove {CIRCUIT[direction]}, {direction} copies",
                                        f"unpatched, {direction} copies", "loss", _losses(removed, direction, condition),
                                        _losses(removed, direction, "none"), "raises the loss", "lowers the loss"))
    return pl.DataFrame(rows, schema_overrides={"p": pl.Float64})


def write_mechanism_pairs(heads_paths, patching_paths, provenance: Provenance, outputs) -> None:
    write_table(mechanism_pairs(heads_paths, patching_paths), outputs, provenance.record(),
                title="Mechanism: induction against anti-induction on the same prompts (95% intervals, paired tests)")


def patching_verdicts(shown: pl.DataFrame, pairs: pl.DataFrame) -> list[str]:
    """Per model, in the heads table's words: a direction it copies (clean accuracy at least COPIES)
    is carried by its circuit when removing that circuit's edges raises the copy's loss by more than
    USED, and significantly (paired test); for a model that copies neither, whose removal costs its
    own direction more, on the same prompts."""
    lines = []
    for (model,), rows in shown.group_by(["model"], maintain_order=True):
        measured = {(r["direction"], r["condition"]): r for r in rows.iter_rows(named=True)}
        own = {d: _pair(pairs, model, "loss", f"remove {CIRCUIT[d]}") for d in CIRCUIT}
        carried = {d: own[d]["difference"] > USED and own[d]["significant"]
                   for d in CIRCUIT if measured[(d, "none")]["accuracy"] >= COPIES}
        compared = _pair(pairs, model, "loss change")
        lines.append(f"- {model}: removing induction edges costs forward copies {compared['first_value']:+.2f} "
                     f"{interval_text(compared['first_low'], compared['first_high'])}, removing anti-induction edges "
                     f"costs backward copies {compared['second_value']:+.2f} "
                     f"{interval_text(compared['second_low'], compared['second_high'])}: "
                     + verdict(carried, compared["verdict"]))
    return lines


def write_patching_table(paths, pairs_path, provenance: Provenance, outputs) -> None:
    provenance, table = provenance.record(), patching_table(paths)
    shown = (table.group_by(["model", "direction", "condition"], maintain_order=True)
             .agg(pl.col("accuracy").mean(), pl.col("loss").mean(), pl.col("loss_change").mean()))
    markdown = ("# Mechanism: removing each circuit's edges (teacher-forced, mean over lengths and seeds)\n\n"
                "remove_induction: the copied tokens read the corrupted key of the position after their earlier "
                "occurrence; remove_anti_induction: the corrupted value of the occurrence itself (corrupted: "
                "previous-token information removed from the prefix). ablate_*: the top heads by each score "
                "zeroed. accuracy: every copied token ranked first; loss: mean cross-entropy.\n\n"
                + to_markdown(shown) + "\nEach line: the loss each removal adds, mean over prompts with its 95% "
                "interval, and the paired test on the same letters (`mechanism_pairs.md`).\n\n"
                + "\n".join(patching_verdicts(shown, read_frame(pairs_path))) + "\n\n"
                f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")
    write_table(table, outputs, provenance, markdown=markdown)
