"""Adapter: one data file (task, encoding, bin, seed) from the data rule's params."""
from lengthgen.runtime import start_job
from lengthgen.settings import DataFileSettings
from lengthgen.tasks.generate import write_data_file

start_job(snakemake)
write_data_file(DataFileSettings.from_config(snakemake.params.section), snakemake.output[0])
