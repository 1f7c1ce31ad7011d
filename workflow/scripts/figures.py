"""Adapter: the images of one figure rule (its record: lengthgen.plan.figures), drawn from its inputs."""
from lengthgen.results.figures import draw
from lengthgen.runtime import start_job

start_job(snakemake)
draw(snakemake.rule, dict(snakemake.input.items()), dict(snakemake.params.items()), dict(snakemake.output.items()))
