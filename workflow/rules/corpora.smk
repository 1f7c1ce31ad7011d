# Beyond the paper: does the induction preference follow the pretraining data? The same small model
# pretrained on each corpus variant (pretrain.corpora; the repository ships them), measured by the
# mechanism stage's analysis, the in-context copy measures and a short fine-tuning, in files of
# their own (results/corpora/) so that the paper's stages and findings keep their own models; then
# the corpora's repeat statistics and the paired comparisons finding 7 reads (the pretraining
# curves: figure_corpora, generated in report.smk from lengthgen.plan.figures).

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.corpora.dose import write_corpus_dose, write_corpus_dose_models
from lengthgen.corpora.pairs import write_corpus_pairs
from lengthgen.pretrain.statistics_table import write_corpus_statistics


rule corpus_manipulation:
    input:
        unpack(lambda w: model_inputs(corpora_plan.model(EXPERIMENT, w.model))),
    output:
        CORPUS_MANIPULATION,
    params:
        section=lambda w: corpora_plan.manipulation_params(EXPERIMENT, w.model).as_config(),
    resources:
        **model_job_resources("mechanism", lambda w: w.model),
    log:
        log_path("corpus_manipulation", "{model}"),
    conda:
        ENV
    run:
        script_job("corpus_manipulation.py", locals(), benchmark_path("corpus_manipulation", "{model}"))


rule corpus_mechanism:
    input:
        unpack(lambda w: model_inputs(corpora_plan.model(EXPERIMENT, w.model))),
    output:
        heads=f"{CORPUS_MECHANISM}/heads.parquet",
        patching=f"{CORPUS_MECHANISM}/patching.parquet",
    params:
        section=lambda w: corpora_plan.mechanism_params(EXPERIMENT, w.model).as_config(),
    resources:
        **model_job_resources("mechanism", lambda w: w.model),
    log:
        log_path("corpus_mechanism", "{model}"),
    conda:
        ENV
    run:
        script_job("mechanism.py", locals(), benchmark_path("corpus_mechanism", "{model}"))


rule corpus_icl:
    input:
        unpack(lambda w: model_inputs(corpora_plan.model(EXPERIMENT, w.model))),
        data=lambda w: corpora_plan.icl_data(EXPERIMENT, w.model),
    output:
        CORPUS_ICL,
    params:
        section=lambda w: corpora_plan.icl_params(EXPERIMENT, w.model).as_config(),
        cache_dir=EXPERIMENT["icl"]["cache"],
    resources:
        **model_job_resources("icl_predict", lambda w: w.model),
    log:
        log_path("corpus_icl", "{model}/{family}"),
    conda:
        ENV
    run:
        script_job("icl_predict.py", locals(), benchmark_path("corpus_icl", "{model}/{family}"))


rule corpus_finetune_train:
    input:
        unpack(lambda w: model_inputs(corpora_plan.model(EXPERIMENT, w.model))),
    output:
        model=directory(f"{CORPUS_FINETUNE}/model"),
        history=f"{CORPUS_FINETUNE}/training.parquet",
    params:
        section=lambda w: corpora_plan.finetune_params(EXPERIMENT, w.model, w.task).as_config(),
        checkpoint_dir=f"{RESULTS}/checkpoints/corpora/{{model}}/{{task}}/seed{{seed}}",
    resources:
        **model_job_resources("finetune_train", lambda w: w.model),
    log:
        log_path("corpus_finetune_train", "{model}/{task}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("finetune_train.py", locals(), benchmark_path("corpus_finetune_train", "{model}/{task}/seed{seed}"))


rule corpus_finetune_eval:
    input:
        model=f"{CORPUS_FINETUNE}/model",
        data=lambda w: finetune_plan.eval_data(EXPERIMENT, w.task, w.seed),
    output:
        f"{CORPUS_FINETUNE}/eval.parquet",
    params:
        section=lambda w: finetune_plan.eval_params(EXPERIMENT, w.task).as_config(),
    resources:
        **model_job_resources("finetune_eval", lambda w: w.model),
    log:
        log_path("corpus_finetune_eval", "{model}/{task}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("finetune_eval.py", locals(), benchmark_path("corpus_finetune_eval", "{model}/{task}/seed{seed}"))


rule corpus_statistics:
    output:
        **table_outputs("corpus_statistics"),
    params:
        section=corpora_plan.statistics_params(EXPERIMENT).as_config(),
    log:
        log_path("corpus_statistics"),
    run:
        run_writer(write_corpus_statistics, log, output,
                   CorpusStatisticsSettings.from_config(params.section), Provenance(params.section))


rule corpus_pairs:
    input:
        heads=corpora_plan.heads(EXPERIMENT),
        icl=corpora_plan.icl_predictions(EXPERIMENT),
        finetune=corpora_plan.finetune_evals(EXPERIMENT),
        manipulation=corpora_plan.manipulations(EXPERIMENT),
        histories=corpora_plan.finetune_histories(EXPERIMENT),
    output:
        **table_outputs("corpus_pairs"),
    params:
        section=corpora_plan.pairs_params(EXPERIMENT),
    log:
        log_path("corpus_pairs"),
    run:
        run_writer(write_corpus_pairs, log, output, input.heads, input.icl, input.finetune, input.manipulation,
                   input.histories, params.section, Provenance(params.section))


rule corpus_dose:
    input:
        heads=corpora_plan.heads(EXPERIMENT),
        finetune=corpora_plan.finetune_evals(EXPERIMENT),
        manipulation=corpora_plan.manipulations(EXPERIMENT),
    output:
        **table_outputs("corpus_dose"),
    params:
        section=corpora_plan.pairs_params(EXPERIMENT),
    log:
        log_path("corpus_dose"),
    run:
        run_writer(write_corpus_dose, log, output, input.heads, input.finetune, input.manipulation,
                   params.section, Provenance(params.section))


rule corpus_dose_models:
    input:
        heads=corpora_plan.heads(EXPERIMENT),
        finetune=corpora_plan.finetune_evals(EXPERIMENT),
        manipulation=corpora_plan.manipulations(EXPERIMENT),
    output:
        **table_outputs("corpus_dose_models"),
    params:
        section=corpora_plan.pairs_params(EXPERIMENT),
    log:
        log_path("corpus_dose_models"),
    run:
        run_writer(write_corpus_dose_models, log, output, input.heads, input.finetune, input.manipulation,
                   params.section, Provenance(params.section))
