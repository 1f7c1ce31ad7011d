# The embedded pretrained LM: a character-level model trained on text that ships with Python.
# Run with `snakemake --configfile configs/pretrain.yaml`; the repository ships its output under resources/.


rule pretrain:
    # Depends only on its parameters: shared between workflows with `--cache` (SNAKEMAKE_OUTPUT_CACHE).
    # No `benchmark:` (Snakemake refuses it on a cached rule): the job records its own times in the
    # summary's provenance, where `lengthgen runtimes` reads them.
    cache: "omit-software"
    output:
        model=directory(f"{PRETRAIN}/model"),
        summary=f"{PRETRAIN}/summary.parquet",
    params:
        section=lambda w: pretrain_section(EXPERIMENT, w.architecture, w.corpus, w.seed).as_config(),
        checkpoint_dir=PRETRAIN_CHECKPOINTS,
    log:
        log_path("pretrain", "{corpus}/{architecture}/seed{seed}"),
    conda:
        ENV
    script:
        "../scripts/pretrain.py"
