"""How much of greedy decoding the new-token budgets could still save: read from a finished run.

Decoding runs each batch until its last row stops (end token, a stop string) or reaches its budget
(the answer's own length plus a margin). A row that reaches its budget has decoded the margin past
the answer's length; a row that stops before it cost nothing extra. This script reads the
prediction tables of a run (in context and realistic tasks), tokenises each completion with the
model's own tokenizer, and reports, per file: rows, how many ran to their budget, the new tokens
decoded, and the share of them past the reference answer's length (the most a smaller margin could
save, since a batch costs its longest row). Not a timing: the upper bound of a lever, measured.

Run (in a finished project):
`.venv/bin/python bench/decoding_budget.py results/models/smollm2 results/{icl,realistic}/smollm2/*.parquet`
"""

from __future__ import annotations

import argparse

import polars as pl
from transformers import AutoTokenizer

from lengthgen.icl.predict import BUDGET_MARGIN
from lengthgen.realistic.predict import MARGIN


def budget_use(frame: pl.DataFrame, tokenizer, margin: int) -> dict:
    """Rows, rows that ran to their budget, tokens decoded and those past the answer's own length
    (the budget less its margin, as the stage set it)."""
    completion = [len(tokenizer(text, add_special_tokens=False).input_ids) for text in frame["completion"]]
    budgets = frame["max_new_tokens"].to_list()
    decoded = [min(c, b) for c, b in zip(completion, budgets)]
    past = sum(max(0, d - (b - margin)) for d, b in zip(decoded, budgets))
    return {"rows": frame.height, "ran_to_budget": sum(c >= b for c, b in zip(completion, budgets)),
            "decoded_tokens": sum(decoded), "past_answer": past,
            "share_past_answer": round(past / max(1, sum(decoded)), 3)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the model directory whose tokenizer decoded the predictions")
    parser.add_argument("files", nargs="+", help="prediction parquets of the in-context and realistic stages")
    args = parser.parse_args(argv)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    rows = []
    for path in args.files:
        frame = pl.read_parquet(path)
        margin = BUDGET_MARGIN if "prompt" in frame.columns else MARGIN  # in-context rows keep their prompt
        rows.append({"file": path, **budget_use(frame, tokenizer, margin)})
    table = pl.DataFrame(rows)
    with pl.Config(tbl_rows=-1, tbl_width_chars=200, fmt_str_lengths=60):
        print(table)
    total, past = table["decoded_tokens"].sum(), table["past_answer"].sum()
    print(f"all files: {past} of {total} decoded tokens past the reference answer ({past / max(1, total):.1%})")


if __name__ == "__main__":
    main()
