"""Adapter: fine-tune one registry model on one task (one seed)."""
from lengthgen.runtime import configure

device = configure(snakemake.threads)  # noqa: F821

from lengthgen.finetune import finetune_model  # noqa: E402
from lengthgen.provenance import collect  # noqa: E402
from lengthgen.registry import ModelEntry  # noqa: E402
from lengthgen.scratch import history_frame  # noqa: E402
from lengthgen.tables import write_parquet  # noqa: E402

w, section = snakemake.wildcards, snakemake.params.section  # noqa: F821
seed = int(w.seed)
entry = ModelEntry.from_config(w.model, section["model"])
summary = finetune_model(entry, w.task, seed, section, snakemake.output.model,  # noqa: F821
                         snakemake.params.checkpoint_dir)  # noqa: F821
extra = {"wildcards": dict(w), **{k: summary[k] for k in ("steps", "best_accuracy", "resumed_from")}}
write_parquet(history_frame(summary), snakemake.output.history,  # noqa: F821
              collect(section, seed=seed, device=device, extra=extra))
