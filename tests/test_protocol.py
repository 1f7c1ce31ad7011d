"""The authors' protocol (their fromscratch/ and finetuning/ code) as the paper preset runs it: the
generators' statistics, the RoPE model, the fine-tuning strings, what is learnt and scored, and
the paper's numbers beside the results."""

import polars as pl
import pytest
import yaml

from lengthgen.config import validate_config
from lengthgen.engine.sequences import IGNORE, SCRATCH_LAYOUT, collate, encode_example, tokenizer_layout
from lengthgen.lengthbins.table import bin_markdown, bin_table
from lengthgen.models.char_tokenizer import build_char_tokenizer
from lengthgen.plan.finetune import train_params
from lengthgen.references import scratch_reference
from lengthgen.tasks import TASKS, LengthBin
from lengthgen.tasks.generate import CHAR_SYMBOLS, DIGITS, LOWERCASE, generate_inputs, make_dataset

PAPER = validate_config(yaml.safe_load(open(__import__("conftest").REPO / "configs" / "paper.yaml")),
                        check_availability=False)


def rows(task, encoding, settings, bin_text, count=400, seed=0):
    return make_dataset(TASKS[task], encoding, settings, LengthBin.parse(bin_text), count, seed).to_pylist()


def test_the_paper_preset_uses_the_authors_generators_lengths_and_loss():
    tokens, finetune = PAPER["data"]["tokens"], PAPER["data"]["finetune"]
    assert tokens["nonunique_retrieval"]["style"] == tokens["unique_retrieval"]["style"] == "authors"
    assert tokens["nonunique_retrieval"]["alphabet_size"] == 5 and tokens["unique_copy"]["alphabet_size"] == 150
    assert (finetune["nonunique_retrieval"]["style"], finetune["unique_retrieval"]["style"],
            finetune["nonunique_copy"]["style"]) == ("pairs", "letters_digits", "few_digits")
    scratch = PAPER["scratch"]
    assert scratch["test_bins"]["retrieval"] == ["4-49", "51-99", "101-149"]
    assert scratch["train_on_eos"] == scratch["score_eos"] == {"retrieval": False, "copying": True}
    training = scratch["training"]
    assert (training["eval_every"], training["eval_examples"], training["warmup_steps"], training["max_grad_norm"]) == (
        5000, 2000, 0, 1.0)
    assert training["schedule"]["ape"] == "linear" and training["schedule"]["rope"] == "constant"
    ft = PAPER["finetune"]
    assert ft["format"] == "authors" and ft["train_examples"] == 50000
    # Their retrieval scripts ran 30 epochs; the copy script's default (their README's command) 15.
    assert ft["epochs"] == {"retrieval": 30, "copying": 15}
    # Their scripts hold 10% of the 50,000 out for validation and train on 45,000.
    assert (ft["validation"], ft["validation_fraction"]) == ("holdout", 0.1)
    assert train_params(PAPER, "embedded", "UB").holdout == 5000
    batches = -(-45000 // ft["training"]["batch_size"])
    assert train_params(PAPER, "embedded", "UB").training.max_steps == 15 * batches
    assert train_params(PAPER, "embedded", "NLFirst").training.max_steps == 30 * batches
    assert (ft["training"]["warmup_ratio"], ft["training"]["max_grad_norm"], ft["training"]["early_stop"]) == (
        0.15, 1.0, False)


def test_authors_nonunique_retrieval_from_scratch():
    settings = {"alphabet_size": 5, "style": "authors"}
    data = rows("NLFirst", "tokens", settings, "51-100")
    adjacent = sum(any(b - a == 1 for a, b in zip(r["occurrences"], r["occurrences"][1:])) for r in data) / len(data)
    assert adjacent > 0.85  # their data: about 94% of examples at 51-100 have adjacent occurrences
    for r in data:
        assert len(r["occurrences"]) >= 2 and r["occurrences"] == [i for i, s in enumerate(r["context"]) if s == r["query"]]
        assert r["occurrences"][0] > 0 and r["target"] == [r["context"][r["occurrences"][0] - 1]]  # no wrap-around
    counts = [r["context"].count(s) / r["length"] for r in data for s in range(5)]
    assert 0.15 < sum(counts) / len(counts) < 0.25  # uniform over the alphabet, query included
    for r in rows("NRLast", "tokens", settings, "10-30"):  # their Last rule: never the context's last symbol
        assert r["occurrences"][-1] < r["length"] - 1 and r["target"] == [r["context"][r["occurrences"][-1] + 1]]


def test_authors_unique_retrieval_may_put_the_query_where_no_neighbour_is_needed():
    settings = {"alphabet_size": 5, "style": "authors"}
    left, right = rows("UL", "tokens", settings, "4-8"), rows("UR", "tokens", settings, "4-8")
    assert {r["target_position"] for r in left} == set(range(1, 8))  # the last position included
    assert {r["target_position"] for r in right} == set(range(0, 7))  # the first position included
    for a, b in zip(left, right):  # the same draws: the query one position further for the left task
        assert a["target_position"] == b["target_position"] + 1
        assert [s for i, s in enumerate(a["context"]) if i != a["target_position"]] == \
               [s for i, s in enumerate(b["context"]) if i != b["target_position"]]


def test_fine_tuning_pairs_as_the_authors_generate_them():
    data = rows("NLFirst", "finetune", {"style": "pairs", "alphabet_size": 62}, "3-50")
    assert min(r["length"] for r in data) >= 3 and max(r["length"] for r in data) <= 50  # the length counts pairs
    for r in data:
        assert len(r["context"]) == 2 * r["length"]
        assert all(s in LOWERCASE for s in r["context"][::2]) and all(s in DIGITS for s in r["context"][1::2])
        assert r["query"] in LOWERCASE and all(p % 2 == 0 for p in r["occurrences"])
        first = r["occurrences"][0]
        assert first > 0 and r["target"] == [r["context"][first - 1]]  # the digit of the previous pair
    right = rows("NRLast", "finetune", {"style": "pairs", "alphabet_size": 62}, "3-50")
    assert all(r["target"] == [r["context"][r["occurrences"][-1] + 1]] for r in right)  # the query pair's digit
    # 1-3 planned slots, more by coincidence (other letters are uniform over 26): on average about
    # 2 + (pairs - 2) / 26, fewer in the query-only variants.
    mean = sum(len(r["occurrences"]) for r in data) / len(data)
    expected = 2 + sum(r["length"] - 2 for r in data) / len(data) / 26
    assert abs(mean - expected) < 0.4, (mean, expected)


def test_fine_tuning_unique_retrieval_and_digit_copies():
    data = rows("UL", "finetune", {"style": "letters_digits", "alphabet_size": 62}, "3-50")
    letters = sum(s in LOWERCASE for r in data for s in r["context"]) / sum(len(r["context"]) for r in data)
    assert 0.45 < letters < 0.55
    for r in data:
        assert len(r["context"]) == 2 * r["length"] and r["context"].count(r["query"]) == 1
        assert 0 < r["target_position"] < len(r["context"]) - 1
    copies = rows("NF", "finetune", {"style": "few_digits", "alphabet_size": 62, "pool_fraction": None}, "51-100")
    assert all(set(r["context"]) <= set(DIGITS) and 1 <= len(set(r["context"])) <= 5 for r in copies)


def test_the_authors_fine_tuning_strings_and_what_is_learnt():
    tokenizer = build_char_tokenizer()
    layout = tokenizer_layout(tokenizer, len(CHAR_SYMBOLS), style="authors")
    symbols = [CHAR_SYMBOLS.index(c) for c in "i0w7r3w5q9"]
    example = encode_example(TASKS["NRFirst"], symbols, CHAR_SYMBOLS.index("w"), [CHAR_SYMBOLS.index("7")], layout)
    assert tokenizer.decode(example.ids[:example.answer_start]) == "i0w7r3w5q9||w>"
    labels = collate([example], pad_id=layout.pad)["labels"][0].tolist()
    assert [t for t in labels if t != IGNORE] == [tokenizer.convert_tokens_to_ids("7")]  # the answer only
    copy = encode_example(TASKS["UB"], symbols[:3], None, symbols[:3][::-1], layout)
    assert tokenizer.decode(copy.ids[:copy.answer_start]) == "i0w>"
    labels = collate([copy], pad_id=layout.pad)["labels"][0].tolist()
    assert [t for t in labels if t != IGNORE] == copy.ids[copy.answer_start:]  # the copy and its <eos>
    assert layout.scored_length(TASKS["UB"], [0, 1, 2]) == 4 and layout.scored_length(TASKS["UR"], [0]) == 1


def test_from_scratch_loss_on_the_answer_only_when_asked():
    layout = SCRATCH_LAYOUT.with_eos({"retrieval": False}, {"retrieval": False})
    example = encode_example(TASKS["UR"], [0, 1, 2], 1, [2], layout)
    labels = collate([example])["labels"][0].tolist()
    assert [t for t in labels if t != IGNORE] == [example.ids[example.answer_start]]  # no <eos>
    with_eos = encode_example(TASKS["UR"], [0, 1, 2], 1, [2])
    assert len([t for t in collate([with_eos])["labels"][0].tolist() if t != IGNORE]) == 2


def test_a_pool_of_letters_and_digits_needs_the_character_encodings():
    with pytest.raises(ValueError, match="needs the chars or finetune encoding"):
        next(generate_inputs(TASKS["NRFirst"], "tokens", {"style": "pairs", "alphabet_size": 5}, LengthBin(3, 5), 1, 0))


def test_the_paper_numbers_stand_beside_the_results():
    results = pl.DataFrame([{"system": "ape", "task": "NLLast", "seed": 0, "bin": b, "teacher_forced": 0.5,
                             "greedy": 0.5} for b in ("4-49", "51-99", "101-149")])
    bins = {"retrieval": ["4-49", "51-99", "101-149"], "copying": ["1-50"]}
    table = bin_table(results, bins, scratch_reference)
    assert table.get_column("paper").to_list() == [1.00, 0.77, 0.47]
    assert "0.50 (paper 0.47)" in bin_markdown(table, bins, {"config_hash": "x", "code_version": "y"}, "From scratch",
                                               "PE")
    assert scratch_reference("ape", "NLLast", "16-30") is None  # not a bin the paper reports


def test_the_paper_preset_sends_chat_models_the_authors_realistic_prompts():
    """Their prompt_real.py: a chat model gets the user's turn alone, for git and lorem alike."""
    assert PAPER["realistic"]["git"]["prompt"] == PAPER["realistic"]["lorem"]["prompt"] == "authors"


def test_the_paper_preset_analyses_the_authors_mechanism_models():
    """Their GPT-2 1.5B is Karpathy's llm.c model (mechanistic/generate_configs.py), not OpenAI's
    gpt2-xl; the other three are the stock hub models."""
    paths = [PAPER["models"][name]["path"] for name in PAPER["mechanism"]["models"]]
    assert paths == ["karpathy/gpt2_1558M_final4_hf", "google/gemma-3-1b-pt", "meta-llama/Llama-3.1-8B",
                     "Qwen/Qwen2.5-7B"]


def distinct_symbols(settings, length, count=2000):
    return [len(set(c)) for c, _, _ in generate_inputs(TASKS["NF"], "chars", settings, LengthBin(length, length),
                                                        count, 0)]


def test_in_context_repeated_copies_as_the_authors_generate_them():
    """Their copying/generate_data.py: at length 5 (every demonstration) uniform draws with one forced
    repeat, about 4 distinct symbols (mean 3.99 over their files), against exactly 2 in ours; longer
    strings over a pool of floor(n/3) symbols, where ours rounds (one more at 20 and 50)."""
    theirs, ours = PAPER["data"]["chars"]["nonunique_copy"], {"alphabet_size": 52, "pool_fraction": 0.333}
    assert theirs["style"] == "authors_in_context"
    at_five = distinct_symbols(theirs, 5)
    assert 3.95 < sum(at_five) / len(at_five) < 4.0 and max(at_five) == 4
    assert set(distinct_symbols(ours, 5)) == {2}
    for length, pool in ((10, 3), (20, 6), (30, 10), (50, 16)):
        assert set(distinct_symbols(theirs, length, 200)) == {pool}
        assert set(distinct_symbols(ours, length, 200)) == {round(length * 0.333)}
    for context, _, _ in generate_inputs(TASKS["NF"], "chars", theirs, LengthBin(2, 50), 500, 1):
        repeated = [context.count(s) >= 2 for s in context]
        assert all(repeated) if len(context) > 5 else any(repeated)  # short ones: at least one repeat


def test_in_context_repeated_queries_as_the_authors_generate_them():
    """Their retrieval/generate_data.py draws the occurrences from the third symbol on (ours from the
    second); otherwise the same: k uniform in 2..max(2, n // 5), never adjacent, both neighbours present."""
    theirs = PAPER["data"]["chars"]["nonunique_retrieval"]
    ours = {k: v for k, v in theirs.items() if k != "style"}
    firsts = {}
    for name, settings in (("theirs", theirs), ("ours", ours)):
        examples = list(generate_inputs(TASKS["NLFirst"], "chars", settings, LengthBin(10, 30), 3000, 0))
        firsts[name] = {o[0] for _, _, o in examples}
        for context, query, occurrences in examples:
            n = len(context)
            assert 2 <= len(occurrences) <= max(2, n // 5) and occurrences[-1] <= n - 2
            assert all(b - a > 1 for a, b in zip(occurrences, occurrences[1:]))
            assert [i for i, s in enumerate(context) if s == query] == occurrences
    assert min(firsts["theirs"]) == 2 and min(firsts["ours"]) == 1
    # Their demonstration pool (6 context symbols): the two occurrences always at the 3rd and 5th.
    pool = generate_inputs(TASKS["NLFirst"], "chars", theirs, LengthBin(6, 6), 200, 0, stream="demonstration-pool")
    assert {tuple(o) for _, _, o in pool} == {(2, 4)}


def test_fine_tuning_left_retrieval_never_wraps_around():
    """In their pairs data a query-only variant can ask a letter whose only pair is the first; their
    last_left (like first_left) then read pair -1, the last pair's digit (19 of their 5,000 NLLast
    test examples). Ours drops such an example for both tasks of the pair, so mirrors still share
    every input."""
    settings = {"style": "pairs", "alphabet_size": 62}
    left, right = rows("NLLast", "finetune", settings, "3-50", 5000), rows("NRLast", "finetune", settings, "3-50", 5000)
    assert [r["context"] for r in left] == [r["context"] for r in right]
    for r in left:
        last = r["occurrences"][-1]
        assert last > 0 and r["target"] == [r["context"][last - 1]]
    assert any(len(r["occurrences"]) == 1 for r in left)  # the query-only variants are still there
