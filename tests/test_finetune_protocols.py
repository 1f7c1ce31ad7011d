"""Fine-tuning protocols: named complete settings merged over the section, a grid axis in the
paths, each judged as its own system."""

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pyarrow as pa
import pytest
import yaml

from lengthgen.config import ConfigError, validate_config
from lengthgen.finetune.tables import system_label, write_finetune_pairs
from lengthgen.plan import data, finetune
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet

REPO = Path(__file__).resolve().parents[1]


def declared(*overlays) -> dict:
    """The study's preset with its overlays (default: the training protocols too), as written."""
    config = yaml.safe_load((REPO / "configs/finetune_protocols.yaml").read_text())
    for name in overlays or ("configs/finetune_protocols_training.yaml",):
        config["finetune"]["protocols"].update(yaml.safe_load((REPO / name).read_text())["finetune"]["protocols"])
    return config


def preset(*overlays, **changes) -> dict:
    """The study's preset with its overlays, as a run loads them (validated: each protocol resolved)."""
    config = declared(*overlays)
    config["finetune"].update(changes)
    return validate_config(config, check_availability=False)


def test_a_protocol_changes_only_what_it_names_and_runs_its_own_seeds():
    config = preset()
    default, full = (finetune.train_params(config, "embedded", "UF", p).as_config() for p in ("default", "full-budget"))
    assert full["training"] == {**default["training"], "max_steps": 7800, "early_stop": False, "patience": None}
    assert full["keep"] == "last" and "keep" not in default and "init" not in default
    assert finetune.train_params(config, "embedded", "UF", "from-random").as_config()["init"] == "random"
    lengths = finetune.train_params(config, "embedded", "NRFirst", "paper-lengths").as_config()
    assert (lengths["train_lengths"], lengths["max_length"]) == ("3-50", 200)
    assert finetune.eval_params(config, "UF", "paper-lengths").as_config()["bins"] == ["2-31", "32-52"]
    # every fine-tuning scores its first bin beyond training at each evaluation (the learning curve)
    assert (lengths["curve_lengths"], default["curve_lengths"]) == ("51-100", "13-25")
    evals = finetune.evals(config)
    assert "results/finetune/embedded/full-budget/UB/seed2/eval.parquet" in evals
    assert "results/finetune/embedded/paper-lr/UB/seed0/eval.parquet" in evals
    assert "results/finetune/embedded/paper-lr/UB/seed1/eval.parquet" not in evals  # paper-lr: seed 0 only
    assert len(evals) == 6 * (3 * 3 + 3 * 1)
    files = data.data_files(config)
    assert "results/data/finetune/NRFirst/101-200/seed2.parquet" in files
    assert "results/data/finetune/UF/32-52/seed1.parquet" in files


def test_the_studys_default_protocol_is_the_default_run_so_its_models_are_the_same_jobs():
    study, alone = preset(), validate_config(yaml.safe_load((REPO / "configs/finetune_only.yaml").read_text()),
                                             check_availability=False)
    for task in study["tasks"]:
        assert finetune.train_params(study, "embedded", task, "default") == finetune.train_params(alone, "embedded", task)
        assert finetune.eval_params(study, task, "default") == finetune.eval_params(alone, task)


def test_without_protocols_the_section_is_the_default_protocol():
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()), check_availability=False)
    # validation resolves the one protocol: the section as it stands, the run's seeds
    section = {key: value for key, value in config["finetune"].items() if key not in ("protocols", "models")}
    assert config["finetune"]["protocols"] == {"default": {**section, "seeds": config["seeds"]}}
    assert finetune.evals(config)[0] == "results/finetune/embedded/default/UR/seed0/eval.parquet"
    assert set(finetune.train_params(config, "embedded", "UF").as_config()) == {
        "model", "data", "format", "train_lengths", "max_length", "curve_lengths", "train_examples", "training"}


