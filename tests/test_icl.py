"""In-context evaluation: the authors' scoring, the induction signature of errors, the teacher-forced
measures, the prediction cache, and models placed across devices."""

import math
from types import SimpleNamespace

import polars as pl
import pytest
import torch

from lengthgen.config import model_entry
from lengthgen.icl.predict import predict_files
from lengthgen.icl.scoring import authors_prediction, right_neighbour_error, strict_correct
from lengthgen.icl.teacher import TeacherItem, teacher_forced
from lengthgen.inference.cache import PredictionCache
from lengthgen.inference.text import symbol_separator
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.models.loading import load_model
from lengthgen.models.storage import directory_fingerprint
from lengthgen.settings import ChatSettings
from lengthgen.stats import wilson
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import make_dataset
from tiny_models import tiny_model

TOKENIZER = build_char_tokenizer()


@pytest.mark.parametrize("task,completion,chat,prediction", [
    ("UR", " k", False, "k"),
    ("UR", " k k", False, "kk"),  # the authors score the whole output: wrong
    ("UF", " a b c <eos>", False, "abc"),
    ("UB", " x  y z", False, "xyz"),
    ("UF", "Sure! <target> a b c </target> done", True, "abc"),
    ("UR", "<target> k </target>", True, "k"),
])
def test_the_authors_scoring(task, completion, chat, prediction):
    assert authors_prediction(TASKS[task], completion, chat) == prediction


def authors_chat_reading(task, output: str) -> str:
    """What the authors' pipeline compared for a chat model's output, written from its behaviour
    (retrieval/ and copying/prompt_instruct.py, then copying/evaluation.py): the stripped output
    sliced from just after `<target>` to `</target>` with str.find positions, so a missing tag is
    position -1 (the slice then starts at character 7, or ends before the last character); the
    answer stripped (retrieval) or rid of all whitespace (copying); then spaces and `<eos>` removed."""
    text, opening, closing = output.strip(), "<target>", "</target>"
    start = (text.find(opening) if opening in text else -1) + len(opening)
    stop = text.find(closing) if closing in text else len(text) - 1
    answer = text[start:stop]
    answer = answer.strip() if task.family == "retrieval" else "".join(answer.split())
    return answer.replace(" ", "").replace("<eos>", "").strip()


@pytest.mark.parametrize("task,output,answer,theirs_right", [
    ("UB", "<target>c b a</target> The input reversed.", "cba", True),  # complete tags: both read "cba"
    ("UB", "<target>c b a <eos></target>", "cba", True),  # <eos> as the demonstrations write it
    ("UR", "<target>k <eos></target>", "k", True),
    ("UB", "<target>c b a", "cba", False),  # no closing tag (our decoding always stops before it)
    ("UR", "<target>k", "k", False),  # theirs: "" (the last character dropped)
    ("UB", "c b a", "cba", False),  # no tags at all: theirs starts at character 7
    ("UR", "k", "k", False),
])
def test_chat_answers_as_the_authors_read_them_and_where_ours_differ(task, output, answer, theirs_right):
    assert authors_prediction(TASKS[task], output, True) == answer
    assert (authors_chat_reading(TASKS[task], output) == answer) is theirs_right


def test_strict_scoring_asks_for_the_prompts_own_format():
    assert strict_correct(" a b c <eos>", "a b c", False)
    assert not strict_correct(" abc", "a b c", False)  # right for the authors, not strictly
    assert strict_correct("<target>k</target>", "k", True) and not strict_correct(" k!", "k", False)


def test_right_neighbour_errors_retrieval():
    context = "ABCDE"  # UL with q = C at 2: the left neighbour B is right, D is the induction answer
    assert right_neighbour_error(TASKS["UL"], context, 2, "D", "B") is True
    assert right_neighbour_error(TASKS["UL"], context, 2, "A", "B") is False
    assert right_neighbour_error(TASKS["UL"], context, 2, "B", "B") is None  # correct
    assert right_neighbour_error(TASKS["UR"], context, 2, "B", "D") is None  # a right task has none


def test_right_neighbour_errors_backward_copy():
    context = "ABCDE"  # UB: EDCBA
    assert right_neighbour_error(TASKS["UB"], context, -1, "EDEBA", "EDCBA") is True  # after D, induction gives E
    assert right_neighbour_error(TASKS["UB"], context, -1, "EDABA", "EDCBA") is False
    assert right_neighbour_error(TASKS["UB"], context, -1, "ED", "EDCBA") is False  # stopped early: nothing wrong
    # An error at the first copied symbol: the forward copy's start is the induction error.
    assert right_neighbour_error(TASKS["UB"], context, -1, "ABCDE", "EDCBA") is True
    assert right_neighbour_error(TASKS["UB"], context, -1, "CBA", "EDCBA") is False


