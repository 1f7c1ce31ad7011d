"""In-context evaluation: scoring, budgets from the answer length, the induction-bias signature."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from lengthgen.icl.cache import PredictionCache
from lengthgen.icl.predict import evaluate_rows, parse_chat, right_neighbour_error
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.models.storage import directory_fingerprint
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import make_dataset

TOKENIZER = build_char_tokenizer()


def test_right_neighbour_error_retrieval():
    row = {"context_text": "ABCDE", "target_position": 2, "target_text": "B"}  # UL: left of C is B
    assert right_neighbour_error(TASKS["UL"], row, "D") is True
    assert right_neighbour_error(TASKS["UL"], row, "A") is False
    assert right_neighbour_error(TASKS["UL"], row, "B") is None
    assert right_neighbour_error(TASKS["UR"], {**row, "target_text": "D"}, "B") is None


def test_right_neighbour_error_backward_copy():
    row = {"context_text": "ABCDE", "target_position": -1, "target_text": "EDCBA"}
    assert right_neighbour_error(TASKS["UB"], row, "E D E B A") is True  # after D, the induction move gives E
    assert right_neighbour_error(TASKS["UB"], row, "E D A B A") is False
    assert right_neighbour_error(TASKS["UB"], row, "E D") is False  # stopped early: no wrong symbol to classify


def test_chat_answer_between_tags():
    assert parse_chat(TASKS["UF"], "Sure! <target> a b c </target> done") == "a b c"
    assert parse_chat(TASKS["UR"], "<target>k") == "k"


def test_evaluate_rows_on_a_tiny_model():
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(TOKENIZER), n_embd=32, n_layer=1, n_head=2, n_positions=1024,
                                       eos_token_id=TOKENIZER.eos_token_id, bos_token_id=TOKENIZER.bos_token_id)).eval()
    settings = {"alphabet_size": 52}
    rows = make_dataset(TASKS["UB"], "chars", settings, LengthBin.parse("30"), 3, 0).to_pylist()
    frame = evaluate_rows(model, TOKENIZER, rows, TASKS["UB"], settings, 0, "bare", batch_size=2)
    assert frame.height == 3 and not frame.get_column("correct").any()  # a random model cannot copy
    assert (frame.get_column("max_new_tokens") >= 2 * 30).all()  # budget from the answer, never a fixed cap
    assert all(p.endswith(" :") for p in frame.get_column("prompt"))
    assert frame.get_column("expected")[0] == " ".join(rows[0]["target_text"])


def test_prediction_cache_skips_finished_work(tmp_path):
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(TOKENIZER), n_embd=32, n_layer=1, n_head=2, n_positions=1024,
                                       eos_token_id=TOKENIZER.eos_token_id)).eval()
    settings = {"alphabet_size": 52}
    rows = make_dataset(TASKS["UR"], "chars", settings, LengthBin.parse("12"), 4, 0).to_pylist()
    identity = {"model": "tiny", "revision": None, "dtype": "float32"}
    first = evaluate_rows(model, TOKENIZER, rows, TASKS["UR"], settings, 0, "bare",
                          cache=PredictionCache(tmp_path, identity))
    assert not first.get_column("from_cache").any()

    def must_not_load():
        raise AssertionError("the model was loaded although every prediction is cached")

    again = evaluate_rows(must_not_load, TOKENIZER, rows, TASKS["UR"], settings, 0, "bare",
                          cache=PredictionCache(tmp_path, identity))
    assert again.get_column("from_cache").all()
    assert again.drop("from_cache").equals(first.drop("from_cache"))
    # Another prompt variant is another prompt; another dtype is another model identity.
    loads = []
    evaluate_rows(lambda: loads.append(1) or model, TOKENIZER, rows, TASKS["UR"], settings, 0, "rule",
                  cache=PredictionCache(tmp_path, identity))
    evaluate_rows(lambda: loads.append(1) or model, TOKENIZER, rows, TASKS["UR"], settings, 0, "bare",
                  cache=PredictionCache(tmp_path, {**identity, "dtype": "bfloat16"}))
    assert loads == [1, 1]


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
