"""The corpora experiment's manipulation check (corpora/manipulation.py): examples drawn as the corpora
insert their copies, in held-out text, and a score over exactly the copy's characters after its first."""

import random
from types import SimpleNamespace

import pytest
import torch

from lengthgen.corpora.manipulation import copy_accuracy, copy_examples, held_out_text, manipulation_check
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.settings import ManipulationSettings

TEXT = "".join(random.Random(0).choice("abcdefghijklmnopqrstuvwxyz .,\n") for _ in range(20_000))  # no repeats to confuse


def settings(**changes) -> ManipulationSettings:
    values = {"subject": "tiny", "model": {"path": "unused"}, "examples": 12, "context": 96, "batch_size": 5,
              "seed": 0, "corpus_chars": 20_000, "validation_fraction": 0.1, "passage_chars": [8, 16],
              "gap_passages": [0, 8]}
    return ManipulationSettings.from_config({**values, **changes})


def test_each_example_fills_the_context_with_its_passage_copied_after_a_gap():
    examples = copy_examples(TEXT, settings())
    assert len(examples) == 12
    for example in examples:
        passage = example.passage
        assert 8 <= len(passage) <= 16 and len(example.text("forward")) == 96 == len(example.text("backward"))
        assert example.text("forward").endswith(passage) and example.text("backward").endswith(passage[::-1])
        # the passage stands in the held-out text, the copy after a gap of whole passages
        assert passage in example.before and example.before in TEXT
        gap = len(example.before) - example.before.rindex(passage) - len(passage)
        assert gap == 0 or gap >= 8
    assert copy_examples(TEXT, settings()) == examples  # drawn from (seed, example)
    assert copy_examples(TEXT, settings(seed=1)) != examples
    with pytest.raises(ValueError, match="context 30 cannot hold a passage of 16 characters and its copy"):
        copy_examples(TEXT, settings(context=30))


class Oracle(torch.nn.Module):
    """Ranks the true next character first everywhere except at the positions `wrong(length)` names
    (counted from the sequence's end): a score that reads one position too many or too few shows."""

    def __init__(self, vocab: int, wrong):
        super().__init__()
        self.vocab, self.wrong = vocab, wrong
        self.device = torch.device("cpu")  # as a transformers model says where its inputs go

    def forward(self, input_ids):
        batch, length = input_ids.shape
        logits = torch.zeros(batch, length, self.vocab)
        following = torch.roll(input_ids, -1, dims=1)
        logits.scatter_(2, following.unsqueeze(-1), 1.0)
        for back in self.wrong:
            logits[:, length - back] = 0.0
            logits[:, length - back, (following[:, length - back] + 1) % self.vocab] = 1.0
        return SimpleNamespace(logits=logits)


def test_the_score_reads_exactly_the_copys_characters_after_its_first():
    tokenizer = build_char_tokenizer()
    examples = copy_examples(TEXT, settings(examples=6, passage_chars=[10, 10]))  # every copy 10 characters
    # wrong where the copy's first character is predicted (11th from the end) and past the end: unscored
    right = copy_accuracy(Oracle(len(tokenizer), wrong=(11, 1)), tokenizer, examples, 4)
    assert right["copy_chars"].to_list() == [9] * 12 and right["correct"].to_list() == [9] * 12
    assert right["direction"].to_list() == ["forward"] * 6 + ["backward"] * 6
    assert right["example"].to_list() == [*range(6)] * 2
    # wrong where the copy's last character is predicted (2nd from the end): one fewer right
    last = copy_accuracy(Oracle(len(tokenizer), wrong=(2,)), tokenizer, examples, 4)
    assert last["correct"].to_list() == [8] * 12 and last["accuracy"].to_list() == pytest.approx([8 / 9] * 12)


def test_the_held_out_text_is_the_natural_corpus_tail():
    from lengthgen.pretrain.corpus import build_corpus

    tail = held_out_text(settings(corpus_chars=50_000, validation_fraction=0.1))
    assert len(tail) == 5_000 and build_corpus(50_000).endswith(tail)


def test_a_registry_model_is_checked_in_both_directions(tmp_path):
    from tiny_models import save_tiny_model

    path = save_tiny_model(tmp_path / "tiny", max_positions=96)
    frame = manipulation_check(settings(model={"path": str(path)}, examples=3), str(path))
    assert frame.columns == ["model", "example", "direction", "copy_chars", "correct", "accuracy"]
    assert frame.height == 6 and set(frame["model"]) == {"tiny"}
    assert ((frame["accuracy"] >= 0) & (frame["accuracy"] <= 1)).all()
