"""Adapter: train every run of one stack (a task and its mirror, every seed, one PE) as one stacked
run, writing each run's model and history as scratch_train would."""
from lengthgen.engine.run import write_history
from lengthgen.records.provenance import Provenance
from lengthgen.runtime import start_job
from lengthgen.scratch.train import train_scratch_models
from lengthgen.settings import ScratchRunSettings
from lengthgen.tasks import get_task

device = start_job(snakemake, uses_torch=True)
pe, members = snakemake.wildcards.pe, snakemake.params.members
outputs = list(snakemake.output)  # per member: model directory, then history
runs = [{"task": get_task(m["task"]), "pe": pe, "seed": m["seed"], "settings": ScratchRunSettings.from_config(m["section"]),
         "checkpoint_dir": m["checkpoint_dir"], "model_dir": outputs[2 * i]} for i, m in enumerate(members)]
summaries = train_scratch_models(runs, progress=True, stack=True)
for i, (member, summary) in enumerate(zip(members, summaries)):
    wildcards = {"task": member["task"], "pe": pe, "seed": str(member["seed"])}
    write_history(summary, outputs[2 * i + 1], Provenance(member["section"]), member["seed"], device, wildcards,
                  stacked_with=len(members))
