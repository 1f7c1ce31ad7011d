# Mechanism (paper section 4.4): per model, head alignment scores and edge-level patching on copy
# prompts; then one table of each over every model.


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
        section={"mechanism": config["mechanism"], "seeds": config["seeds"]},
    log:
        log_path("mechanism_pairs"),
    run:
        from lengthgen.mechanism.tables import write_mechanism_pairs

        with job_log(log, output):
            write_mechanism_pairs(input.heads, input.patching, params.section, output)


rule heads_table:
    input:
        heads=mechanism_outputs("heads"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("heads"),
    params:
        section={"mechanism": config["mechanism"], "seeds": config["seeds"]},
    log:
        log_path("heads_table"),
    run:
        from lengthgen.mechanism.tables import write_heads_table

        with job_log(log, output):
            write_heads_table(input.heads, input.pairs, params.section, output)


rule patching_table:
    input:
        patching=mechanism_outputs("patching"),
        pairs=rules.mechanism_pairs.output.parquet,
    output:
        **table_outputs("patching"),
    params:
        section={"mechanism": config["mechanism"], "seeds": config["seeds"]},
    log:
        log_path("patching_table"),
    run:
        from lengthgen.mechanism.tables import write_patching_table

        with job_log(log, output):
            write_patching_table(input.patching, input.pairs, params.section, output)
