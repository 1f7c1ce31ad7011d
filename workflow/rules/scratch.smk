# From-scratch training per (task, PE, seed) and evaluation of every bin of each model: paper Appendix B.

# What the from-scratch tables read of the config (one slice for every table rule of the stage).
SCRATCH_TABLES = {"bins": scratch_bins(config["scratch"]), "scratch": config["scratch"], "seeds": config["seeds"],
                  "tasks": config["tasks"]}


rule scratch_train:
    output:
        model=directory(f"{SCRATCH}/model"),
        history=f"{SCRATCH}/training.parquet",
    params:
        section=scratch_train_params,
        checkpoint_dir=SCRATCH_CHECKPOINTS,
    priority: scratch_train_cost
    log:
        log_path("scratch_train", "{task}/{pe}/seed{seed}"),
    benchmark:
        benchmark_path("scratch_train", "{task}/{pe}/seed{seed}")
    conda:
        ENV
    script:
        "../scripts/scratch_train.py"


# With scratch.stack: one job per (task and its mirror, PE) trains every seed of both as one stacked
# run and writes exactly the files scratch_train would (scratch_train then makes none of them).
STACK_RESOURCES, STACK_THREADS = profile_resources("scratch_train")
for stack in scratch_stacks():
    stack_tasks = "_".join(stack)
    stack_rule = f"scratch_stack_{stack_tasks}"

    rule:
        name:
            stack_rule
        output:
            [f(SCRATCH.format(task=task, pe="{pe}", seed=seed)) for task in stack for seed in config["seeds"]
             for f in (lambda p: directory(f"{p}/model"), lambda p: f"{p}/training.parquet")],
        params:
            members=lambda w, stack=stack: scratch_stack_members(stack, w.pe),
        threads: STACK_THREADS
        resources:
            **STACK_RESOURCES,
        priority: lambda w, stack=stack: sum(scratch_train_cost(SimpleNamespace(task=t, pe=w.pe)) for t in stack)
        log:
            log_path("scratch_stack", f"{stack_tasks}/{{pe}}"),
        benchmark:
            benchmark_path("scratch_stack", f"{stack_tasks}/{{pe}}")
        conda:
            ENV
        script:
            "../scripts/scratch_train_stack.py"

    workflow.ruleorder(stack_rule, "scratch_train")


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
        section=SCRATCH_TABLES,
    log:
        log_path("scratch_table"),
    run:
        run_writer("lengthgen.scratch.tables:write_scratch_tables", log, output, input.evals, params.section)


rule scratch_pairs:
    input:
        evals=scratch_evals(),
        data=scratch_eval_inputs(),
    output:
        **table_outputs("scratch_pairs"),
    params:
        section=SCRATCH_TABLES,
    log:
        log_path("scratch_pairs"),
    run:
        run_writer("lengthgen.scratch.tables:write_scratch_pairs", log, output, input.evals, input.data, params.section)
