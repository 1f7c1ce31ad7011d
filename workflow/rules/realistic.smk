# Realistic tasks (paper section 4.2): one job per (model, task) loads its model once and runs every
# length and seed, through the in-context prediction cache; then one table over every model.

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.realistic.tables import write_realistic_pairs, write_realistic_table


rule realistic_predict:
    input:
        unpack(lambda w: model_inputs(w.model, stage="realistic")),
    output:
        REALISTIC,
    params:
        section=lambda w: realistic_plan.params(EXPERIMENT, w.model, w.realistic).as_config(),
        cache_dir=EXPERIMENT["icl"]["cache"],
    resources:
        **model_job_resources("realistic_predict", lambda w: stage_model(EXPERIMENT, "realistic", w.model)),
    log:
        log_path("realistic_predict", "{model}/{realistic}"),
    conda:
        ENV
    run:
        script_job("realistic_predict.py", locals(), benchmark_path("realistic_predict", "{model}/{realistic}"))


rule realistic_pairs:
    input:
        realistic_plan.predictions(EXPERIMENT),
    output:
        **table_outputs("realistic_pairs"),
    params:
        section=realistic_plan.pairs_params(EXPERIMENT),
    log:
        log_path("realistic_pairs"),
    run:
        run_writer(write_realistic_pairs, log, output, input, Provenance(params.section))


rule realistic_table:
    input:
        predictions=realistic_plan.predictions(EXPERIMENT),
        pairs=rules.realistic_pairs.output.parquet,
    output:
        **table_outputs("realistic"),
    params:
        section=realistic_plan.table_params(EXPERIMENT),
    log:
        log_path("realistic_table"),
    run:
        run_writer(write_realistic_table, log, output, input.predictions, input.pairs,
                   params.section["models"], Provenance(params.section))