class Oracle(torch.nn.Module):
    """A fake causal LM: at every position its logits are 10 for the token that follows in the
    input (and 0 elsewhere), or for `fixed` tokens where given, so every probability is known."""

    def __init__(self, vocab, fixed=None):
        super().__init__()
        self.vocab, self.fixed, self.anchor = vocab, fixed or {}, torch.nn.Parameter(torch.zeros(1))
        self.config = SimpleNamespace(model_type="oracle")  # no position table, no sliding window

    @property
    def device(self):
        return torch.device("cpu")

    def forward(self, input_ids, attention_mask=None, position_ids=None, logits_to_keep=0, use_cache=False):
        logits = torch.zeros(*input_ids.shape, self.vocab)
        logits[:, :-1].scatter_(-1, input_ids[:, 1:, None], 10.0)
        for (row, column), token in self.fixed.items():
            logits[row, column] = 0.0
            logits[row, column, token] = 10.0
        return SimpleNamespace(logits=logits[:, -logits_to_keep:])


def test_teacher_forced_measures_on_a_model_with_known_probabilities():
    item = TeacherItem(" D C | C:", [(" B", True)], neighbours=(" D", " B"))  # UL: left B, right D
    (scores,) = teacher_forced(Oracle(len(TOKENIZER)), TOKENIZER, [item])
    top = math.exp(10) / (math.exp(10) + len(TOKENIZER) - 1)
    assert scores["exact"] and scores["symbol_accuracy"] == 1.0
    assert scores["target_logprob"] == pytest.approx(2 * math.log(top), rel=1e-4)  # " " then "B"
    # The neighbours differ at their second token (the space is shared): B is right, D gets the rest.
    assert scores["p_left"] == pytest.approx(top, rel=1e-4)
    assert scores["p_right"] == pytest.approx((1 - top) / (len(TOKENIZER) - 1), rel=1e-4)
    # A model that puts its mass on the right-hand neighbour instead: it prefers right, and is wrong.
    prompt_length = len(TOKENIZER(item.prompt, add_special_tokens=False).input_ids)
    biased = Oracle(len(TOKENIZER), {(0, prompt_length): TOKENIZER.convert_tokens_to_ids("D")})
    (scores,) = teacher_forced(biased, TOKENIZER, [item])
    assert scores["p_right"] > scores["p_left"] and scores["symbol_accuracy"] == 0.0 and not scores["exact"]


def tiny_gpt2(positions=1024):
    return tiny_model(width=32, positions=positions)


def test_teacher_forced_scores_do_not_depend_on_the_batch():
    items = [TeacherItem("<bos> a b c : a", [(" b", True), (" c", True), (" <eos>", False)]),
             TeacherItem(" x y | x:", [(" y", True)], neighbours=(" y", " z")),
             TeacherItem("a much longer prompt than the others, so the batch is padded:", [(" q", True)])]
    model = tiny_gpt2()
    alone = [teacher_forced(model, TOKENIZER, [item])[0] for item in items]
    together = teacher_forced(model, TOKENIZER, items, batch_size=3)
    for a, b in zip(alone, together):
        assert a["target_logprob"] == pytest.approx(b["target_logprob"], abs=1e-4)
        assert a["symbol_accuracy"] == b["symbol_accuracy"]


def files_of(task_lengths, count=4):
    files = []
    for task, length in task_lengths:
        rows = make_dataset(TASKS[task], "chars", SETTINGS[task], LengthBin(length, length), count, 0).to_pylist()
        files.append({"task": task, "bin": str(length), "seed": 0, "variant": "bare", "rows": rows})
    return files


SETTINGS = {"UR": {"alphabet_size": 62, "occurrence_divisor": 5}, "UL": {"alphabet_size": 62, "occurrence_divisor": 5},
            "UB": {"alphabet_size": 52}}


def completion(**settings) -> dict:
    """predict_files' named settings for a completion model (what the icl_predict rule's params give)."""
    return {"settings": SETTINGS, "chat": False, "separator": " ", "shots": 5, "batch_size": 4, **settings}


