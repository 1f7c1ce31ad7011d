# The embedded pretrained LM: a character-level model trained on text that ships with Python.
# Run with `snakemake --configfile configs/pretrain.yaml`; the repository ships its output under resources/.


rule pretrain:
    # Depends only on its parameters: shared between workflows with `--cache` (SNAKEMAKE_OUTPUT_CACHE).
    # No `benchmark:` (Snakemake refuses it on a cached rule); the log has the run time per step.
    cache: "omit-software"
    output:
        model=directory(f"{RESULTS}/pretrain/{{corpus}}/{{architecture}}/model"),
        summary=f"{RESULTS}/pretrain/{{corpus}}/{{architecture}}/summary.parquet",
    params:
        section=lambda w: pretrain_section(config, w.architecture, w.corpus).as_config(),
        checkpoint_dir=f"{RESULTS}/checkpoints/pretrain/{{corpus}}/{{architecture}}",
    log:
        log_path("pretrain", "{corpus}/{architecture}"),
    conda:
        ENV
    script:
        "../scripts/pretrain.py"
