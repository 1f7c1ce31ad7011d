"""Adapter: per-example exact match of one fine-tuned model on one length bin."""
from lengthgen.runtime import configure

device = configure(snakemake.threads)  # noqa: F821

import polars as pl  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

from lengthgen.provenance import collect  # noqa: E402
from lengthgen.scratch import evaluate_file  # noqa: E402
from lengthgen.sequences import tokenizer_layout  # noqa: E402
from lengthgen.tables import write_parquet  # noqa: E402

w, section = snakemake.wildcards, snakemake.params.section  # noqa: F821
layout = tokenizer_layout(AutoTokenizer.from_pretrained(snakemake.input.model), section["alphabet_size"])  # noqa: F821
frame = evaluate_file(snakemake.input.model, snakemake.input.data, section["batch_size"], True,  # noqa: F821
                      section["precision"], layout, section["alphabet_size"])
frame = frame.with_columns(pl.lit(w.model).alias("model"), pl.lit(w.task).alias("task"),
                           pl.lit(int(w.seed)).alias("seed"), pl.lit(w.lengths).alias("bin"))
write_parquet(frame, snakemake.output[0], collect(section, seed=int(w.seed), device=device,  # noqa: F821
                                                  extra={"wildcards": dict(w)}))
