"""Adapter: one model's in-context predictions on one (task, length, seed, variant) data file."""
import polars as pl
import pyarrow.parquet as pq

from lengthgen.config import model_entry
from lengthgen.icl.cache import PredictionCache
from lengthgen.icl.predict import evaluate_rows
from lengthgen.models.registry import load_model, load_tokenizer
from lengthgen.models.storage import model_identity
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_parquet
from lengthgen.runtime import configure
from lengthgen.tasks import get_task

device = configure(snakemake.threads)
w, section = snakemake.wildcards, snakemake.params.section
entry = model_entry(w.model, {**section["model"], "path": snakemake.input.get("model", section["model"]["path"])})
cache_dir = snakemake.params.cache_dir
cache = PredictionCache(cache_dir, model_identity(entry.path, entry.revision, entry.dtype)) if cache_dir else None
rows = pq.read_table(snakemake.input.data).to_pylist()
frame = evaluate_rows(lambda: load_model(entry), load_tokenizer(entry), rows, get_task(w.task), section["settings"],
                      int(w.seed), w.variant, entry.kind, section["batch_size"], section["shots"], progress=True,
                      cache=cache)
frame = frame.with_columns(pl.lit(w.model).alias("model"), pl.lit(w.task).alias("task"),
                           pl.lit(w.bin).alias("bin"), pl.lit(int(w.seed)).alias("seed"),
                           pl.lit(w.variant).alias("variant"), pl.lit(section["batch_size"]).alias("batch_size"))
write_parquet(frame, snakemake.output[0], collect(section, seed=int(w.seed), device=device,
                                                  extra={"wildcards": dict(w)}))
