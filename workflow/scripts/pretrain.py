"""Adapter: pretrain one embedded character-level model and probe its induction heads."""
from lengthgen.runtime import configure

device = configure(snakemake.threads)  # noqa: F821

from lengthgen.pretrain import induction_probe, pretrain  # noqa: E402
from lengthgen.provenance import collect  # noqa: E402
from lengthgen.tables import write_parquet  # noqa: E402

section = snakemake.params.section  # noqa: F821
summary = pretrain(section, snakemake.output.model, snakemake.params.checkpoint_dir)  # noqa: F821
probe, repeat_accuracy = induction_probe(snakemake.output.model, section["probe_segment"])  # noqa: F821
extra = {k: summary[k] for k in ("steps", "corpus_hash", "corpus_chars", "tokens_seen", "best_accuracy")}
extra.update(repeat_accuracy)
write_parquet(probe, snakemake.output.summary, collect(section, seed=section["seed"], device=device,  # noqa: F821
                                                       extra={**extra, "history": summary["history"]}))