def test_a_protocols_learning_rate_reaches_the_optimiser_as_the_job_passes_it_on(tmp_path):
    """The fine-tuning lr from the config to the optimiser, the job's way: validation resolves the
    protocol, the planner types the job's settings, Snakemake carries them as a dict (the params),
    the job types them again and builds its run, whose optimiser starts from that lr."""
    from lengthgen.config import model_entry
    from lengthgen.finetune.train import finetune_run
    from lengthgen.settings import FinetuneTaskSettings
    from lengthgen.tasks import get_task
    from tiny_models import save_tiny_model

    save_tiny_model(tmp_path / "tiny")
    config = validate_config({"models": {"tiny": {"path": str(tmp_path / "tiny")}}, "finetune": {
        "models": ["tiny"], "training": {"lr": 2e-4},
        "protocols": {"default": {}, "fast": {"training": {"lr": 3e-3}}}}}, check_availability=False)
    for protocol, lr in (("default", 2e-4), ("fast", 3e-3)):
        params = finetune.train_params(config, "tiny", "UF", protocol).as_config()
        settings = FinetuneTaskSettings.from_config(params)
        run, _ = finetune_run(model_entry("tiny", settings.model), get_task("UF"), 0, settings, None)
        assert [group["initial_lr"] for group in run.optimizer.param_groups] == [lr] * len(run.optimizer.param_groups)


def test_a_protocol_with_no_seeds_is_declared_but_not_run():
    """A study run in parts (resources/finetune_protocols/): `seeds: []` keeps the protocol's
    definition in the preset and plans none of its jobs, nor its tables' rows."""
    config = preset(protocols={**declared()["finetune"]["protocols"], "paper-lr": {"seeds": []}, "lr-1e-4": {"seeds": []},
                               "from-random": {"init": "random", "seeds": []}})
    assert set(finetune.protocols(config)) == {"default", "paper-lengths", "full-budget"}
    assert len(finetune.evals(config)) == 6 * 3 * 3
    assert set(finetune.tables_params(config)["protocols"]) == {"default", "paper-lengths", "full-budget"}


@pytest.mark.parametrize("protocols, message", [
    ({"x": {"seeds": []}}, "config key finetune.protocols: every protocol has `seeds: []`, so nothing is fine-tuned"),
    ({"x": {"training": {"lr": 0}}}, "config key finetune.protocols.x.training.lr: 0 is less than or equal to"),
    ({"x": {"keep": "first"}}, "config key finetune.protocols.x.keep: 'first' is not one of ['best', 'last']"),
    ({"x": {"seeds": [7]}}, "config key finetune.protocols.x.seeds: [7] are not all among the run's seeds [0, 1, 2]"),
    ({"x": {"models": ["smollm2"]}}, "config key finetune.protocols.x: Additional properties are not allowed"),
    ({"x": {"test_bins": {"copying": ["2-31", "32-62"]}}},
     "config key finetune.protocols.x.test_bins.copying[1] (with data.finetune.unique_copy): unique copy of length 62"),
])
def test_a_bad_protocol_is_named_by_its_key(protocols, message):
    with pytest.raises(ConfigError) as error:
        preset(protocols=protocols)
    assert str(error.value).startswith(message), str(error.value)


def write_evals(root, protocol, task, length_bin, outcomes):
    path = root / f"results/finetune/tiny/{protocol}/{task}/seed0/eval.parquet"
    rows = len(outcomes)
    write_parquet(pl.DataFrame({
        "system": [system_label("tiny", protocol)] * rows, "task": [task] * rows, "seed": [0] * rows,
        "bin": [length_bin] * rows, "length": [30] * rows, "teacher_forced": outcomes, "greedy": outcomes,
        "example": list(range(rows))}), path, {"seed": 0})
    return path


def write_inputs(root, task, length_bin, rows):
    path = root / f"results/data/finetune/{task}/{length_bin}/seed0.parquet"
    write_parquet(pl.DataFrame({
        "encoding": ["finetune"] * rows, "task": [task] * rows, "bin": [length_bin] * rows, "seed": [0] * rows,
        "example": list(range(rows)), "context": [[i, i + 1] for i in range(rows)], "query": [0] * rows}),
        path, {"seed": 0})
    return path


