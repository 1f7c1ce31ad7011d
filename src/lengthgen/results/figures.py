"""The paper's figures, drawn from the result tables (never from typed-in numbers).

Each function takes the table(s) a rule produced and returns a matplotlib Figure; `save` writes
it as PNG and PDF. Bars are means with the spread as an error bar (the authors drew mean + std
as the bar height: a bug). Expressible tasks (C-RASP[pos]) are solid, the others hatched/dashed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from ..records.tables import atomic_path  # noqa: E402
from ..tasks import FAMILIES, MIRROR_PAIRS, LengthBin, get_task  # noqa: E402

LEFT, RIGHT = "#c44e52", "#4c72b0"  # left/backward vs right/forward throughout


def save(figure, stem) -> list[Path]:
    """Write `stem`.png and `stem`.pdf atomically; return both paths."""
    paths = []
    for suffix in (".png", ".pdf"):
        path = Path(f"{stem}{suffix}")
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=suffix[1:], dpi=150, bbox_inches="tight")
        paths.append(path)
    plt.close(figure)
    return paths


def _families(frame: pl.DataFrame) -> list[str]:
    present = {get_task(t).family for t in frame.get_column("task").unique()}
    return [f for f in FAMILIES if f in present]


def _line_style(task: str) -> dict:
    t = get_task(task)
    return {"linestyle": "-" if t.expressible else "--", "marker": "o" if t.induction else "s"}


def _family_panels(frame: pl.DataFrame, title: str, xlabel: str, draw):
    """One panel per (system, task family), each drawn by `draw(ax, rows of that panel)`."""
    units = frame.get_column("system").unique(maintain_order=True).to_list()
    families = _families(frame)
    figure, axes = plt.subplots(len(units), len(families), figsize=(5 * len(families), 3.2 * len(units)),
                                squeeze=False)
    family_of = pl.col("task").map_elements(lambda t: get_task(t).family, return_dtype=pl.Utf8)
    for row, name in enumerate(units):
        for col, family in enumerate(families):
            ax = axes[row][col]
            draw(ax, frame.filter((pl.col("system") == name) & (family_of == family)))
            ax.set_ylim(-0.05, 1.05)
            ax.set_title(f"{title}: {name}, {family}")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("exact match")
            ax.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    return figure


def accuracy_by_bin(table: pl.DataFrame, title: str):
    """Accuracy per length bin, one line per task, one panel per (system, family); error bars = std over seeds."""
    def draw(ax, cell):
        bins = cell.get_column("bin").unique(maintain_order=True).to_list()
        for task, rows in cell.group_by("task", maintain_order=True):
            order = [bins.index(b) for b in rows.get_column("bin")]
            std = rows.get_column("accuracy_std").fill_null(0.0).to_list()
            ax.errorbar(order, rows.get_column("accuracy").to_list(), yerr=std, label=task[0], capsize=3,
                        **_line_style(task[0]))
        ax.set_xticks(range(len(bins)), bins)

    return _family_panels(table, title, "length bin (first = in distribution)", draw)


MEASURE_LABELS = {"accuracy": "exact match", "tf_symbol_accuracy": "teacher-forced symbol accuracy"}


def mirror_bars(table: pl.DataFrame, measure: str = "accuracy"):
    """In context: per model and length, each mirror pair as two bars (left, right); bar = mean over
    seeds and prompt variants, error bar = std over seeds."""
    overall = table.filter(pl.col("variant") == "all")
    models = overall.get_column("model").unique(maintain_order=True).to_list()
    bins = sorted(overall.get_column("bin").unique().to_list(), key=lambda b: LengthBin.parse(b).high)
    figure, axes = plt.subplots(len(models), len(bins), figsize=(3.6 * len(bins), 3 * len(models)),
                                squeeze=False)
    for row, model in enumerate(models):
        for col, length_bin in enumerate(bins):
            ax = axes[row][col]
            cell = overall.filter((pl.col("model") == model) & (pl.col("bin") == length_bin))
            values = {r["task"]: r for r in cell.iter_rows(named=True)}
            pairs = [p for p in MIRROR_PAIRS if p[0] in values and p[1] in values]
            for i, (left, right) in enumerate(pairs):
                for offset, task, colour in ((-0.2, left, LEFT), (0.2, right, RIGHT)):
                    r = values[task]
                    ax.bar(i + offset, r[measure], width=0.4, color=colour,
                           yerr=r[f"{measure}_std_over_seeds"] or 0.0, capsize=2,
                           hatch=None if get_task(task).expressible else "//", label=None)
            ax.set_xticks(range(len(pairs)), [f"{left}/{right}" for left, right in pairs], fontsize=7, rotation=30)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{model}, length {length_bin}", fontsize=9)
    # Handles of their own: an empty bar's legend entry takes the default colour, not its own.
    axes[0][0].legend(handles=[Patch(color=LEFT, label="left / backward"), Patch(color=RIGHT, label="right / forward")],
                      fontsize=7)
    figure.suptitle(f"In context, {MEASURE_LABELS[measure]}: mirror pairs (bar = mean, error bar = std over seeds; "
                    "hatched = not C-RASP[pos])")
    figure.tight_layout()
    return figure


def accuracy_by_length(by_length: pl.DataFrame, title: str):
    """Accuracy against input length, one line per task, one panel per (system, family)."""
    def draw(ax, cell):
        for task, rows in cell.sort("length").group_by("task", maintain_order=True):
            ax.plot(rows.get_column("length").to_list(), rows.get_column("accuracy").to_list(), label=task[0],
                    markersize=3, **_line_style(task[0]))

    return _family_panels(by_length, title, "input length", draw)


def comparison(rows: pl.DataFrame):
    """Per mirror pair: left and right accuracy in each experiment (from scratch, in context, fine-tuned)."""
    systems = rows.select("experiment", "system").unique(maintain_order=True).rows()
    pairs = [p for p in MIRROR_PAIRS if set(p) <= set(rows.get_column("task"))]
    figure, axes = plt.subplots(1, len(pairs), figsize=(3.2 * len(pairs), 3.4), squeeze=False, sharey=True)
    for i, (left, right) in enumerate(pairs):
        ax = axes[0][i]
        for j, (experiment, system) in enumerate(systems):
            cell = rows.filter((pl.col("experiment") == experiment) & (pl.col("system") == system))
            value = dict(zip(cell.get_column("task"), cell.get_column("accuracy")))
            for offset, task, colour in ((-0.2, left, LEFT), (0.2, right, RIGHT)):
                if task in value:
                    ax.bar(j + offset, value[task], width=0.4, color=colour)
        ax.set_xticks(range(len(systems)), [f"{e}\n{s}" for e, s in systems], fontsize=6, rotation=30)
        ax.set_ylim(0, 1.05)
        expressible = "C-RASP[pos]" if get_task(left).expressible else "not C-RASP[pos]"
        ax.set_title(f"{left} / {right} ({expressible})", fontsize=8)
    axes[0][0].set_ylabel("exact match, longest length")
    figure.suptitle("Left/backward (red) vs right/forward (blue): from scratch, in context, fine-tuned")
    figure.tight_layout()
    return figure


def head_maps(heads: pl.DataFrame):
    """Per model (a row): its induction scores on forward copies and anti-induction scores on backward
    copies as layer x head maps (mean over lengths and seeds), on one colour scale."""
    models = heads.get_column("model").unique(maintain_order=True).to_list()
    figure, axes = plt.subplots(len(models), 2, figsize=(7, 2.2 * len(models) + 0.6), squeeze=False,
                                layout="constrained")
    for row, model in enumerate(models):
        for col, (direction, score) in enumerate((("forward", "induction"), ("backward", "anti_induction"))):
            ax = axes[row][col]
            cell = (heads.filter((pl.col("model") == model) & (pl.col("direction") == direction))
                    .group_by(["layer", "head"]).agg(pl.col(score).mean()))
            layers, count = cell.get_column("layer").max() + 1, cell.get_column("head").max() + 1
            grid = [[0.0] * count for _ in range(layers)]
            for r in cell.iter_rows(named=True):
                grid[r["layer"]][r["head"]] = r[score]
            image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
            ax.set_xticks(range(count))
            ax.set_yticks(range(layers))  # whole layers and heads, however few
            if row == 0:
                ax.set_title(f"{score.replace('_', '-')} ({direction} copies)", fontsize=9)
            if row == len(models) - 1:
                ax.set_xlabel("head")
            ax.set_ylabel(f"{model}\nlayer" if col == 0 else "layer", fontsize=8)
    figure.colorbar(image, ax=axes, shrink=0.6, label="mean attention")
    return figure


def patching_bars(table: pl.DataFrame):
    """Per model: the copy loss under each condition, forward (blue) and backward (red) prompts."""
    models = table.get_column("model").unique(maintain_order=True).to_list()
    conditions = table.get_column("condition").unique(maintain_order=True).to_list()
    figure, axes = plt.subplots(1, len(models), figsize=(3.4 * len(models), 3.2), squeeze=False)
    for col, model in enumerate(models):
        ax = axes[0][col]
        cell = table.filter(pl.col("model") == model).group_by(["direction", "condition"]).agg(pl.col("loss").mean())
        values = {(r["direction"], r["condition"]): r["loss"] for r in cell.iter_rows(named=True)}
        for offset, direction, colour in ((-0.2, "forward", RIGHT), (0.2, "backward", LEFT)):
            ax.bar([i + offset for i in range(len(conditions))], [values.get((direction, c), 0.0) for c in conditions],
                   width=0.4, color=colour, label=direction)
        ax.set_xticks(range(len(conditions)), [c.replace("_", " ") for c in conditions], fontsize=6, rotation=35,
                      ha="right")
        ax.set_title(model, fontsize=8)
        ax.set_ylabel("copy cross-entropy")
    axes[0][0].legend(fontsize=7)
    figure.suptitle("Mechanism: what removing each circuit's edges does to copying (teacher-forced loss)")
    figure.tight_layout()
    return figure


def _paired_bars(ax, pairs: list[list[tuple[str, float | None, float | None]]]) -> None:
    """Measures side by side: one group per measure, in it one blue/red pair per (label, blue, red);
    a missing value draws as 0."""
    for i, group in enumerate(pairs):
        for j, (label, blue, red) in enumerate(group):
            x = i * (len(group) + 1) + j
            ax.bar(x - 0.2, blue or 0.0, width=0.4, color=RIGHT)
            ax.bar(x + 0.2, red or 0.0, width=0.4, color=LEFT)
            ax.text(x, -0.12, label, ha="center", fontsize=6, transform=ax.get_xaxis_transform())
    ax.set_xticks([])


def realistic_bars(table: pl.DataFrame):
    """Per model: lorem-ipsum scores after unambiguous against ambiguous tokens (greedy and
    teacher-forced), and git revert against cherry-pick (exact, teacher-forced over the answer and at
    line starts), per length."""
    models = table.get_column("model").unique(maintain_order=True).to_list()
    figure, axes = plt.subplots(len(models), 2, figsize=(9, 3.2 * len(models)), squeeze=False)
    for row, model in enumerate(models):
        lorem = table.filter((pl.col("model") == model) & (pl.col("task") == "lorem")).sort("length")
        git = table.filter((pl.col("model") == model) & (pl.col("task") != "lorem")).sort("length")
        _paired_bars(axes[row][0], [
            [(f"{label}\n{values['length']}", values[measure], values[measure.replace("unambiguous", "ambiguous")])
             for values in lorem.iter_rows(named=True)]
            for measure, label in (("unambiguous", "greedy"), ("tf_unambiguous", "teacher-forced"))])
        axes[row][0].set_title(f"{model}: lorem ipsum (blue unambiguous, red ambiguous)", fontsize=8)
        lengths = sorted(set(git.get_column("length").to_list()))
        cells = {(v["task"], v["length"]): v for v in git.iter_rows(named=True)}
        _paired_bars(axes[row][1], [
            [(f"{label}\n{length}", cells.get(("revert", length), {}).get(measure),
              cells.get(("cherrypick", length), {}).get(measure)) for length in lengths]
            for measure, label in (("exact", "exact"), ("tf_token_accuracy", "tf tokens"),
                                   ("tf_line_start", "tf line\nstarts"))])
        axes[row][1].set_ylim(0, 1.05)
        axes[row][1].set_title(f"{model}: git (blue revert = forward, red cherry-pick = backward)", fontsize=8)
    figure.tight_layout()
    return figure


def pretraining_history(histories: dict[str, list[dict]]):
    """Per corpus (a panel): its best induction head's score (forward copy prompts, blue) and best
    anti-induction head's (backward ones, red) at every evaluation of pretraining, a line per
    pretraining seed: when, and on which corpus, each circuit forms. histories: corpus -> the
    `history` of each of its pretrain summaries' provenance (steps, and metrics with best_induction
    and best_anti_induction per step)."""
    figure, axes = plt.subplots(1, len(histories), figsize=(3.6 * len(histories), 3.2), squeeze=False, sharey=True)
    for ax, (corpus, runs) in zip(axes[0], histories.items()):
        for run, history in enumerate(runs):
            for score, colour, label in (("best_induction", RIGHT, "best induction head (forward copies)"),
                                         ("best_anti_induction", LEFT, "best anti-induction head (backward copies)")):
                ax.plot(history["steps"], [metrics.get(score, float("nan")) for metrics in history["metrics"]],
                        color=colour, marker="o", markersize=3, alpha=0.9 if run == 0 else 0.5,
                        label=label if run == 0 else None)
        ax.set_title(f"{corpus} ({len(runs)} seed{'s' if len(runs) > 1 else ''})", fontsize=9)
        ax.set_xlabel("pretraining step")
    axes[0][0].set_ylabel("mean attention")
    axes[0][0].legend(fontsize=7)
    figure.suptitle("Pretraining: the best induction and anti-induction heads as they form, per corpus")
    figure.tight_layout()
    return figure


def learning_curves(curves: pl.DataFrame):
    """Fine-tuning's learning curves, a panel per (task, protocol): validation accuracy in
    distribution (dark) and the accuracy on the first bin beyond training (orange), one line per
    seed, against the optimiser step: where a run stopped, and whether generalisation was still
    moving when it did. curves: `lengthgen.finetune.curves.read_learning_curves`."""
    tasks = [t for t in dict.fromkeys(curves.get_column("task").to_list())]
    protocols = list(dict.fromkeys(curves.get_column("protocol").to_list()))
    figure, axes = plt.subplots(max(1, len(tasks)), max(1, len(protocols)), squeeze=False, sharey=True,
                                figsize=(3.2 * max(1, len(protocols)), 2.2 * max(1, len(tasks))))
    for row, task in enumerate(tasks):
        for column, protocol in enumerate(protocols):
            ax, part = axes[row][column], curves.filter((pl.col("task") == task) & (pl.col("protocol") == protocol))
            for run in part.partition_by(["model", "seed"], maintain_order=True):
                ax.plot(run["step"], run["validation_accuracy"], color="#333333", linewidth=1, alpha=0.8)
                if run["beyond_accuracy"].null_count() < run.height:
                    ax.plot(run["step"], run["beyond_accuracy"], color="#dd8452", linewidth=1, alpha=0.8)
            if part.height:
                first = part.row(0, named=True)
                ax.set_title(f"{task}, {protocol}: train {first['train_lengths']}, "
                             f"beyond {first['curve_lengths'] or '–'}", fontsize=7)
            ax.set_ylim(-0.03, 1.03)
            if row == len(tasks) - 1:
                ax.set_xlabel("step", fontsize=8)
        axes[row][0].set_ylabel("accuracy", fontsize=8)
    axes[0][0].legend(handles=[Patch(color="#333333", label="validation (training lengths)"),
                               Patch(color="#dd8452", label="first bin beyond training")], fontsize=6)
    figure.suptitle("Fine-tuning learning curves: one line per seed (teacher-forced exact match)", fontsize=9)
    figure.tight_layout()
    return figure


# -- what each figure rule draws (its record: lengthgen.plan.figures) ------------------------------
# Each takes the rule's inputs by name and its params, and returns its images by name.
def _tables(inputs, *names: str) -> list[pl.DataFrame]:
    from ..records.files import read_frame

    return [read_frame(inputs[name]) for name in names]


def _draw_scratch(inputs, params):
    scratch, by_length = _tables(inputs, "scratch", "by_length")
    return {"scratch_bins": accuracy_by_bin(scratch, "From scratch"),
            "scratch_by_length": accuracy_by_length(by_length, "From scratch")}


def _draw_icl(inputs, params):
    (icl,) = _tables(inputs, "icl")
    return {"icl_mirror_pairs": mirror_bars(icl, "accuracy"), "icl_teacher_forced": mirror_bars(icl, "tf_symbol_accuracy")}


def _draw_finetune_curves(inputs, params):
    from ..finetune.curves import read_learning_curves

    return {"finetune_curves": learning_curves(read_learning_curves(inputs["histories"]))}


def _draw_mechanism(inputs, params):
    heads, patching = _tables(inputs, "heads", "patching")
    return {"mechanism_heads": head_maps(heads), "mechanism_patching": patching_bars(patching)}


def _draw_corpora(inputs, params):
    from ..records.tables import read_provenance

    summaries = iter(inputs["summaries"])  # each corpus's summaries in turn, one per pretraining seed
    return {"corpora_history": pretraining_history({corpus: [read_provenance(next(summaries))["history"]
                                                             for _ in range(count)]
                                                    for corpus, count in params["corpora"].items()})}


DRAWINGS = {
    "figure_scratch": _draw_scratch,
    "figure_icl": _draw_icl,
    "figure_finetune": lambda inputs, params: {"finetune_bins": accuracy_by_bin(*_tables(inputs, "finetune"),
                                                                                "Fine-tuned")},
    "figure_finetune_curves": _draw_finetune_curves,
    "figure_comparison": lambda inputs, params: {"comparison": comparison(*_tables(inputs, "comparison"))},
    "figure_mechanism": _draw_mechanism,
    "figure_realistic": lambda inputs, params: {"realistic": realistic_bars(*_tables(inputs, "realistic"))},
    "figure_corpora": _draw_corpora,
}


def draw(rule: str, inputs, params, outputs) -> None:
    """Draw a figure rule's images and write each as its PNG and PDF outputs."""
    for image, figure in DRAWINGS[rule](inputs, params).items():
        save(figure, str(outputs[image])[: -len(".png")])
