# Task data, the theory table and the data summary.


def data_params(wildcards):
    """Everything this file depends on and nothing else, so other settings never rerun it. The
    wildcards are repeated here because the between-workflow cache hashes params, not paths."""
    generator = task_of(wildcards).generator
    section = config["data"][wildcards.encoding]
    return {"task": wildcards.task, "encoding": wildcards.encoding, "bin": wildcards.bin,
            "seed": int(wildcards.seed), "examples": section["examples"], "generator": generator,
            "settings": section[generator]}


rule data:
    # Depends only on its parameters: shared between workflows with `--cache` (SNAKEMAKE_OUTPUT_CACHE).
    cache: "omit-software"
    output:
        data_path("{encoding}", "{task}", "{bin}", "{seed}"),
    params:
        section=data_params,
    script:
        "../scripts/make_data.py"


rule theory_table:
    output:
        parquet=f"{TABLES}/theory.parquet",
        markdown=f"{TABLES}/theory.md",
    params:
        section={"tasks": config["tasks"]},
    script:
        "../scripts/theory_table.py"


rule data_summary:
    input:
        data_files(),
    output:
        parquet=f"{TABLES}/data_summary.parquet",
        markdown=f"{TABLES}/data_summary.md",
    params:
        section={"tasks": config["tasks"], "seeds": config["seeds"], "data": config["data"]},
    script:
        "../scripts/data_summary.py"
