"""The mechanism tables: head scores per model, and what each removal does to copying."""

from __future__ import annotations

import polars as pl

from ..results.files import read_frame
from ..results.provenance import collect
from ..results.tables import to_markdown, write_table
from .heads import SCORES

STRONG = 0.2  # a head "counts" as an induction / anti-induction head above this mean attention
COPIES = 0.5  # a model copies a direction when its clean teacher-forced copy accuracy is at least this
USED = 0.5  # a circuit carries a copy when removing its edges raises the copy's loss by more than this
CIRCUIT = {"forward": "induction", "backward": "anti-induction"}


def verdict(carried: dict[str, bool], induction_first: bool) -> str:
    """The words both tables end each model's line with, so the two can be compared: for each
    direction the model copies, whether that direction's circuit carries the copy; for a model that
    copies neither (a small pretrained one), which circuit comes first, the paper's comparison."""
    if carried:
        return "; ".join(f"{d} copies {'by' if by else 'not by'} {CIRCUIT[d]}" for d, by in carried.items())
    return "induction over anti-induction" if induction_first else "anti-induction over induction"


def heads_table(paths) -> pl.DataFrame:
    """Per (model, direction, length, layer, head): each score, mean over seeds, and the prompt
    set's teacher-forced copy accuracy."""
    frame = pl.concat([read_frame(p) for p in paths])
    return (frame.group_by(["model", "direction", "length", "layer", "head"], maintain_order=True)
            .agg(*(pl.col(s).mean() for s in SCORES), pl.col("copy_accuracy").mean(), pl.len().alias("seeds")))


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


def heads_verdicts(summary: pl.DataFrame) -> list[str]:
    """Per model, from attention alone: a direction it copies is carried by its circuit when that
    circuit has a head above STRONG (and, backward, attends to the occurrence more than a positional
    head attends before it); otherwise induction against anti-induction."""
    lines = []
    for r in summary.iter_rows(named=True):
        carried = {}
        if r["forward_copy_accuracy"] >= COPIES:
            carried["forward"] = r["best_induction"] > STRONG
        if r["backward_copy_accuracy"] >= COPIES:
            carried["backward"] = (r["best_anti_induction"] > STRONG
                                   and r["best_anti_induction"] >= r["best_before_occurrence"])
        by_position = ("backward" in carried and not carried["backward"]
                       and r["best_before_occurrence"] > r["best_anti_induction"])
        lines.append(f"- {r['model']}: induction {r['best_induction']:.2f} (head {r['induction_head']}) vs "
                     f"anti-induction {r['best_anti_induction']:.2f} (head {r['anti_induction_head']}): "
                     + verdict(carried, r["best_induction"] > r["best_anti_induction"])
                     + (f" (by position: before-occurrence {r['best_before_occurrence']:.2f})" if by_position else ""))
    return lines


def write_heads_table(paths, section: dict, outputs) -> None:
    provenance, table = collect(section), heads_table(paths)
    summary = heads_summary(table)
    verdicts = heads_verdicts(summary)
    markdown = ("# Mechanism: attention heads on copy prompts\n\n"
                "Mean attention (over prompts, copy positions, lengths and seeds) of the best head: induction "
                "(to the token after the earlier occurrence, on forward copies) and anti-induction (to the earlier "
                "occurrence itself, on backward copies: its value carries the token before it; the edge "
                f"remove_anti_induction patches); heads above {STRONG}; before-occurrence (to the token before "
                "the occurrence, on backward copies: where a model copying backward by position attends, not a "
                "circuit of content); teacher-forced copy accuracy (share of copied tokens ranked first).\n\n"
                + to_markdown(summary) + "\n" + "\n".join(verdicts) + "\n\n"
                f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")
    write_table(table, outputs, provenance, markdown=markdown)


def patching_table(paths) -> pl.DataFrame:
    """Per (model, direction, length, condition): accuracy and loss, mean over seeds, and the change
    from the unpatched run."""
    frame = pl.concat([read_frame(p) for p in paths])
    table = frame.group_by(["model", "direction", "length", "condition"], maintain_order=True).agg(
        pl.col("accuracy").mean(), pl.col("loss").mean(), pl.len().alias("seeds"))
    clean = table.filter(pl.col("condition") == "none").select(
        "model", "direction", "length", pl.col("accuracy").alias("_a"), pl.col("loss").alias("_l"))
    return (table.join(clean, on=["model", "direction", "length"])
            .with_columns((pl.col("accuracy") - pl.col("_a")).alias("accuracy_change"),
                          (pl.col("loss") - pl.col("_l")).alias("loss_change")).drop("_a", "_l"))


def patching_verdicts(shown: pl.DataFrame) -> list[str]:
    """Per model, in the heads table's words: a direction it copies (clean accuracy at least COPIES)
    is carried by its circuit when removing that circuit's edges costs the copy more than USED in
    loss; for a model that copies neither, whose removal costs its own direction more."""
    lines = []
    for (model,), rows in shown.group_by(["model"], maintain_order=True):
        measured = {(r["direction"], r["condition"]): r for r in rows.iter_rows(named=True)}
        cost = {"forward": measured[("forward", "remove_induction")]["loss_change"],
                "backward": measured[("backward", "remove_anti_induction")]["loss_change"]}
        carried = {d: cost[d] > USED for d in CIRCUIT if measured[(d, "none")]["accuracy"] >= COPIES}
        lines.append(f"- {model}: removing induction edges costs forward copies {cost['forward']:+.2f}, removing "
                     f"anti-induction edges costs backward copies {cost['backward']:+.2f}: "
                     + verdict(carried, cost["forward"] > cost["backward"]))
    return lines


def write_patching_table(paths, section: dict, outputs) -> None:
    provenance, table = collect(section), patching_table(paths)
    shown = (table.group_by(["model", "direction", "condition"], maintain_order=True)
             .agg(pl.col("accuracy").mean(), pl.col("loss").mean(), pl.col("loss_change").mean()))
    markdown = ("# Mechanism: removing each circuit's edges (teacher-forced, mean over lengths and seeds)\n\n"
                "remove_induction: the copied tokens read the corrupted key of the position after their earlier "
                "occurrence; remove_anti_induction: the corrupted value of the occurrence itself (corrupted: "
                "previous-token information removed from the prefix). ablate_*: the top heads by each score "
                "zeroed. accuracy: every copied token ranked first; loss: mean cross-entropy.\n\n"
                + to_markdown(shown) + "\n" + "\n".join(patching_verdicts(shown)) + "\n\n"
                f"config hash {provenance['config_hash']}, code {provenance['code_version']}\n")
    write_table(table, outputs, provenance, markdown=markdown)
