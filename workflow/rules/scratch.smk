# From-scratch training per (task, PE, seed) and evaluation of every bin of each model: paper Appendix B.


rule scratch_train:
    output:
        model=directory(f"{SCRATCH}/model"),
        history=f"{SCRATCH}/training.parquet",
    params:
        section=scratch_train_params,
        checkpoint_dir=f"{RESULTS}/checkpoints/scratch/{{task}}/{{pe}}/seed{{seed}}",
    priority: scratch_train_cost
    log:
        log_path("scratch_train", "{task}/{pe}/seed{seed}"),
    benchmark:
        benchmark_path("scratch_train", "{task}/{pe}/seed{seed}")
    conda:
        ENV
    script:
        "../scripts/scratch_train.py"


rule scratch_eval:
    input:
        model=f"{SCRATCH}/model",
        data=scratch_eval_data,
    output:
        f"{SCRATCH}/eval.parquet",
    params:
        section=scratch_eval_params,
    log:
        log_path("scratch_eval", "{task}/{pe}/seed{seed}"),
    benchmark:
        benchmark_path("scratch_eval", "{task}/{pe}/seed{seed}")
    conda:
        ENV
    script:
        "../scripts/scratch_eval.py"


rule scratch_table:
    input:
        evals=scratch_evals(),
        histories=expand(f"{SCRATCH}/training.parquet", task=config["tasks"],
                         pe=config["scratch"]["positional_encodings"], seed=config["seeds"]),
    output:
        **table_outputs("scratch"),
        by_length=f"{TABLES}/scratch_by_length.parquet",
    params:
        section={"bins": scratch_bins(config["scratch"]), "scratch": config["scratch"], "seeds": config["seeds"],
                 "tasks": config["tasks"]},
    log:
        log_path("scratch_table"),
    run:
        from lengthgen.scratch.tables import write_scratch_tables

        write_scratch_tables(input.evals, params.section, output)