def test_each_protocol_is_its_own_system_judged_by_its_own_training_lengths(tmp_path):
    """21-40 is beyond the default's training lengths (3-20) but inside the paper's (3-50)."""
    outcomes = {"NRFirst": [True] * 18 + [False] * 2, "NLFirst": [True] * 10 + [False] * 10}
    evals = [write_evals(tmp_path, protocol, task, "21-40", values)
             for protocol in ("default", "paper-lengths") for task, values in outcomes.items()]
    inputs = [write_inputs(tmp_path, task, "21-40", 20) for task in outcomes]
    protocols = {"default": {"train_lengths": {"retrieval": "3-20", "copying": "2-12"}, "bins": {}},
                 "paper-lengths": {"train_lengths": {"retrieval": "3-50", "copying": "2-31"}, "bins": {}}}
    outputs = SimpleNamespace(parquet=tmp_path / "pairs.parquet", markdown=tmp_path / "pairs.md")
    write_finetune_pairs(evals, inputs, protocols, ["tiny"], Provenance({}), outputs)
    pairs = pl.read_parquet(outputs.parquet).filter(pl.col("measure") == "teacher_forced")
    rows = {r["system"]: r for r in pairs.iter_rows(named=True)}
    assert set(rows) == {"tiny", "tiny/paper-lengths"}
    assert (rows["tiny"]["protocol"], rows["tiny"]["beyond_training"]) == ("default", True)
    assert (rows["tiny/paper-lengths"]["protocol"], rows["tiny/paper-lengths"]["beyond_training"]) == (
        "paper-lengths", False)
    assert rows["tiny"]["difference"] == pytest.approx(0.4)
    text = outputs.markdown.read_text()
    assert "Fine-tuned, protocol default" in text and "Fine-tuned, protocol paper-lengths" in text


