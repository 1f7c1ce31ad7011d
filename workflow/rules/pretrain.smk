# The embedded pretrained LM: a character-level model trained on text that ships with Python.
# Run with `snakemake --configfile configs/pretrain.yaml`; the repository ships its output under resources/.

PRETRAIN = f"{RESULTS}/pretrain/{{architecture}}"


rule pretrain:
    # Depends only on its parameters: shared between workflows with `--cache` (SNAKEMAKE_OUTPUT_CACHE).
    cache: "omit-software"
    output:
        model=directory(f"{PRETRAIN}/model"),
        summary=f"{PRETRAIN}/summary.parquet",
    params:
        section=lambda w: {**{k: v for k, v in config["pretrain"].items() if k not in ("enabled", "architectures")},
                           "architecture": w.architecture},
        checkpoint_dir=f"{RESULTS}/checkpoints/pretrain/{{architecture}}",
    threads: 2
    resources:
        runtime=600,
        mem_mb=8000,
    script:
        "../scripts/pretrain.py"


def pretrain_outputs():
    if not config["pretrain"]["enabled"]:
        return []
    return expand(rules.pretrain.output.summary, architecture=config["pretrain"]["architectures"])