def test_predictions_carry_every_measure_and_budget_from_the_answer():
    files = files_of([("UB", 30), ("UL", 12)])
    frame = predict_files(tiny_gpt2(), TOKENIZER, files, **completion(separator="", batch_size=2))
    assert frame.height == 8 and not frame.get_column("correct").any()  # a random model cannot copy
    ub = frame.filter(pl.col("task") == "UB")
    assert (ub.get_column("max_new_tokens") >= 30).all()  # from the answer's length, never a fixed cap
    assert ub.get_column("prompt").str.ends_with(" :").all() and (ub.get_column("separator") == "").all()
    assert frame.get_column("tf_symbol_accuracy").is_between(0, 1).all()
    ul = frame.filter(pl.col("task") == "UL")
    assert ul.get_column("p_right").is_not_null().any() and ub.get_column("p_right").is_null().all()


def test_the_separator_follows_the_tokenizer():
    assert symbol_separator(TOKENIZER) == ""  # one character, one token: no spaces between symbols
    assert symbol_separator(TOKENIZER, "space") == " "


def test_prediction_cache_skips_finished_work(tmp_path):
    model, files = tiny_gpt2(), files_of([("UR", 12)])
    identity = {"model": "tiny", "revision": None, "dtype": "float32"}
    first = predict_files(model, TOKENIZER, files, **completion(), cache=PredictionCache(tmp_path, identity))
    assert not first.get_column("from_cache").any()

    def must_not_load():
        raise AssertionError("the model was loaded although every prediction is cached")

    again = predict_files(must_not_load, TOKENIZER, files, **completion(), cache=PredictionCache(tmp_path, identity))
    assert again.get_column("from_cache").all()
    assert again.drop("from_cache").equals(first.drop("from_cache"))
    # Another variant is another prompt; another dtype is another model identity.
    loads = []
    predict_files(lambda: loads.append(1) or model, TOKENIZER, [{**files[0], "variant": "rule"}], **completion(),
                  cache=PredictionCache(tmp_path, identity))
    predict_files(lambda: loads.append(1) or model, TOKENIZER, files, **completion(),
                  cache=PredictionCache(tmp_path, {**identity, "dtype": "bfloat16"}))
    assert loads == [1, 1]


def test_a_model_larger_than_its_memory_is_spread_and_answers_the_same(tmp_path):
    """An entry with several GPUs (or a memory cap) is placed by accelerate's device_map="auto"; here a
    cap far below the model's size forces it to offload layers, and the answers do not change."""
    model = tiny_gpt2()
    model.save_pretrained(tmp_path / "m")
    TOKENIZER.save_pretrained(tmp_path / "m")
    whole = load_model(model_entry("m", {"path": str(tmp_path / "m")}))
    spread = load_model(model_entry("m", {"path": str(tmp_path / "m"), "gpus": 2, "max_memory": {"cpu": "60KB"}}),
                        offload_folder=str(tmp_path / "offload"))
    assert set(spread.hf_device_map.values()) - {"cpu"}, spread.hf_device_map  # some layers offloaded
    files = files_of([("UB", 10)], count=3)
    a = predict_files(whole, TOKENIZER, files, **completion(batch_size=3))
    b = predict_files(spread, TOKENIZER, files, **completion(batch_size=3))
    assert a.get_column("completion").to_list() == b.get_column("completion").to_list()
    assert a.get_column("target_logprob").to_list() == pytest.approx(b.get_column("target_logprob").to_list(), abs=1e-4)


def test_directory_fingerprint_follows_content(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "model.safetensors").write_bytes(b"weights-1")
    (tmp_path / "a" / "config.json").write_text("{}")
    before = directory_fingerprint(tmp_path / "a")
    copy = tmp_path / "b"
    copy.mkdir()
    for f in (tmp_path / "a").iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    assert directory_fingerprint(copy) == before  # a copy is the same model
    (tmp_path / "a" / "model.safetensors").write_bytes(b"weights-2")
    assert directory_fingerprint(tmp_path / "a") != before  # retrained in place: a new model


def example_rows(right_correct, left_correct, variant="bare", seed=0, right="UR", left="UL", tf_shift=0.0):
    """Prediction rows of a mirror pair on the same examples (as the prediction files hold them)."""
    rows = []
    for task, outcomes in ((right, right_correct), (left, left_correct)):
        for example, correct in enumerate(outcomes):
            rows.append({"model": "m", "task": task, "bin": "10", "seed": seed, "variant": variant, "example": example,
                         "correct": bool(correct), "tf_symbol_accuracy": float(correct) + (tf_shift if task == right
                                                                                           else 0.0),
                         "p_right": 0.6 if task == left else None, "p_left": 0.4 if task == left else None})
    return pl.DataFrame(rows, schema_overrides={"p_right": pl.Float64, "p_left": pl.Float64})


