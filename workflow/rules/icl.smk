# In-context evaluation (paper section 4.1): one job per (model, task family) loads its model once
# and runs every prompt of that family's grid; the prediction cache keeps reruns incremental.

# What the in-context tables read of the config (one slice for every table rule of the stage).
ICL_TABLES = {"icl": config["icl"], "models": {m: config["models"][m] for m in config["icl"]["models"]},
              "seeds": config["seeds"], "tasks": config["tasks"]}


rule icl_predict:
    input:
        unpack(lambda w: model_inputs(w.model, stage="icl")),
        data=lambda w: list(dict.fromkeys(f["data"] for f in icl_files(w.family, w.model))),
    output:
        ICL,
    params:
        section=icl_predict_params,
        cache_dir=config["icl"]["cache"],
    resources:
        # A model larger than one GPU asks for the GPUs its registry entry names.
        **model_job_resources("icl_predict", lambda w: stage_model("icl", w.model)),
    log:
        log_path("icl_predict", "{model}/{family}"),
    benchmark:
        benchmark_path("icl_predict", "{model}/{family}")
    conda:
        ENV
    script:
        "../scripts/icl_predict.py"


rule icl_pairs:
    input:
        icl_predictions(),
    output:
        **table_outputs("icl_pairs"),
    params:
        section=ICL_TABLES,
    log:
        log_path("icl_pairs"),
    run:
        run_writer("lengthgen.icl.table:write_icl_pairs", log, output, input, params.section)


rule icl_table:
    input:
        predictions=icl_predictions(),
        pairs=rules.icl_pairs.output.parquet,
    output:
        **table_outputs("icl"),
    params:
        section=ICL_TABLES,
    log:
        log_path("icl_table"),
    run:
        run_writer("lengthgen.icl.table:write_icl_table", log, output, input.predictions, input.pairs, params.section)
