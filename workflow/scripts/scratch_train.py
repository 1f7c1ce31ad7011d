"""Adapter: train one (task, PE, seed) model from scratch."""
from lengthgen.runtime import configure

device = configure(snakemake.threads)  # noqa: F821

from lengthgen.provenance import collect  # noqa: E402
from lengthgen.scratch import history_frame, train_scratch_model  # noqa: E402
from lengthgen.tables import write_parquet  # noqa: E402

w, section = snakemake.wildcards, snakemake.params.section  # noqa: F821
seed = int(w.seed)
summary = train_scratch_model(w.task, w.pe, seed, section, snakemake.output.model,  # noqa: F821
                              snakemake.params.checkpoint_dir)  # noqa: F821
extra = {"wildcards": dict(w), **{k: summary[k] for k in ("steps", "best_accuracy", "resumed_from")}}
write_parquet(history_frame(summary), snakemake.output.history,  # noqa: F821
              collect(section, seed=seed, device=device, extra=extra))