def test_pair_tests_call_a_difference_a_finding_only_when_the_paired_test_does():
    from lengthgen.icl.table import pair_tests

    # 12 examples right only on UR, 38 where the two agree: McNemar p = 2 / 2**12.
    clear = pair_tests(example_rows([1] * 12 + [1] * 30 + [0] * 8, [0] * 12 + [1] * 30 + [0] * 8))
    accuracy = clear.filter(pl.col("measure") == "accuracy").row(0, named=True)
    assert (accuracy["first"], accuracy["second"]) == ("UR", "UL")
    assert (accuracy["first_value"], accuracy["second_value"], accuracy["pairs"]) == (42 / 50, 30 / 50, 50)
    assert accuracy["p"] == pytest.approx(2 / 2 ** 12) and accuracy["significant"]
    assert accuracy["verdict"].startswith("right/forward above")
    assert (accuracy["first_low"], accuracy["first_high"]) == pytest.approx(wilson(42, 50))
    preference = clear.filter(pl.col("measure") == "right_preference").row(0, named=True)
    assert preference["first_value"] == 1.0 and preference["verdict"].startswith("prefers the right-hand")
    # 3 against 2 discordant examples: a difference, but noise.
    noise = pair_tests(example_rows([1, 1, 1, 0, 0] + [1] * 20, [0, 0, 0, 1, 1] + [1] * 20))
    accuracy = noise.filter(pl.col("measure") == "accuracy").row(0, named=True)
    assert accuracy["difference"] > 0 and not accuracy["significant"]
    assert accuracy["verdict"].startswith("not distinguishable from noise")
    # Examples pair across tasks by (bin, seed, variant, example), never across seeds.
    two_seeds = pl.concat([example_rows([1] * 8, [0] * 8, seed=0), example_rows([0] * 8, [1] * 8, seed=1)])
    accuracy = pair_tests(two_seeds).filter(pl.col("measure") == "accuracy").row(0, named=True)
    assert accuracy["pairs"] == 16 and accuracy["p"] == 1.0


def test_every_cell_has_an_interval_over_its_examples():
    from lengthgen.icl.table import intervals

    one = intervals(example_rows([1] * 30 + [0] * 70, [0] * 100), ["model", "task", "bin", "variant"])
    ur = one.filter(pl.col("task") == "UR").row(0, named=True)
    assert ur["examples"] == 100 and (ur["accuracy_low"], ur["accuracy_high"]) == pytest.approx(wilson(30, 100))
    # Two prompt variants of the same examples: resampled together, never counted as 200 examples.
    both = pl.concat([example_rows([1] * 30 + [0] * 70, [0] * 100, variant=v) for v in ("bare", "rule")])
    pooled = intervals(both.with_columns(pl.lit("all").alias("variant")), ["model", "task", "bin", "variant"])
    ur = pooled.filter(pl.col("task") == "UR").row(0, named=True)
    assert ur["examples"] == 100 and ur["accuracy_low"] < 0.3 < ur["accuracy_high"]
    assert ur["accuracy_high"] - ur["accuracy_low"] > 0.8 * (wilson(30, 100)[1] - wilson(30, 100)[0])


CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_chat_models_run_with_their_budget_floor_and_generation_prompt_setting():
    """The authors' chat runs: 20 / 400 new tokens (here a floor: a longer answer still gets its own
    length), and the template without the assistant's header; the teacher-forced measures read the
    answer after the header either way."""
    tokenizer = build_char_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    files = files_of([("UR", 12), ("UB", 10)], count=2)
    for file in files:
        file["variant"] = "simple_rule_explained" if file["task"] == "UR" else "obey"
    floors = {"retrieval": 10, "copying": 60}  # below the retrieval answer's own need, above the copy's
    frames = {header: predict_files(tiny_gpt2(2048), tokenizer, files, **completion(chat=True, shots=2, batch_size=2),
                                    chat_settings=ChatSettings(variants={}, max_new_tokens=floors, prompt="lengthgen",
                                                               generation_prompt=header))
              for header in (True, False)}
    ours, theirs = frames[True], frames[False]
    assert ours.get_column("prompt").str.ends_with("<|end|><|assistant|>").all()
    assert theirs.get_column("prompt").str.ends_with("<|end|>").all()
    own = {"UR": len("<target>k</target>") + 8, "UB": len("<target>" + " ".join("x" * 10) + "</target>") + 8}
    for row in theirs.iter_rows(named=True):
        floor = floors["retrieval" if row["task"] == "UR" else "copying"]
        assert row["max_new_tokens"] == max(floor, own[row["task"]])  # one character, one token
    assert ours.get_column("target_logprob").to_list() == theirs.get_column("target_logprob").to_list()


