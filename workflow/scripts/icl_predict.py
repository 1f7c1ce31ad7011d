"""Adapter: one model's in-context predictions on one (task, length, seed, variant) data file."""
from lengthgen.runtime import configure

device = configure(snakemake.threads)  # noqa: F821

import polars as pl  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from lengthgen.icl import evaluate_rows  # noqa: E402
from lengthgen.prediction_cache import PredictionCache, model_identity  # noqa: E402
from lengthgen.provenance import collect  # noqa: E402
from lengthgen.registry import ModelEntry, load_model, load_tokenizer  # noqa: E402
from lengthgen.tables import write_parquet  # noqa: E402

w, section = snakemake.wildcards, snakemake.params.section  # noqa: F821
spec = {k: v for k, v in section["model"].items() if k != "name"}
entry = ModelEntry.from_config(w.model, spec)
cache_dir = snakemake.params.cache_dir  # noqa: F821
cache = PredictionCache(cache_dir, model_identity(entry.path, entry.revision, entry.dtype)) if cache_dir else None
rows = pq.read_table(snakemake.input.data).to_pylist()  # noqa: F821
frame = evaluate_rows(lambda: load_model(entry), load_tokenizer(entry), rows, w.task, section["settings"], int(w.seed),
                      w.variant, entry.kind, section["batch_size"], section["shots"], progress=True, cache=cache)
frame = frame.with_columns(pl.lit(w.model).alias("model"), pl.lit(w.task).alias("task"),
                           pl.lit(w.lengths).alias("lengths"), pl.lit(int(w.seed)).alias("seed"),
                           pl.lit(w.variant).alias("variant"), pl.lit(section["batch_size"]).alias("batch_size"))
write_parquet(frame, snakemake.output[0], collect(section, seed=int(w.seed), device=device,  # noqa: F821
                                                  extra={"wildcards": dict(w)}))
