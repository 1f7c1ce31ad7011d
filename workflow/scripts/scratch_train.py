"""Adapter: train one (task, PE, seed) model from scratch."""
from lengthgen.engine.run import write_history
from lengthgen.records.provenance import Provenance
from lengthgen.runtime import start_job
from lengthgen.scratch.train import train_scratch_model
from lengthgen.settings import ScratchRunSettings
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
w, section = snakemake.wildcards, snakemake.params.section
seed = int(w.seed)
summary = train_scratch_model(get_task(w.task), w.pe, seed, ScratchRunSettings.from_config(section),
                              snakemake.output.model, snakemake.params.checkpoint_dir)
write_history(summary, snakemake.output.history, Provenance(section), seed, device, dict(w))
