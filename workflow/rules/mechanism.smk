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
        gpu=mechanism_gpus,
    log:
        log_path("mechanism", "{subject}"),
    benchmark:
        benchmark_path("mechanism", "{subject}")
    conda:
        ENV
    script:
        "../scripts/mechanism.py"


rule heads_table:
    input:
        mechanism_outputs("heads"),
    output:
        **table_outputs("heads"),
    params:
        section={"mechanism": config["mechanism"], "seeds": config["seeds"]},
    log:
        log_path("heads_table"),
    run:
        from lengthgen.mechanism.tables import write_heads_table

        write_heads_table(input, params.section, output)


rule patching_table:
    input:
        mechanism_outputs("patching"),
    output:
        **table_outputs("patching"),
    params:
        section={"mechanism": config["mechanism"], "seeds": config["seeds"]},
    log:
        log_path("patching_table"),
    run:
        from lengthgen.mechanism.tables import write_patching_table

        write_patching_table(input, params.section, output)
