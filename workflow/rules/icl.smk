# In-context evaluation (paper section 4.1): one job per (model, task family) loads its model once
# and runs every prompt of that family's grid; the prediction cache keeps reruns incremental.

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.icl.table import write_icl_pairs, write_icl_table


rule icl_predict:
    input:
        unpack(lambda w: model_inputs(w.model, stage="icl")),
        data=lambda w: icl_plan.data_inputs(EXPERIMENT, w.family, w.model),
    output:
        ICL,
    params:
        section=lambda w: icl_plan.predict_params(EXPERIMENT, w.model, w.family).as_config(),
        cache_dir=EXPERIMENT["icl"]["cache"],
    resources:
        # A model larger than one GPU asks for the GPUs its registry entry names.
        **model_job_resources("icl_predict", lambda w: stage_model(EXPERIMENT, "icl", w.model)),
    log:
        log_path("icl_predict", "{model}/{family}"),
    conda:
        ENV
    run:
        script_job("icl_predict.py", locals(), benchmark_path("icl_predict", "{model}/{family}"))


rule icl_pairs:
    input:
        icl_plan.predictions(EXPERIMENT),
    output:
        **table_outputs("icl_pairs"),
    params:
        section=icl_plan.tables_params(EXPERIMENT),
    log:
        log_path("icl_pairs"),
    run:
        run_writer(write_icl_pairs, log, output, input, Provenance(params.section))


rule icl_table:
    input:
        predictions=icl_plan.predictions(EXPERIMENT),
        pairs=rules.icl_pairs.output.parquet,
    output:
        **table_outputs("icl"),
    params:
        section=icl_plan.tables_params(EXPERIMENT),
    log:
        log_path("icl_table"),
    run:
        run_writer(write_icl_table, log, output, input.predictions, input.pairs, Provenance(params.section))
