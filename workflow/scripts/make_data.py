"""Adapter: one evaluation set (task, encoding, lengths, seed) as parquet."""
from lengthgen.generate import make_dataset
from lengthgen.provenance import collect
from lengthgen.tables import write_parquet

w, section = snakemake.wildcards, snakemake.params.section  # noqa: F821
seed = int(w.seed)
table = make_dataset(w.task, w.encoding, section["settings"], w.lengths, section["examples"], seed)
write_parquet(table, snakemake.output[0], collect(section, seed=seed, extra={"wildcards": dict(w)}))  # noqa: F821
