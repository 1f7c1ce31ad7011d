"""Adapter: pretrain one embedded character-level model and probe its induction heads. The rule is
cached, so Snakemake cannot benchmark it: the job times itself, and `lengthgen runtimes` reads the
times and the work counts from the summary's provenance."""
from lengthgen.engine.run import TOKEN_COUNTERS, WORK_SHAPE
from lengthgen.mechanism.probe import induction_probe
from lengthgen.pretrain.train import pretrain
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import JobClock, start_job
from lengthgen.settings import PretrainSettings

clock = JobClock()
device = start_job(snakemake, uses_torch=True)
settings = PretrainSettings.from_config(snakemake.params.section)
summary = pretrain(settings, snakemake.output.model, snakemake.params.checkpoint_dir)
probe, copy_accuracy = induction_probe(snakemake.output.model, settings.probe_length)
extra = {k: summary[k] for k in ("steps", "corpus_hash", "corpus_chars", "tokens_seen", "best_accuracy",
                                 "resumed_from", *TOKEN_COUNTERS, *WORK_SHAPE)}
extra.update(copy_accuracy)
extra.update(clock.usage())  # this invocation's: a resumed run counts its last part only (resumed_from)
record = Provenance(snakemake.params.section).record(seed=settings.seed, device=device,
                                                    extra={**extra, "history": summary["history"]})
write_parquet(probe, snakemake.output.summary, record)
