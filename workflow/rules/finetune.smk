# Fine-tuning registry models per (model, task, seed), evaluation per (..., bin): paper section 4.3.
# Then the comparison of the three experiments per mirror pair.

FINETUNE = f"{RESULTS}/finetune/{{model}}/{{task}}/seed{{seed}}"


def finetune_train_params(wildcards):
    """Only what this fine-tuning depends on: the model entry, its task's data settings, lengths, training."""
    section = config["finetune"]
    family = get_task(wildcards.task).family
    return {
        "model": config["models"][wildcards.model],
        "data": config["data"]["chars"][get_task(wildcards.task).generator],
        "train_lengths": str(section["train_lengths"][family]),
        "max_length": max(LengthSpec.parse(str(b)).high for b in section["test_bins"][family]),
        "training": section["training"],
    }


rule finetune_train:
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
        data=data_path("chars", "{task}", "{lengths}", "{seed}"),
    output:
        f"{FINETUNE}/eval/{{lengths}}.parquet",
    params:
        section=lambda w: {
            "alphabet_size": config["data"]["chars"][get_task(w.task).generator]["alphabet_size"],
            "batch_size": config["finetune"]["training"]["eval_batch_size"],
            "precision": config["finetune"]["training"]["precision"],
        },
    threads: 1
    resources:
        runtime=60,
        mem_mb=8000,
    script:
        "../scripts/finetune_eval.py"


def finetune_bins():
    return {f: [str(b) for b in config["finetune"]["test_bins"][f]] for f in ("retrieval", "copying")}


def finetune_evals():
    bins = finetune_bins()
    return [
        f"{RESULTS}/finetune/{model}/{task}/seed{seed}/eval/{lengths}.parquet"
        for model in config["finetune"]["models"]
        for task in config["tasks"]
        for seed in config["seeds"]
        for lengths in bins[get_task(task).family]
    ]


rule finetune_table:
    input:
        evals=finetune_evals(),
    output:
        parquet=f"{TABLES}/finetune.parquet",
        markdown=f"{TABLES}/finetune.md",
    params:
        section={"bins": finetune_bins(), "finetune": config["finetune"], "seeds": config["seeds"],
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


def finetune_outputs():
    if not config["finetune"]["models"]:
        return []
    outputs = list(rules.finetune_table.output)
    if config["scratch"]["enabled"] and config["icl"]["models"]:
        outputs += list(rules.comparison_table.output)
    return outputs
