# From-scratch training per (task, PE, seed) and evaluation per (task, PE, seed, bin): paper Appendix B.

SCRATCH = f"{RESULTS}/scratch/{{task}}/{{pe}}/seed{{seed}}"


def scratch_train_params(wildcards):
    """Only what this model depends on: its generator's settings, lengths, model and training."""
    section, task = config["scratch"], task_of(wildcards)
    settings = scratch_family_settings(section, task.family)
    training = {k: v for k, v in settings["training"].items() if k != "schedule"}
    training["schedule"] = settings["training"]["schedule"][wildcards.pe]
    longest = max(LengthBin.parse(b).high for b in scratch_bins(section)[task.family])
    return {
        "data": config["data"]["tokens"][task.generator],
        "train_lengths": scratch_lengths(section, task.family)[0],
        # Only learned absolute positions depend on the longest test length (table size, offsets).
        "max_length": longest if wildcards.pe == "ape" else None,
        "model": {k: v for k, v in settings["model"].items() if wildcards.pe == "ape" or k != "max_positions"},
        "training": training,
    }


def scratch_train_cost(wildcards):
    """Expected work of a training job (layers x longest training sequence x steps), as its
    scheduling priority: the longest jobs start first, so the short ones (and the evaluations
    after them) fill the cores at the end instead of one long job running alone."""
    settings = scratch_train_params(wildcards)
    width = task_of(wildcards).sequence_length(LengthBin.parse(settings["train_lengths"]).high)
    return settings["model"]["layers"] * width * settings["training"]["max_steps"] / 1e6


rule scratch_train:
    output:
        model=directory(f"{SCRATCH}/model"),
        history=f"{SCRATCH}/training.parquet",
    params:
        section=scratch_train_params,
        checkpoint_dir=f"{RESULTS}/checkpoints/scratch/{{task}}/{{pe}}/seed{{seed}}",
    priority: scratch_train_cost
    threads: 1
    resources:
        runtime=720,
        mem_mb=4000,
    script:
        "../scripts/scratch_train.py"


def scratch_eval_params(wildcards):
    training = scratch_family_settings(config["scratch"], task_of(wildcards).family)["training"]
    return {"greedy": config["scratch"]["greedy"], "batch_size": training["eval_batch_size"],
            "precision": training["precision"]}


rule scratch_eval:
    input:
        model=f"{SCRATCH}/model",
        data=data_path("tokens", "{task}", "{bin}", "{seed}"),
    output:
        f"{SCRATCH}/eval/{{bin}}.parquet",
    params:
        section=scratch_eval_params,
    threads: 1
    resources:
        runtime=60,
        mem_mb=4000,
    script:
        "../scripts/scratch_eval.py"


def scratch_evals():
    bins = scratch_bins(config["scratch"])
    return [
        f"{RESULTS}/scratch/{name}/{pe}/seed{seed}/eval/{length_bin}.parquet"
        for name, task in TASKS.items()
        for pe in config["scratch"]["positional_encodings"]
        for seed in config["seeds"]
        for length_bin in bins[task.family]
    ]


rule scratch_table:
    input:
        evals=scratch_evals(),
        histories=expand(f"{SCRATCH}/training.parquet", task=config["tasks"],
                         pe=config["scratch"]["positional_encodings"], seed=config["seeds"]),
    output:
        parquet=f"{TABLES}/scratch.parquet",
        markdown=f"{TABLES}/scratch.md",
        by_length=f"{TABLES}/scratch_by_length.parquet",
    params:
        section={"bins": scratch_bins(config["scratch"]), "scratch": config["scratch"], "seeds": config["seeds"],
                 "tasks": config["tasks"]},
    script:
        "../scripts/scratch_table.py"


def scratch_enabled():
    return config["scratch"]["enabled"]


def scratch_outputs():
    return rules.scratch_table.output if scratch_enabled() else []