def test_chat_models_get_the_authors_variants_in_the_paper_preset():
    """Their chat runs: retrieval with simple_rule_explained only, copying with obey and hint; the
    completion models every variant. Without icl.chat.variants, chat models get icl.variants."""
    import yaml

    from lengthgen.config import icl_variants, validate_config

    paper = validate_config(yaml.safe_load(open(__import__("conftest").REPO / "configs" / "paper.yaml")),
                            check_availability=False)["icl"]
    assert icl_variants(paper, "retrieval", "chat") == ["simple_rule_explained"]
    assert icl_variants(paper, "copying", "chat") == ["obey", "hint_examples"]
    assert icl_variants(paper, "copying", "completion") == ["bare", "obey", "hint_examples"]
    assert len(icl_variants(paper, "retrieval", "completion")) == 4
    assert (paper["chat"]["max_new_tokens"], paper["chat"]["generation_prompt"], paper["chat"]["prompt"]) == (
        {"retrieval": 20, "copying": 400}, False, "authors")
    default = validate_config({}, check_availability=False)["icl"]
    assert icl_variants(default, "copying", "chat") == icl_variants(default, "copying", "completion")
    assert default["chat"]["generation_prompt"] is True


def test_the_asymmetry_lines_state_each_pair_with_its_interval_and_verdict():
    """What icl.md says about induction asymmetry: per model and measure, one line naming each
    mirror pair's two values with their intervals and the paired test's verdict (the number of
    paired examples: the largest pair's), and for left retrieval tasks the share preferring the
    right-hand neighbour."""
    from lengthgen.icl.table import asymmetry

    def pair(model, measure, first, second, values, pairs, verdict):
        (a, a_low, a_high), (b, b_low, b_high) = values
        return {"model": model, "measure": measure, "first": first, "second": second, "first_value": a,
                "first_low": a_low, "first_high": a_high, "second_value": b, "second_low": b_low,
                "second_high": b_high, "pairs": pairs, "verdict": verdict}

    pairs = pl.DataFrame([
        pair("m1", "accuracy", "UR", "UL", ((0.9, 0.8, 0.95), (0.4, 0.3, 0.5)), 40, "right/forward above (p = 0.001)"),
        pair("m1", "right_preference", "right-hand neighbour", "left-hand neighbour (UL)",
             ((0.75, 0.6, 0.85), (0.25, 0.15, 0.4)), 40, "prefers the right-hand neighbour (p = 0.01)"),
        pair("m1", "accuracy", "UF", "UB", ((0.5, 0.4, 0.6), (0.5, 0.4, 0.6)), 30, "not distinguishable from noise (p = 1)"),
        pair("m2", "accuracy", "UR", "UL", ((0.1, 0.05, 0.2), (0.3, 0.2, 0.4)), 20, "left/backward above (p = 0.04)"),
    ])
    assert asymmetry(pairs) == [
        "- m1, accuracy (n = 40 paired examples per pair): UR 0.90 [0.80, 0.95] vs UL 0.40 [0.30, 0.50]: "
        "right/forward above (p = 0.001); UF 0.50 [0.40, 0.60] vs UB 0.50 [0.40, 0.60]: not distinguishable from "
        "noise (p = 1).",
        "- m1, left retrieval tasks, share of examples preferring the right-hand neighbour: UL: 0.75 [0.60, 0.85], "
        "prefers the right-hand neighbour (p = 0.01).",
        "- m2, accuracy (n = 20 paired examples per pair): UR 0.10 [0.05, 0.20] vs UL 0.30 [0.20, 0.40]: "
        "left/backward above (p = 0.04).",
    ]


def test_one_task_without_its_mirror_has_nothing_to_compare_and_its_finding_is_not_run():
    """`tasks: [UF]`: no mirror pair, so the pairs table is empty; its markdown and the finding say so."""
    from lengthgen.icl.table import asymmetry, pair_tests
    from lengthgen.results.findings import in_context_finding
    from lengthgen.results.verdicts import NOT_RUN

    examples = pl.DataFrame({"model": ["m"] * 2, "task": ["UF"] * 2, "bin": ["5"] * 2, "seed": [0, 0],
                             "example": [0, 1], "variant": ["a", "a"], "correct": [True, False],
                             "tf_symbol_accuracy": [1.0, 0.5]})
    pairs = pair_tests(examples)
    assert pairs.is_empty()
    assert asymmetry(pairs) == ["- nothing to compare: the config's tasks hold no mirror pair."]
    assert set(in_context_finding(pairs)["verdict"]) == {NOT_RUN}
