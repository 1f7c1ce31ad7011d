"""Adapter: one model's in-context predictions on every file of one task family's grid."""
import polars as pl

from lengthgen.config import job_model_entry
from lengthgen.icl.predict import predict_files
from lengthgen.inference.cache import PredictionCache
from lengthgen.inference.text import symbol_separator
from lengthgen.models.loading import load_model, load_tokenizer
from lengthgen.models.storage import model_identity
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.settings import IclPredictSettings
from lengthgen.tasks.datafile import read_examples

device = start_job(snakemake, uses_torch=True)
w = snakemake.wildcards
settings = IclPredictSettings.from_config(snakemake.params.section)
entry = job_model_entry(w.model, settings.model, snakemake.input.get("model"))
cache_dir = snakemake.params.cache_dir
cache = PredictionCache(cache_dir, model_identity(entry.path, entry.revision, entry.dtype)) if cache_dir else None
tokenizer = load_tokenizer(entry)
rows = {path: read_examples(path).to_pylist() for path in snakemake.input.data}
files = [{**file, "rows": rows[file["data"]]} for file in settings.files]
frame = predict_files(lambda: load_model(entry, check=False), tokenizer, files, settings=settings.settings,
                      chat=entry.kind == "chat", separator=symbol_separator(tokenizer, entry.separator),
                      shots=settings.shots, batch_size=settings.batch_size, cache=cache, progress=True,
                      chat_settings=settings.chat)
frame = frame.with_columns(pl.lit(w.model).alias("model"), pl.lit(settings.batch_size).alias("batch_size"))
write_parquet(frame, snakemake.output[0], Provenance(snakemake.params.section).record(
    device=device, extra={"wildcards": dict(w)}))
