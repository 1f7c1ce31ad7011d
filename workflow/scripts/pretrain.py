"""Adapter: pretrain one embedded character-level model and probe its induction heads."""
from lengthgen.mechanism.probe import induction_probe
from lengthgen.pretrain.train import pretrain
from lengthgen.records.provenance import collect
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job

device = start_job(snakemake, uses_torch=True)
section = snakemake.params.section
summary = pretrain(section, snakemake.output.model, snakemake.params.checkpoint_dir)
probe, copy_accuracy = induction_probe(snakemake.output.model, section["probe_length"])
extra = {k: summary[k] for k in ("steps", "corpus_hash", "corpus_chars", "tokens_seen", "best_accuracy")}
extra.update(copy_accuracy)
write_parquet(probe, snakemake.output.summary, collect(section, seed=section["seed"], device=device,
                                                       extra={**extra, "history": summary["history"]}))
