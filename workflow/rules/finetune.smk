# Fine-tuning registry models per (model, task, seed), then evaluation of every bin of each model:
# paper section 4.3. Then the comparison of the three experiments per mirror pair.

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.finetune.tables import write_finetune_pairs, write_finetune_places, write_finetune_table
from lengthgen.results.comparison import write_comparison_table


rule finetune_train:
    input:
        unpack(lambda w: model_inputs(w.model, stage="finetune")),
    output:
        model=directory(f"{FINETUNE}/model"),
        history=f"{FINETUNE}/training.parquet",
    params:
        section=lambda w: finetune_plan.train_params(EXPERIMENT, w.model, w.task, w.protocol).as_config(),
        checkpoint_dir=FINETUNE_CHECKPOINTS,
    resources:
        **model_job_resources("finetune_train", lambda w: stage_model(EXPERIMENT, "finetune", w.model)),
    log:
        log_path("finetune_train", "{model}/{protocol}/{task}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("finetune_train.py", locals(), benchmark_path("finetune_train", "{model}/{protocol}/{task}/seed{seed}"))


rule finetune_eval:
    input:
        model=f"{FINETUNE}/model",
        data=lambda w: finetune_plan.eval_data(EXPERIMENT, w.task, w.seed, w.protocol),
    output:
        f"{FINETUNE}/eval.parquet",
    params:
        section=lambda w: finetune_plan.eval_params(EXPERIMENT, w.task, w.protocol).as_config(),
    resources:
        **model_job_resources("finetune_eval", lambda w: stage_model(EXPERIMENT, "finetune", w.model)),
    log:
        log_path("finetune_eval", "{model}/{protocol}/{task}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("finetune_eval.py", locals(), benchmark_path("finetune_eval", "{model}/{protocol}/{task}/seed{seed}"))


rule finetune_table:
    input:
        evals=finetune_plan.evals(EXPERIMENT),
    output:
        **table_outputs("finetune"),
    params:
        section=finetune_plan.tables_params(EXPERIMENT),
    log:
        log_path("finetune_table"),
    run:
        run_writer(write_finetune_table, log, output, input.evals,
                   params.section["protocols"], list(params.section["models"]), Provenance(params.section))


rule finetune_pairs:
    input:
        evals=finetune_plan.evals(EXPERIMENT),
        data=finetune_plan.eval_inputs(EXPERIMENT),
    output:
        **table_outputs("finetune_pairs"),
    params:
        section=finetune_plan.tables_params(EXPERIMENT),
    log:
        log_path("finetune_pairs"),
    run:
        run_writer(write_finetune_pairs, log, output, input.evals, input.data,
                   params.section["protocols"], list(params.section["models"]), Provenance(params.section))


rule finetune_places:
    input:
        evals=finetune_plan.evals(EXPERIMENT),
    output:
        **table_outputs("finetune_places"),
    params:
        section=finetune_plan.tables_params(EXPERIMENT),
    log:
        log_path("finetune_places"),
    run:
        run_writer(write_finetune_places, log, output, input.evals,
                   params.section["protocols"], list(params.section["models"]), Provenance(params.section))


rule comparison_table:
    input:
        scratch=rules.scratch_table.output.parquet,
        icl=rules.icl_table.output.parquet,
        finetune=rules.finetune_table.output.parquet,
    output:
        **table_outputs("comparison"),
    params:
        section={"tasks": EXPERIMENT["tasks"]},
    log:
        log_path("comparison_table"),
    run:
        run_writer(write_comparison_table, log, output, input.scratch, input.icl, input.finetune,
                   Provenance(params.section))
