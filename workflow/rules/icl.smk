# In-context evaluation per (model, task, length, seed, prompt variant): paper section 4.1.

ICL = f"{RESULTS}/icl/{{model}}/{{task}}/{{bin}}/seed{{seed}}/{{variant}}.parquet"


wildcard_constraints:
    model=r"[A-Za-z0-9_.-]+",
    variant="bare|rule|formal|example|hint",


rule icl_predict:
    input:
        unpack(lambda w: model_inputs(w.model)),
        data=data_path("chars", "{task}", "{bin}", "{seed}"),
    output:
        ICL,
    params:
        section=lambda w: {
            "model": config["models"][w.model],
            "settings": config["data"]["chars"][task_of(w).generator],
            "shots": config["icl"]["shots"],
            "batch_size": config["icl"]["batch_size"],
        },
        cache_dir=config["icl"]["cache"],
    threads: 1
    resources:
        runtime=120,
        mem_mb=8000,
    script:
        "../scripts/icl_predict.py"


def icl_predictions():
    files = []
    for model in config["icl"]["models"]:
        for name, task in TASKS.items():
            for length in config["icl"]["lengths"][task.family]:
                for seed in config["seeds"]:
                    for variant in config["icl"]["variants"][task.family]:
                        files.append(ICL.format(model=model, task=name, bin=length, seed=seed, variant=variant))
    return files


rule icl_table:
    input:
        icl_predictions(),
    output:
        parquet=f"{TABLES}/icl.parquet",
        markdown=f"{TABLES}/icl.md",
    params:
        section={"icl": config["icl"], "models": {m: config["models"][m] for m in config["icl"]["models"]},
                 "seeds": config["seeds"], "tasks": config["tasks"]},
    script:
        "../scripts/icl_table.py"


def icl_enabled():
    return bool(config["icl"]["models"])


def icl_outputs():
    return rules.icl_table.output if icl_enabled() else []
