"""Adapter: the corpora experiment's manipulation check of one registry model."""
from lengthgen.corpora.manipulation import manipulation_check
from lengthgen.records.provenance import Provenance
from lengthgen.records.tables import write_parquet
from lengthgen.runtime import start_job
from lengthgen.settings import ManipulationSettings

device = start_job(snakemake, uses_torch=True)
settings = ManipulationSettings.from_config(snakemake.params.section)
record = Provenance(snakemake.params.section).record(seed=settings.seed, device=device)
write_parquet(manipulation_check(settings, snakemake.input.get("model", None)), snakemake.output[0], record)
