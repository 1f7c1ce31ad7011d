"""Adapter: convert one GGUF registry model into a Hugging Face directory, once."""
import json
from pathlib import Path

from lengthgen.models.conversion import convert
from lengthgen.models.gguf import GGUFSource
from lengthgen.runtime import start_job

start_job(snakemake, uses_torch=True)
source = GGUFSource.of(snakemake.params.source)
# Relative GGUF paths as the workflow looks them up: the working directory, then the repository.
path = source.locate(snakemake.wildcards.model, (".", str(Path(snakemake.scriptdir).parents[1])))
dtype = "float32" if snakemake.params.dtype == "auto" else snakemake.params.dtype
record = convert(path, snakemake.output[0], dtype, source.describe())
print(json.dumps(record, indent=2, sort_keys=True))
