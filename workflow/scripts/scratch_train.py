"""Adapter: train one (task, PE, seed) model from scratch."""
from lengthgen.engine.run import history_frame
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.scratch.train import train_scratch_model
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
w, section = snakemake.wildcards, snakemake.params.section
seed = int(w.seed)
summary = train_scratch_model(get_task(w.task), w.pe, seed, section, snakemake.output.model,
                              snakemake.params.checkpoint_dir)
extra = {"wildcards": dict(w), **{k: summary[k] for k in ("steps", "best_accuracy", "resumed_from")}}
write_parquet(history_frame(summary), snakemake.output.history, collect(section, seed=seed, device=device, extra=extra))
