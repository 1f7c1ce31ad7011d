"""Teacher forcing with greedy decoding from the same pass: the measures equal one forward pass per
example, and the completions equal per-example greedy `generate`, wherever a row's answer stops
agreeing with the model (at once, midway, never)."""

import pytest
import torch

from lengthgen.inference.decoding import stop_cut
from lengthgen.inference.forcing import ForcedItem, _groups, force
from test_decoding import REQUESTS, TOKENIZER, tiny
from tiny_models import tiny_model


def model_of(kind):
    if kind != "qwen2-sliding":
        return tiny(kind)
    return tiny_model("qwen2", layers=2, heads=4, width=32, positions=256, use_sliding_window=True, sliding_window=8)


def greedy_tokens(model, prompt: list[int], budget: int) -> list[int]:
    ids = torch.tensor([prompt])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=budget, do_sample=False,
                         eos_token_id=TOKENIZER.eos_token_id, pad_token_id=TOKENIZER.pad_token_id)
    return out[0, len(prompt):].tolist()


def completion(tokens: list[int], request) -> str:
    eos = TOKENIZER.eos_token_id
    tokens = tokens[:tokens.index(eos)] if eos in tokens else tokens
    return stop_cut(TOKENIZER.decode(tokens, skip_special_tokens=True), request.stop)[0]


def items_agreeing_for(model, agree: int) -> tuple[list[ForcedItem], list[str]]:
    """Every request with an answer that agrees with the greedy output for `agree` tokens and then
    differs (agree = -1: the whole greedy output), and the completion per-example generate gives."""
    items, expected = [], []
    for request in REQUESTS:
        prompt = TOKENIZER(request.prompt, add_special_tokens=False).input_ids
        greedy = greedy_tokens(model, prompt, request.max_new_tokens)
        if agree < 0:
            answer = greedy
        else:
            answer = greedy[:agree] + [(greedy[agree] + 1) % 60 if agree < len(greedy) else 7] + [9, 9]
        items.append(ForcedItem(prompt, answer, [(0, 5), (0, 6)], request.max_new_tokens, request.stop))
        expected.append(completion(greedy, request))
    return items, expected


@pytest.mark.parametrize("kind", ["gpt2", "llama", "qwen2", "qwen2-sliding"])
@pytest.mark.parametrize("agree", [0, 2, -1])
def test_completions_equal_per_example_generate(kind, agree):
    model = model_of(kind)
    items, expected = items_agreeing_for(model, agree)
    for batch_size in (1, 4):
        assert [r.completion for r in force(model, TOKENIZER, items, batch_size)] == expected


def test_rows_that_agree_in_different_places_share_a_batch():
    model = model_of("llama")
    mixed = [items_agreeing_for(model, a) for a in (0, 1, 3, -1)]
    items = [item for its, _ in mixed for item in its]
    expected = [text for _, texts in mixed for text in texts]
    assert [r.completion for r in force(model, TOKENIZER, items, batch_size=len(items))] == expected


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_measures_equal_one_forward_pass_per_example(kind):
    model = model_of(kind)
    items, _ = items_agreeing_for(model, 1)
    forced = force(model, TOKENIZER, items, batch_size=3)
    for item, result in zip(items, forced):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([item.prompt + item.answer])).logits[0].float()
        rows = torch.log_softmax(logits[len(item.prompt) - 1:len(item.prompt) + len(item.answer) - 1], -1)
        assert result.predicted == rows.argmax(-1).tolist()
        assert result.log_probs == pytest.approx(rows.gather(1, torch.tensor(item.answer)[:, None])[:, 0].tolist(),
                                                 abs=1e-5)
        assert result.asked[(0, 5)] == pytest.approx(float(rows[0, 5].exp()), abs=1e-6)


def test_items_without_a_budget_are_read_not_decoded():
    model = model_of("gpt2")
    item = ForcedItem(TOKENIZER("a b c", add_special_tokens=False).input_ids, [5, 6])
    assert force(model, TOKENIZER, [item])[0].completion is None


def test_groups_start_where_their_earliest_row_starts_and_cover_every_row():
    items = [ForcedItem([1], [0] * 72, budget=80)] * 16
    started = {r: (60 + r % 3, []) for r in range(16)} | {3: (0, []), 9: (1, [])}
    groups = _groups(items, started)
    assert sorted(r for g in groups for r in g) == list(range(16))
    assert groups[0] == [3, 9] and len(groups) == 2  # the late rows need not re-decode 60 tokens
    assert _groups(items[:6], {r: (r % 2, []) for r in range(6)}) == [[0, 2, 4, 1, 3, 5]]  # not worth a group


def test_prompts_longer_than_the_position_table_are_an_error():
    model = model_of("gpt2")  # 256 positions
    with pytest.raises(ValueError, match="need 260 positions, more than the model's 256"):
        force(model, TOKENIZER, [ForcedItem([5] * 250, [5], budget=10)])
