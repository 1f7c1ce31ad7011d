"""Adapter: fine-tune one registry model on one task (one seed)."""
from lengthgen.config import job_model_entry
from lengthgen.engine.run import write_history
from lengthgen.finetune.train import finetune_model, finetune_run
from lengthgen.records.provenance import Provenance
from lengthgen.runtime import start_job
from lengthgen.settings import FinetuneTaskSettings
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
w, section = snakemake.wildcards, snakemake.params.section
seed = int(w.seed)
settings = FinetuneTaskSettings.from_config(section)
entry = job_model_entry(w.model, settings.model, snakemake.input.get("model"))
run, tokenizer = finetune_run(entry, get_task(w.task), seed, settings, snakemake.params.checkpoint_dir)
summary = finetune_model(run, tokenizer, snakemake.output.model)
write_history(summary, snakemake.output.history, Provenance(section), seed, device, dict(w))
