# From-scratch training per (task, PE, seed) and evaluation of every bin of each model: paper Appendix B.

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.scratch.tables import write_scratch_pairs, write_scratch_tables


rule scratch_train:
    output:
        model=directory(f"{SCRATCH}/model"),
        history=f"{SCRATCH}/training.parquet",
    params:
        section=lambda w: scratch_plan.train_params(EXPERIMENT, w.task, w.pe).as_config(),
        checkpoint_dir=SCRATCH_CHECKPOINTS,
    priority: lambda w: scratch_plan.train_cost(EXPERIMENT, w.task, w.pe)
    log:
        log_path("scratch_train", "{task}/{pe}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("scratch_train.py", locals(), benchmark_path("scratch_train", "{task}/{pe}/seed{seed}"))


# With scratch.stack: one job per (task and its mirror, PE) trains every seed of both as one stacked
# run and writes exactly the files scratch_train would (scratch_train then makes none of them).
STACK_RESOURCES, STACK_THREADS = profile_resources("scratch_train")
for stack in scratch_plan.stacks(EXPERIMENT):
    stack_tasks = "_".join(stack)
    stack_rule = f"scratch_stack_{stack_tasks}"

    rule:
        name:
            stack_rule
        output:
            [f(SCRATCH.format(task=task, pe="{pe}", seed=seed)) for task in stack for seed in EXPERIMENT["seeds"]
             for f in (lambda p: directory(f"{p}/model"), lambda p: f"{p}/training.parquet")],
        params:
            members=lambda w, stack=stack: scratch_plan.stack_members(EXPERIMENT, stack, w.pe),
        threads: STACK_THREADS
        resources:
            **STACK_RESOURCES,
        priority: lambda w, stack=stack: sum(scratch_plan.train_cost(EXPERIMENT, t, w.pe) for t in stack)
        log:
            log_path("scratch_stack", f"{stack_tasks}/{{pe}}"),
        conda:
            ENV
        run:
            script_job("scratch_train_stack.py", locals(), benchmark_path("scratch_stack", f"{stack_tasks}/{{pe}}"))

    workflow.ruleorder(stack_rule, "scratch_train")


rule scratch_eval:
    input:
        model=f"{SCRATCH}/model",
        data=lambda w: scratch_plan.eval_data(EXPERIMENT, w.task, w.seed),
    output:
        f"{SCRATCH}/eval.parquet",
    params:
        section=lambda w: scratch_plan.eval_params(EXPERIMENT, w.task).as_config(),
    log:
        log_path("scratch_eval", "{task}/{pe}/seed{seed}"),
    conda:
        ENV
    run:
        script_job("scratch_eval.py", locals(), benchmark_path("scratch_eval", "{task}/{pe}/seed{seed}"))


rule scratch_table:
    input:
        evals=scratch_plan.evals(EXPERIMENT),
        histories=scratch_plan.histories(EXPERIMENT),
    output:
        **table_outputs("scratch"),
        by_length=f"{TABLES}/scratch_by_length.parquet",
    params:
        section=scratch_plan.tables_params(EXPERIMENT),
    log:
        log_path("scratch_table"),
    run:
        run_writer(write_scratch_tables, log, output, input.evals, params.section["bins"],
                   Provenance(params.section))


rule scratch_pairs:
    input:
        evals=scratch_plan.evals(EXPERIMENT),
        data=scratch_plan.eval_inputs(EXPERIMENT),
    output:
        **table_outputs("scratch_pairs"),
    params:
        section=scratch_plan.tables_params(EXPERIMENT),
    log:
        log_path("scratch_pairs"),
    run:
        run_writer(write_scratch_pairs, log, output, input.evals, input.data,
                   params.section["scratch"]["train_lengths"], Provenance(params.section))