def test_a_random_initialisation_keeps_the_architecture_and_draws_new_weights(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from lengthgen.finetune.train import randomly_initialised
    from tiny_models import save_tiny_model

    save_tiny_model(tmp_path / "tiny")
    pretrained = AutoModelForCausalLM.from_pretrained(tmp_path / "tiny")
    fresh, again = randomly_initialised(pretrained, 3), randomly_initialised(pretrained, 3)
    assert fresh.config.to_dict() == pretrained.config.to_dict()
    weights = dict(pretrained.named_parameters())
    assert all(p.shape == weights[n].shape for n, p in fresh.named_parameters())
    assert not torch.equal(next(fresh.parameters()), next(pretrained.parameters()))
    assert all(torch.equal(p, q) for p, q in zip(fresh.parameters(), again.parameters()))  # drawn from the seed


LENGTHS = {"default": {"train_lengths": {"retrieval": "3-20", "copying": "2-12"},
                       "bins": {"retrieval": ["3-20", "21-40", "41-80"], "copying": ["2-12", "13-25", "26-50"]}},
           "paper-lengths": {"train_lengths": {"retrieval": "3-50", "copying": "2-31"},
                             "bins": {"retrieval": ["3-50", "51-100", "101-200"], "copying": ["2-31", "32-52"]}}}


def finding_row(system, first, second, length, verdict, finding=3):
    return {"finding": finding, "claim": "mirrors agree", "kind": "agree", "first": first, "second": second,
            "system": system, "length": length, "seeds": 3, "first_value": 0.9, "second_value": 0.6,
            "difference": 0.3, "difference_low": 0.2, "difference_high": 0.4, "verdict": verdict}


def test_the_robustness_table_matches_a_comparison_across_protocols_by_its_place_beyond_training():
    """21-40 (default) and 51-100 (the paper's lengths) are each protocol's first bin past training:
    the same comparison; a verdict equal under both holds, one that differs depends on the protocol,
    one judged by a single protocol says so; other findings and other models are not read."""
    from lengthgen.finetune.robustness import DEPENDS, HOLDS, NONE, ONE, beyond_place, robustness_table

    findings = pl.DataFrame([
        finding_row("tiny", "NRFirst", "NLFirst", "21-40", "contradicted"),
        finding_row("tiny", "NRFirst", "NLFirst", "41-80", "contradicted"),
        finding_row("tiny/paper-lengths", "NRFirst", "NLFirst", "51-100", "contradicted"),
        finding_row("tiny/paper-lengths", "NRFirst", "NLFirst", "101-200", "shown"),
        finding_row("tiny", "UF", "UB", "13-25", "contradicted"),
        finding_row("tiny/paper-lengths", "UF", "UB", "32-52", "not learnt"),  # gated: judged nothing
        finding_row("tiny/paper-lengths", "NLFirst", "NLLast", "51-100", "not learnt"),
        finding_row("tiny", "UF", "UB", "13-25", "shown", finding=1),
        finding_row("other/paper-lengths", "UF", "UB", "32-52", "shown"),
        finding_row("tiny", "NLLast drop", "NLFirst drop", "21-40", "shown"),  # a drop comparison: not a place's
    ])
    accuracies = pl.DataFrame({"system": ["tiny/paper-lengths", "tiny/paper-lengths"], "task": ["NRFirst", "NLFirst"],
                               "bin": ["51-100", "51-100"], "accuracy_std": [0.05, 0.125]})
    table = robustness_table(findings, accuracies, LENGTHS, ["tiny"])
    rows = {(r["protocol"], r["first"], r["beyond"]): r for r in table.iter_rows(named=True)}
    assert set(rows) == {("default", "NRFirst", 1), ("default", "NRFirst", 2), ("paper-lengths", "NRFirst", 1),
                         ("paper-lengths", "NRFirst", 2), ("default", "UF", 1), ("paper-lengths", "UF", 1),
                         ("paper-lengths", "NLFirst", 1)}
    first_beyond = [rows[protocol, "NRFirst", 1]["across_protocols"] for protocol in ("default", "paper-lengths")]
    assert first_beyond == [HOLDS, HOLDS]
    assert rows["default", "NRFirst", 2]["across_protocols"] == DEPENDS
    assert rows["default", "UF", 1]["across_protocols"] == ONE  # the paper's lengths gated it: not a change
    assert rows["paper-lengths", "NLFirst", 1]["across_protocols"] == NONE
    paper = rows["paper-lengths", "NRFirst", 1]
    assert (paper["bin"], paper["first_std"], paper["second_std"]) == ("51-100", 0.05, 0.125)
    assert rows["default", "NRFirst", 1]["first_std"] is None  # not in the fine-tuning table given
    assert beyond_place(LENGTHS["default"]["bins"]["retrieval"], "3-20", "3-20") is None  # in distribution


def test_learning_curves_read_each_runs_evaluations_with_who_it_is(tmp_path):
    """The histories' own provenance says which (model, protocol, task, seed) each curve is; a run
    without the beyond-training score has nulls there, not a missing column; the figure has a
    panel per task and protocol."""
    from lengthgen.engine.run import write_history
    from lengthgen.finetune.curves import read_learning_curves
    from lengthgen.results.figures import learning_curves

    def history(protocol, task, beyond):
        path = tmp_path / f"results/finetune/tiny/{protocol}/{task}/seed1/training.parquet"
        metrics = [{"beyond_accuracy": b} for b in beyond] if beyond else [{}, {}]
        summary = {"steps": 200, "best_accuracy": 1.0, "resumed_from": None,
                   "history": {"steps": [100, 200], "losses": [1.0, 0.5], "accuracies": [0.5, 1.0], "metrics": metrics}}
        section = {"train_lengths": "3-20", **({"curve_lengths": "21-40"} if beyond else {})}
        write_history(summary, path, Provenance(section), 1, "cpu",
                      {"model": "tiny", "protocol": protocol, "task": task, "seed": "1"})
        return path

    curves = read_learning_curves([history("default", "NRFirst", [0.25, 0.75]),
                                   history("paper-lengths", "NRFirst", None), history("default", "UF", [0.0, 0.5])])
    assert curves.height == 6 and set(curves.get_column("seed")) == {1}
    first = curves.filter((pl.col("protocol") == "default") & (pl.col("task") == "NRFirst"))
    assert first.get_column("beyond_accuracy").to_list() == [0.25, 0.75]
    assert first.get_column("curve_lengths").to_list() == ["21-40", "21-40"]
    assert curves.filter(pl.col("protocol") == "paper-lengths").get_column("beyond_accuracy").null_count() == 2
    figure = learning_curves(curves)
    assert len(figure.axes) == 2 * 2  # tasks NRFirst, UF x protocols default, paper-lengths


def test_the_study_runs_in_parts_each_a_valid_overlay_adding_its_own_runs():
    """resources/finetune_protocols/parts/: each part, over the preset (and the training overlay for
    the full budget), plans the runs before it and its own, in the order the study asked; the full
    budget runs alone (its tables are combined with the others by `lengthgen robustness`)."""
    parts = REPO / "resources/finetune_protocols/parts"

    def planned(*overlays):
        config = yaml.safe_load((REPO / "configs/finetune_protocols.yaml").read_text())
        for overlay in overlays:
            merge(config, yaml.safe_load((REPO / overlay).read_text()))
        config = validate_config(config, check_availability=False)
        return {(p, s) for p in finetune.protocols(config) for s in protocol_seeds_of(config, p)}

    seed0 = planned(parts / "seed0.yaml")
    seed1 = planned(parts / "paper_lengths_seed1.yaml")
    seed2 = planned(parts / "paper_lengths_seed2.yaml")
    full = planned("configs/finetune_protocols_training.yaml", parts / "full_budget_seed0.yaml")
    assert seed0 == {("default", 0), ("paper-lengths", 0)}
    assert seed1 == seed0 | {("paper-lengths", 1)} and seed2 == seed1 | {("paper-lengths", 2)}
    assert full == {("full-budget", 0)}  # a part of its own: `lengthgen robustness` combines it with the others


def merge(base: dict, overlay: dict) -> None:
    """Snakemake's merge of a second --configfile: mappings key by key, anything else replaced."""
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value


def protocol_seeds_of(config, protocol):
    from lengthgen.config.sections import protocol_seeds

    return protocol_seeds(config, protocol)


def test_a_study_run_in_parts_is_judged_across_all_its_protocols(tmp_path, capsys):
    """Two parts, each with its own protocols: the combined table has every row once and judges
    `across_protocols` again over both (a verdict that differs between parts depends on the protocol);
    a protocol in two parts is one error; each part's record is named."""
    from lengthgen.cli import main
    from lengthgen.finetune.robustness import DEPENDS, HOLDS, ONE, write_finetune_robustness
    from lengthgen.records.tables import read_provenance

    full = {"full-budget": LENGTHS["default"]}
    parts = {"lengths": (LENGTHS, [finding_row("tiny", "NRFirst", "NLFirst", "21-40", "contradicted"),
                                   finding_row("tiny/paper-lengths", "NRFirst", "NLFirst", "51-100", "shown"),
                                   finding_row("tiny", "UF", "UB", "13-25", "contradicted")]),
             "training": (full, [finding_row("tiny/full-budget", "NRFirst", "NLFirst", "21-40", "shown"),
                                 finding_row("tiny/full-budget", "UF", "UB", "13-25", "contradicted"),
                                 finding_row("tiny/full-budget", "UF", "UB", "26-50", "shown")])}
    paths = []
    for name, (protocols, rows) in parts.items():
        (tmp_path / name).mkdir()
        findings, accuracies = tmp_path / name / "findings.parquet", tmp_path / name / "finetune.parquet"
        write_parquet(pa.Table.from_pylist(rows), findings, Provenance({"part": name}).record())
        write_parquet(pa.table({"system": ["tiny"], "task": ["UF"], "bin": ["13-25"], "accuracy_std": [0.1]}),
                      accuracies, Provenance({"part": name}).record())
        outputs = SimpleNamespace(parquet=tmp_path / name / "robustness.parquet", markdown=tmp_path / name / "r.md")
        write_finetune_robustness(findings, accuracies, protocols, ["tiny"], Provenance({"part": name}), outputs)
        paths.append(str(outputs.parquet))
    assert main(["robustness", str(tmp_path / "combined"), *paths]) == 0
    table = pl.read_parquet(tmp_path / "combined.parquet")
    rows = {(r["protocol"], r["first"], r["beyond"]): r["across_protocols"] for r in table.iter_rows(named=True)}
    assert rows == {("default", "NRFirst", 1): DEPENDS, ("paper-lengths", "NRFirst", 1): DEPENDS,
                    ("full-budget", "NRFirst", 1): DEPENDS, ("default", "UF", 1): HOLDS,
                    ("full-budget", "UF", 1): HOLDS, ("full-budget", "UF", 2): ONE}
    markdown = (tmp_path / "combined.md").read_text()
    assert "| default | paper-lengths | full-budget |" in markdown and markdown.count("robustness.parquet: config hash") == 2
    assert [p["table"] for p in read_provenance(tmp_path / "combined.parquet")["config"]["parts"]] == paths
    assert main(["robustness", str(tmp_path / "again"), paths[0], paths[0]]) == 2
    assert "protocol 'default' is in two parts" in capsys.readouterr().err
    assert not (tmp_path / "again.parquet").exists()


def test_the_positions_study_turns_offsets_off_in_its_control_only():
    config = validate_config(yaml.safe_load((REPO / "configs/finetune_positions.yaml").read_text()),
                             check_availability=False)
    default, control = (finetune.train_params(config, "embedded", "UB", p).as_config() for p in ("default", "no-offsets"))
    assert "position_offsets" not in default and control["position_offsets"] is False  # the default's jobs unchanged
    assert {k: v for k, v in control.items() if k != "position_offsets"} == default
    alone = validate_config(yaml.safe_load((REPO / "configs/finetune_only.yaml").read_text()), check_availability=False)
    assert finetune.train_params(config, "embedded", "UB", "default") == finetune.train_params(alone, "embedded", "UB")


def mirror_row(system, first, second, bin_, firsts, seconds, examples=100):
    return {"system": system, "comparison": "mirror pair", "measure": "teacher_forced", "first": first,
            "second": second, "bin": bin_, "beyond_training": bin_ != "2-12", "pairs": examples * len(firsts),
            "first_per_seed": firsts, "second_per_seed": seconds}


def test_the_interaction_compares_each_seeds_mirror_gap_between_protocols_paired_by_seed(tmp_path, capsys):
    """UF - UB per seed: 0.8, 0.7, 0.75 by default, 0.1, 0.2, 0.0 without offsets: the interaction is the
    mean of the seeds' differences (0.65), a one-sample t over 3 seeds; a pair the control did not run,
    or ran on other seeds, is left out."""
    from scipy import stats

    from lengthgen.cli import main
    from lengthgen.finetune.interaction import interaction_table, write_interaction

    pairs = pl.DataFrame([
        mirror_row("embedded", "UF", "UB", "13-25", [0.9, 0.8, 0.85], [0.1, 0.1, 0.1]),
        mirror_row("embedded/no-offsets", "UF", "UB", "13-25", [0.2, 0.3, 0.1], [0.1, 0.1, 0.1]),
        mirror_row("embedded", "NRFirst", "NLFirst", "41-80", [0.9, 0.9, 0.9], [0.7, 0.7, 0.7]),
        mirror_row("embedded/no-offsets", "NRFirst", "NLFirst", "41-80", [0.9, 0.9], [0.7, 0.7]),
        mirror_row("embedded", "UR", "UL", "41-80", [0.9, 0.9, 0.9], [0.9, 0.9, 0.9]),
    ])
    table = interaction_table(pairs)
    assert table.height == 1
    row = table.row(0, named=True)
    assert (row["protocol"], row["first"], row["second"], row["bin"]) == ("no-offsets", "UF", "UB", "13-25")
    assert row["baseline_per_seed"] == pytest.approx([0.8, 0.7, 0.75])
    assert row["protocol_per_seed"] == pytest.approx([0.1, 0.2, 0.0])
    assert row["difference"] == pytest.approx(0.65)
    assert row["p"] == pytest.approx(stats.ttest_1samp([0.7, 0.5, 0.75], 0).pvalue)
    assert row["verdict"].startswith("the gap wider under default") == (row["p_holm"] < 0.05)
    write_parquet(pairs, tmp_path / "pairs.parquet", Provenance({"x": 1}).record())
    assert main(["interaction", str(tmp_path / "pairs.parquet"), str(tmp_path / "out" / "interaction")]) == 0
    assert (tmp_path / "out" / "interaction.md").read_text().count("+0.65 [") == 1
    lonely = pairs.filter(pl.col("system") == "embedded")
    write_parquet(lonely, tmp_path / "lonely.parquet", Provenance({"x": 1}).record())
    assert main(["interaction", str(tmp_path / "lonely.parquet"), str(tmp_path / "none")]) == 2
    assert "no mirror pair shared by 'default'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no mirror pair"):
        write_interaction(tmp_path / "lonely.parquet", tmp_path / "none")
