# Fine-tuning registry models per (model, task, seed), then evaluation of every bin of each model:
# paper section 4.3. Then the comparison of the three experiments per mirror pair.


rule finetune_train:
    input:
        unpack(lambda w: model_inputs(w.model, stage="finetune")),
    output:
        model=directory(f"{FINETUNE}/model"),
        history=f"{FINETUNE}/training.parquet",
    params:
        section=finetune_train_params,
        checkpoint_dir=f"{RESULTS}/checkpoints/finetune/{{model}}/{{task}}/seed{{seed}}",
    resources:
        **model_job_resources("finetune_train", lambda w: stage_model("finetune", w.model)),
    log:
        log_path("finetune_train", "{model}/{task}/seed{seed}"),
    benchmark:
        benchmark_path("finetune_train", "{model}/{task}/seed{seed}")
    conda:
        ENV
    script:
        "../scripts/finetune_train.py"


rule finetune_eval:
    input:
        model=f"{FINETUNE}/model",
        data=finetune_eval_data,
    output:
        f"{FINETUNE}/eval.parquet",
    params:
        section=finetune_eval_params,
    resources:
        **model_job_resources("finetune_eval", lambda w: stage_model("finetune", w.model)),
    log:
        log_path("finetune_eval", "{model}/{task}/seed{seed}"),
    benchmark:
        benchmark_path("finetune_eval", "{model}/{task}/seed{seed}")
    conda:
        ENV
    script:
        "../scripts/finetune_eval.py"


rule finetune_table:
    input:
        evals=finetune_evals(),
    output:
        **table_outputs("finetune"),
    params:
        section=finetune_tables_params(),
    log:
        log_path("finetune_table"),
    run:
        from lengthgen.finetune.tables import write_finetune_table

        with job_log(log, output):
            write_finetune_table(input.evals, params.section, output)


rule finetune_pairs:
    input:
        evals=finetune_evals(),
        data=finetune_eval_inputs(),
    output:
        **table_outputs("finetune_pairs"),
    params:
        section=finetune_tables_params(),
    log:
        log_path("finetune_pairs"),
    run:
        from lengthgen.finetune.tables import write_finetune_pairs

        with job_log(log, output):
            write_finetune_pairs(input.evals, input.data, params.section, output)


rule finetune_places:
    input:
        evals=finetune_evals(),
    output:
        **table_outputs("finetune_places"),
    params:
        section=finetune_tables_params(),
    log:
        log_path("finetune_places"),
    run:
        from lengthgen.finetune.tables import write_finetune_places

        with job_log(log, output):
            write_finetune_places(input.evals, params.section, output)


rule comparison_table:
    input:
        scratch=rules.scratch_table.output.parquet,
        icl=rules.icl_table.output.parquet,
        finetune=rules.finetune_table.output.parquet,
    output:
        **table_outputs("comparison"),
    params:
        section={"tasks": config["tasks"]},
    log:
        log_path("comparison_table"),
    run:
        from lengthgen.results.comparison import write_comparison_table

        with job_log(log, output):
            write_comparison_table(input.scratch, input.icl, input.finetune, params.section, output)
