# Task data, the theory table, the data summary and the theory check (docs/spec.md §1).

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.tasks.summary import write_data_summary
from lengthgen.tasks.theory import write_theory_table
from lengthgen.tasks.theory_check import write_theory_check


rule data:
    # Depends only on its parameters: shared between workflows with `--cache` (SNAKEMAKE_OUTPUT_CACHE).
    cache: "omit-software"
    output:
        data_path("{encoding}", "{task}", "{bin}", "{seed}"),
    params:
        section=lambda w: data_plan.data_params(EXPERIMENT, w.encoding, w.task, w.bin, w.seed).as_config(),
    log:
        log_path("data", "{encoding}/{task}/{bin}/seed{seed}"),
    # A script, not a `run:` block: Snakemake (9.27) fetches a cached output of a `run:` job before
    # it makes the output's folder, so `--cache` would fail in a fresh workflow directory.
    conda:
        ENV
    script:
        "../scripts/make_data.py"


rule theory_table:
    output:
        **table_outputs("theory"),
    params:
        section={"tasks": EXPERIMENT["tasks"]},
    log:
        log_path("theory_table"),
    run:
        run_writer(write_theory_table, log, output, params.section["tasks"], Provenance(params.section))


rule data_summary:
    input:
        data_plan.data_files(EXPERIMENT),
    output:
        **table_outputs("data_summary"),
    params:
        section=data_plan.tables_params(EXPERIMENT),
    log:
        log_path("data_summary"),
    run:
        run_writer(write_data_summary, log, output, input, Provenance(params.section))


rule theory_check:
    # Every task's C-RASP[pos] program on every example of the run and on strings ten times longer:
    # the run stops here when an expressible task's program gets one wrong.
    input:
        data_plan.data_files(EXPERIMENT),
    output:
        **table_outputs("theory_check", caption_name="theory_check"),
    params:
        section=data_plan.tables_params(EXPERIMENT),
        caption=caption_params("theory_check"),
    log:
        log_path("theory_check"),
    run:
        run_writer(write_theory_check, log, output, input, params.section["data"],
                   Provenance(params.section))
