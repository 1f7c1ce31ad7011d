# Fine-tuning registry models per (model, task, seed), evaluation per (..., bin): paper section 4.3.
# Then the comparison of the three experiments per mirror pair.

FINETUNE = f"{RESULTS}/finetune/{{model}}/{{task}}/seed{{seed}}"


def finetune_train_params(wildcards):
    """Only what this fine-tuning depends on: the model entry, its task's data settings, lengths, training."""
    section, task = config["finetune"], task_of(wildcards)
    return {
        "model": config["models"][wildcards.model],
        "data": config["data"]["chars"][task.generator],
        "train_lengths": str(section["train_lengths"][task.family]),
        "max_length": max(LengthBin.parse(b).high for b in finetune_bins(section)[task.family]),
        "training": section["training"],
    }


rule finetune_train:
    input:
        unpack(lambda w: model_inputs(w.model)),
    output:
        model=directory(f"{FINETUNE}/model"),
        history=f"{FINETUNE}/training.parquet",
    params:
        section=finetune_train_params,
        checkpoint_dir=f"{RESULTS}/checkpoints/finetune/{{model}}/{{task}}/seed{{seed}}",
    threads: 1
    resources:
        runtime=720,
        mem_mb=8000,
    script:
        "../scripts/finetune_train.py"


rule finetune_eval:
    input:
        model=f"{FINETUNE}/model",
        data=data_path("chars", "{task}", "{bin}", "{seed}"),
    output:
        f"{FINETUNE}/eval/{{bin}}.parquet",
    params:
        section=lambda w: {
            "alphabet_size": config["data"]["chars"][task_of(w).generator]["alphabet_size"],
            "batch_size": config["finetune"]["training"]["eval_batch_size"],
            "precision": config["finetune"]["training"]["precision"],
        },
    threads: 1
    resources:
        runtime=60,
        mem_mb=8000,
    script:
        "../scripts/finetune_eval.py"


def finetune_evals():
    bins = finetune_bins(config["finetune"])
    return [
        f"{RESULTS}/finetune/{model}/{name}/seed{seed}/eval/{length_bin}.parquet"
        for model in config["finetune"]["models"]
        for name, task in TASKS.items()
        for seed in config["seeds"]
        for length_bin in bins[task.family]
    ]


rule finetune_table:
    input:
        evals=finetune_evals(),
    output:
        parquet=f"{TABLES}/finetune.parquet",
        markdown=f"{TABLES}/finetune.md",
    params:
        section={"bins": finetune_bins(config["finetune"]), "finetune": config["finetune"], "seeds": config["seeds"],
                 "tasks": config["tasks"], "models": {m: config["models"][m] for m in config["finetune"]["models"]}},
    script:
        "../scripts/finetune_table.py"


rule comparison_table:
    input:
        scratch=rules.scratch_table.output.parquet,
        icl=rules.icl_table.output.parquet,
        finetune=rules.finetune_table.output.parquet,
    output:
        parquet=f"{TABLES}/comparison.parquet",
        markdown=f"{TABLES}/comparison.md",
    params:
        section={"tasks": config["tasks"]},
    script:
        "../scripts/comparison_table.py"


def finetune_enabled():
    return bool(config["finetune"]["models"])


def comparison_enabled():
    """The comparison needs all three experiments."""
    return finetune_enabled() and scratch_enabled() and icl_enabled()


def finetune_outputs():
    outputs = list(rules.finetune_table.output) if finetune_enabled() else []
    return outputs + (list(rules.comparison_table.output) if comparison_enabled() else [])
