"""Adapter: one model on one realistic task (lorem-ipsum echo, git revert or cherry-pick), every length and seed."""
import polars as pl

from lengthgen.config import job_model_entry
from lengthgen.inference.cache import PredictionCache
from lengthgen.models.loading import load_model, load_tokenizer
from lengthgen.models.storage import model_identity
from lengthgen.realistic.predict import predict_realistic
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.settings import RealisticPredictSettings

device = start_job(snakemake, uses_torch=True)
w = snakemake.wildcards
job = RealisticPredictSettings.from_config(snakemake.params.section)
entry = job_model_entry(w.model, job.model, snakemake.input.get("model"))
cache_dir = snakemake.params.cache_dir
cache = PredictionCache(cache_dir, model_identity(entry.path, entry.revision, entry.dtype)) if cache_dir else None
frame = predict_realistic(lambda: load_model(entry, check=False), load_tokenizer(entry), w.realistic,
                          lengths=job.settings["lengths"], seeds=job.seeds, settings=job.settings,
                          batch_size=job.batch_size, chat=entry.kind == "chat", cache=cache, progress=True)
write_parquet(frame.with_columns(pl.lit(w.model).alias("model")), snakemake.output[0],
              Provenance(snakemake.params.section).record(device=device, extra={"wildcards": dict(w)}))
