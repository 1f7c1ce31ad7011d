"""Adapter: one evaluation set (task, encoding, length bin, seed) as parquet."""
from lengthgen.results.provenance import collect
from lengthgen.results.tables import write_parquet
from lengthgen.tasks import LengthBin, get_task
from lengthgen.tasks.generate import make_dataset

w, section = snakemake.wildcards, snakemake.params.section
seed = int(w.seed)
table = make_dataset(get_task(w.task), w.encoding, section["settings"], LengthBin.parse(w.bin), section["examples"], seed)
write_parquet(table, snakemake.output[0], collect(section, seed=seed, extra={"wildcards": dict(w)}))
