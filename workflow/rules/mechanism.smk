# Mechanism (paper section 4.4): per model, head alignment scores and edge-level patching on copy
# prompts; then one table of each over every model.

# What the mechanism tables read of the config (one slice for every table rule of the stage).
MECHANISM_TABLES = {"mechanism": config["mechanism"], "seeds": config["seeds"]}


rule mechanism:
    input:
        unpack(mechanism_inputs),
    output:
        heads=f"{MECHANISM}/heads.parquet",
        patching=f"{MECHANISM}/patching.parquet",
    params:
        section=mechanism_params,
    resources:
        **model_job_resources("mechanism", mechanism_model),
    log:
        log_path("mechanism", "{subject}"),
    benchmark:
        benchmark_path("mechanism", "{subject}")
    conda:
        ENV
    script:
        "../scripts/mechanism.py"


rule mechanism_pairs:
    input:
        heads=mechanism_outputs("heads"),
        patching=mechanism_outputs("patching"),
    output:
        **table_outputs("mechanism_pairs"),
    params:
        section=MECHANISM_TABLES,
    log:
        log_path("mechanism_pairs"),
    run:
        run_writer("lengthgen.mechanism.tables:write_mechanism_pairs", log, output, input.heads, input.patching, params.section)


rule heads_table:
    input:
        heads=mechanism_outputs("heads"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("heads"),
    params:
        section=MECHANISM_TABLES,
    log:
        log_path("heads_table"),
    run:
        run_writer("lengthgen.mechanism.tables:write_heads_table", log, output, input.heads, input.pairs, params.section)


rule patching_table:
    input:
        patching=mechanism_outputs("patching"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("patching"),
    params:
        section=MECHANISM_TABLES,
    log:
        log_path("patching_table"),
    run:
        run_writer("lengthgen.mechanism.tables:write_patching_table", log, output, input.patching, input.pairs, params.section)
