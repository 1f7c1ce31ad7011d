"""Batched greedy decoding gives exactly the answers of per-example `generate`."""

import pytest
import torch

from lengthgen.inference.decoding import Request, greedy_decode, stop_cut
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import make_dataset
from tiny_models import TOKENIZER, tiny_model


def tiny(kind):
    """Two layers, 32 wide, 256 positions: GPT-2 with 2 heads, the others with 4 (2 key/value heads)."""
    return tiny_model(kind, layers=2, heads=2 if kind == "gpt2" else 4, width=32, positions=256)


REQUESTS = [
    Request("A b C | b:", 3, ("\n",)),
    Request("x y z w v u t s r q p o | q:", 5, ("\n",)),
    Request("<bos> a b c d e : a b c d e <eos>\n<bos> k l m :", 12, ("<eos>", "\n")),
    Request("Hello", 7),
    Request("Q", 1),
    Request("a longer prompt that needs several padding columns in its batch", 9, ("\n",)),
]


def reference(model, request):
    ids = torch.tensor([TOKENIZER(request.prompt, add_special_tokens=False).input_ids])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=request.max_new_tokens,
                         do_sample=False, eos_token_id=TOKENIZER.eos_token_id, pad_token_id=TOKENIZER.pad_token_id)
    return stop_cut(TOKENIZER.decode(out[0, ids.shape[1]:], skip_special_tokens=True), request.stop)[0]


@pytest.mark.parametrize("kind", ["gpt2", "llama", "qwen2"])
@pytest.mark.parametrize("batch_size", [1, 4])
def test_batched_equals_per_example_generate(kind, batch_size):
    model = tiny(kind).eval()
    expected = [reference(model, r) for r in REQUESTS]
    assert greedy_decode(model, TOKENIZER, REQUESTS, batch_size=batch_size) == expected
    assert any(len(answer) > 0 for answer in expected)


def test_stop_strings_and_budget():
    assert stop_cut("a b <eos> c", ("<eos>", "\n")) == ("a b ", True)
    assert stop_cut("abc", ("\n",)) == ("abc", False)


def few_shot_requests():
    """Prompts of two files that share an instruction and demonstrations within each file."""
    from lengthgen.icl.prompts import Example, build_prompt

    requests = []
    for task, length in (("NLFirst", 14), ("UB", 7)):
        settings = {"alphabet_size": 52, "pool_fraction": 1 / 3, "occurrence_divisor": 4}
        rows = make_dataset(TASKS[task], "chars", settings, LengthBin(length - 2, length + 2), 4, 0).to_pylist()
        examples = [Example.of(TASKS[task], r["context"], r["query"], r["occurrences"]) for r in rows]
        demonstrations = examples[:1] * 3  # the same demonstrations in every prompt of the file
        for example in examples:
            text = build_prompt(TASKS[task], "rule", example, demonstrations).text
            requests.append(Request(text, 6 if task == "NLFirst" else 2 * length, ("\n",)))
    return requests


@pytest.mark.parametrize("kind", ["gpt2", "llama", "qwen2"])
def test_few_shot_files_get_the_answers_of_per_example_generate(kind):
    model = tiny(kind).eval()
    requests = few_shot_requests()
    for group in (requests[:4], requests[4:]):  # one batch per task, as the workflow decodes a file
        assert greedy_decode(model, TOKENIZER, group, batch_size=4) == [reference(model, r) for r in group]


def test_prompts_longer_than_the_position_table_are_an_error():
    model = tiny("gpt2").eval()  # 256 positions
    with pytest.raises(ValueError, match="need 260 positions, more than the model's 256"):
        greedy_decode(model, TOKENIZER, [Request("a" * 250, 10)])
