# Mechanism (paper section 4.4): per model, head alignment scores and edge-level patching on copy
# prompts; then one table of each over every model.

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.mechanism.tables import write_heads_table, write_mechanism_pairs, write_patching_table


rule mechanism:
    input:
        unpack(mechanism_inputs),
    output:
        heads=f"{MECHANISM}/heads.parquet",
        patching=f"{MECHANISM}/patching.parquet",
    params:
        section=lambda w: mechanism_plan.params(EXPERIMENT, w.subject).as_config(),
    resources:
        **model_job_resources("mechanism", lambda w: mechanism_plan.registry_model(EXPERIMENT, w.subject)),
    log:
        log_path("mechanism", "{subject}"),
    conda:
        ENV
    run:
        script_job("mechanism.py", locals(), benchmark_path("mechanism", "{subject}"))


rule mechanism_pairs:
    input:
        heads=mechanism_plan.outputs(EXPERIMENT, "heads"),
        patching=mechanism_plan.outputs(EXPERIMENT, "patching"),
    output:
        **table_outputs("mechanism_pairs"),
    params:
        section=mechanism_plan.tables_params(EXPERIMENT),
    log:
        log_path("mechanism_pairs"),
    run:
        run_writer(write_mechanism_pairs, log, output, input.heads, input.patching, Provenance(params.section))


rule heads_table:
    input:
        heads=mechanism_plan.outputs(EXPERIMENT, "heads"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("heads"),
    params:
        section=mechanism_plan.tables_params(EXPERIMENT),
    log:
        log_path("heads_table"),
    run:
        run_writer(write_heads_table, log, output, input.heads, input.pairs, Provenance(params.section))


rule patching_table:
    input:
        patching=mechanism_plan.outputs(EXPERIMENT, "patching"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("patching"),
    params:
        section=mechanism_plan.tables_params(EXPERIMENT),
    log:
        log_path("patching_table"),
    run:
        run_writer(write_patching_table, log, output, input.patching, input.pairs, Provenance(params.section))
