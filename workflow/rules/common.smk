# Config validation and every function that plans the grid: paths, the params of each rule (its own
# config slice), the inputs that come from the config, and what each stage makes. The rule files
# hold only rules (and one-line lambdas) that call these.
import sys
from pathlib import Path
from types import SimpleNamespace

import yaml

from lengthgen.config import (ConfigError, check_models, finetune_bins, finetune_task_section, icl_variants, model_entry,
                              per_family, pretrain_section, scratch_bins, scratch_family_settings, scratch_lengths,
                              validate_config)
from lengthgen.models.gguf import GGUFSource
from lengthgen.models.registry import ModelUnavailable, project_path
from lengthgen.realistic import TASKS as REALISTIC_TASKS
from lengthgen.results.findings import findings_sources
from lengthgen.runtime import job_log
from lengthgen.tasks import FAMILIES, TASK_NAMES, LengthBin, get_task

# Relative model paths are looked up in the working directory, then in the repository (where the
# shipped models live).
REPOSITORY = Path(workflow.basedir).parent
MODEL_SEARCH = (".", str(REPOSITORY))

try:
    _validated = validate_config(config, check_availability=False, search=MODEL_SEARCH)
except ConfigError as error:
    sys.exit(f"lengthgen: {error}")
config.clear()
config.update(_validated)
# What a model's jobs ask a cluster for, kept out of the entries every job carries in its params:
# asking for more memory or time reruns nothing.
JOB_REQUESTS = {name: {key: entry.pop(key) for key in ("mem_mb", "runtime")} for name, entry in config["models"].items()}


onstart:
    # Before the first job (never in a dry run): every registry model the grid uses can be loaded here.
    try:
        check_models(config, search=MODEL_SEARCH)
    except ConfigError as error:
        sys.exit(f"lengthgen: {error}")


RESULTS = "results"
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"
LOGS = f"{RESULTS}/logs"
BENCHMARKS = f"{RESULTS}/benchmarks"
ENV = "../envs/lengthgen.yaml"  # relative to the rule files

# The configured tasks as records, looked up once: rules pass these, never names to look up again.
TASKS = {name: get_task(name) for name in config["tasks"]}


wildcard_constraints:
    encoding="tokens|chars|finetune",
    task="|".join(TASK_NAMES),
    family="|".join(FAMILIES),
    bin=r"\d+(-\d+)?",
    seed=r"\d+",
    pe="ape|rope|nope",
    model=r"[A-Za-z0-9_.-]+",
    subject=r"[A-Za-z0-9_.-]+",
    realistic="|".join(REALISTIC_TASKS),


def task_of(wildcards):
    return get_task(wildcards.task)


def log_path(rule, pattern=""):
    """The log file of one job: its progress bars, warnings and errors (kept on a cluster too)."""
    return f"{LOGS}/{rule}/{pattern or 'all'}.log"


def benchmark_path(rule, pattern=""):
    """Run time and memory of one job, measured by Snakemake (`lengthgen runtimes` sums them)."""
    return f"{BENCHMARKS}/{rule}/{pattern or 'all'}.tsv"


def caption(name):
    return os.path.join(workflow.basedir, "report", f"{name}.rst")


# -- results tables ----------------------------------------------------------------------------
# The report's categories, in the order the report lists them (it sorts them by name): the findings
# first, the answer to "did the paper's findings reproduce here?".
CATEGORIES = {
    "findings": "0 Findings",
    "data": "1 Data and theory",
    "scratch": "2 From scratch",
    "icl": "3 In context",
    "finetune": "4 Fine-tuned",
    "comparison": "5 Comparison",
    "mechanism": "6 Mechanism",
    "realistic": "7 Realistic tasks",
}
# Every table: the rule that writes it, its stage (report category), and whether this config makes it.
TABLES_MADE = {
    "findings": ("findings", CATEGORIES["findings"], lambda: True),
    "theory": ("theory_table", CATEGORIES["data"], lambda: True),
    "data_summary": ("data_summary", CATEGORIES["data"], lambda: True),
    "theory_check": ("theory_check", CATEGORIES["data"], lambda: True),
    "scratch": ("scratch_table", CATEGORIES["scratch"], lambda: scratch_enabled()),
    "scratch_pairs": ("scratch_pairs", CATEGORIES["scratch"], lambda: scratch_enabled()),
    "icl": ("icl_table", CATEGORIES["icl"], lambda: icl_enabled()),
    "icl_pairs": ("icl_pairs", CATEGORIES["icl"], lambda: icl_enabled()),
    "finetune": ("finetune_table", CATEGORIES["finetune"], lambda: finetune_enabled()),
    "finetune_pairs": ("finetune_pairs", CATEGORIES["finetune"], lambda: finetune_enabled()),
    "finetune_places": ("finetune_places", CATEGORIES["finetune"], lambda: finetune_enabled()),
    "comparison": ("comparison_table", CATEGORIES["comparison"], lambda: comparison_enabled()),
    "heads": ("heads_table", CATEGORIES["mechanism"], lambda: mechanism_enabled()),
    "patching": ("patching_table", CATEGORIES["mechanism"], lambda: mechanism_enabled()),
    "mechanism_pairs": ("mechanism_pairs", CATEGORIES["mechanism"], lambda: mechanism_enabled()),
    "realistic": ("realistic_table", CATEGORIES["realistic"], lambda: realistic_enabled()),
    "realistic_pairs": ("realistic_pairs", CATEGORIES["realistic"], lambda: realistic_enabled()),
}


def table_outputs(name, caption_name="table"):
    """A table's parquet (with provenance), markdown, and CSV twin (in the report, with its caption:
    workflow/report/table.rst unless the table has its own)."""
    return {"parquet": f"{TABLES}/{name}.parquet", "markdown": f"{TABLES}/{name}.md",
            "csv": report(f"{TABLES}/{name}.csv", caption=caption(caption_name), category=TABLES_MADE[name][1],
                          labels={"table": name})}


def tables_made():
    """The tables this config makes, by name."""
    return [name for name, (_, _, made) in TABLES_MADE.items() if made()]


# The pairs tables the findings read, each made where its stage runs: the sources of the findings'
# records (lengthgen.results.findings.FINDINGS), never listed here.
FINDINGS_SOURCES = findings_sources()


def findings_inputs(wildcards):
    """The pairs table of every stage this config runs: a stage turned off is "not run" in the
    findings, and never a missing input."""
    made = tables_made()
    return {name: f"{TABLES}/{name}.parquet" for name in FINDINGS_SOURCES if name in made}


def findings_params():
    """What the findings depend on besides the tables: which stages run, and the hub path of each
    realistic-task model (the paper's numbers are per hub model)."""
    return {"tables": list(findings_inputs(None)), "tasks": config["tasks"],
            "models": {m: config["models"][m].get("path") for m in config["realistic"]["models"]}}


def findings_outputs():
    return list(rules.findings.output)


def table_inputs(name):
    """The files each table is made from. For the findings, the files its input function gives, never
    the function itself, whose text would change the index's params on every run."""
    if name == "findings":
        return sorted(findings_inputs(None).values())
    return sorted(map(str, getattr(rules, TABLES_MADE[name][0]).input))


def tables_index_params():
    return {name: {"rule": TABLES_MADE[name][0], "inputs": table_inputs(name)} for name in tables_made()}


# -- models ------------------------------------------------------------------------------------
CONVERTED = f"{RESULTS}/models/{{model}}"


def model_inputs(name, stage=None):
    """A registry model that lives in a local directory is an input of every job that reads it: the
    directory (`model`, the path the job loads) and every file in it (`model_files`), so rewriting
    any of them reruns exactly what depends on the model. A GGUF model's input is its conversion
    (rule gguf_convert). A hub model is identified by id and revision, which its jobs carry in their
    params. With `stage`, the name comes from a target's {model} wildcard and must be that stage's."""
    if stage is not None:
        stage_model(stage, name)
    if config["models"][name].get("gguf"):
        return {"model": CONVERTED.format(model=name)}
    entry = model_entry(name, config["models"][name], MODEL_SEARCH)
    if not entry.is_local:
        return {}
    return {"model": entry.path, "model_files": sorted(p.as_posix() for p in Path(entry.path).rglob("*") if p.is_file())}


def gguf_inputs(name):
    """The GGUF file a conversion reads, when it is a file of the user's. A file inside a package is
    identified by package, version and path (the conversion's params) instead: the installed
    package moves with its environment, its content does not. A file that cannot be found stops a
    real run here with the reason; a dry run plans the conversion without it."""
    source = GGUFSource.of(gguf_model(name))
    if source.package is not None:
        return {}
    try:
        return {"gguf": project_path(source.locate(name, MODEL_SEARCH))}
    except ModelUnavailable as error:
        if workflow.dryrun:
            return {}
        sys.exit(f"lengthgen: config key models.{name}: {error}")


def stage_model(stage, name):
    """A {model} wildcard of one stage's rules, checked: a target naming a model that stage does not
    run stops with the stage's models."""
    known(f"{stage} model", name, dict.fromkeys(config[stage]["models"]))
    return name


def gguf_model(name):
    """The GGUF source of a {model} wildcard of gguf_convert, checked like stage_model."""
    return known("GGUF model", name, {m: e["gguf"] for m, e in config["models"].items() if e.get("gguf")})


# What a job that loads a registry model asks for: its entry's GPUs, and memory (MB) and time
# (minutes) of at least these, more where the entry names more (a 70B model needs more of both).
# The workflow profile sets these rules' cores; their other resources are set here, not there.
MODEL_JOBS = {
    "gguf_convert": {"mem_mb": 8000, "runtime": 60},
    "icl_predict": {"mem_mb": 64000, "runtime": 480},
    "realistic_predict": {"mem_mb": 32000, "runtime": 480},
    "mechanism": {"mem_mb": 32000, "runtime": 480},
    "finetune_train": {"mem_mb": 32000, "runtime": 720},
    "finetune_eval": {"mem_mb": 16000, "runtime": 60},
}


def model_job(rule, name, resource):
    """One resource of a job of `rule` that loads the registry model `name` (None: a model a stage
    trained, small, on one GPU). gguf_convert dequantises on the CPU."""
    if resource == "gpu":
        return 0 if rule == "gguf_convert" else config["models"][name]["gpus"] if name else 1
    return max(MODEL_JOBS[rule][resource], (JOB_REQUESTS[name][resource] if name else None) or 0)


def model_job_resources(rule, model_of):
    """What every job that loads a model asks for (a `resources:` block); model_of(wildcards) names the model."""
    return {resource: (lambda w, resource=resource: model_job(rule, model_of(w), resource))
            for resource in ("gpu", "mem_mb", "runtime")}


# -- task data ---------------------------------------------------------------------------------
def data_path(encoding, task, length_bin, seed):
    return f"{RESULTS}/data/{encoding}/{task}/{length_bin}/seed{seed}.parquet"


def data_params(wildcards):
    """Everything one data file depends on and nothing else, so other settings never rerun it. The
    wildcards are repeated here because the between-workflow cache hashes params, not paths."""
    generator = task_of(wildcards).generator
    section = config["data"][wildcards.encoding]
    return {"task": wildcards.task, "encoding": wildcards.encoding, "bin": wildcards.bin,
            "seed": int(wildcards.seed), "examples": section["examples"], "generator": generator,
            "settings": section[generator]}


def data_files():
    """Every evaluation set the configured grid needs."""
    files = []
    scratch = scratch_bins(config["scratch"])
    for name, task in TASKS.items():
        for seed in config["seeds"]:
            if config["scratch"]["enabled"]:
                files += [data_path("tokens", name, b, seed) for b in scratch[task.family]]
            if config["icl"]["models"]:
                files += [data_path("chars", name, n, seed) for n in config["icl"]["lengths"][task.family]]
            if config["finetune"]["models"]:
                files += [data_path("finetune", name, b, seed) for b in finetune_bins(config["finetune"])[task.family]]
    return list(dict.fromkeys(files))


# -- from scratch ------------------------------------------------------------------------------
SCRATCH = f"{RESULTS}/scratch/{{task}}/{{pe}}/seed{{seed}}"
SCRATCH_CHECKPOINTS = f"{RESULTS}/checkpoints/scratch/{{task}}/{{pe}}/seed{{seed}}"


def scratch_enabled():
    return config["scratch"]["enabled"]


# Model settings that only one positional encoding reads.
PE_ONLY = {"max_positions": "ape", "rope_theta": "rope", "rope_scaling": "rope"}


def scratch_eos(task):
    return {"train": per_family(config["scratch"]["train_on_eos"], task.family),
            "score": per_family(config["scratch"]["score_eos"], task.family)}


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
        # Only learned absolute positions sized to the longest test length (max_positions null)
        # depend on it: a fixed table takes added bins without retraining (checked at start).
        "max_length": longest if wildcards.pe == "ape" and settings["model"]["max_positions"] is None else None,
        "model": {k: v for k, v in settings["model"].items() if PE_ONLY.get(k, wildcards.pe) == wildcards.pe},
        "training": training,
        "eos": scratch_eos(task),
    }


def scratch_stacks():
    """With scratch.stack, the tasks trained together, one job per positional encoding: each task
    with its mirror where both are in the grid and train with the same settings, every seed."""
    if not (config["scratch"]["enabled"] and config["scratch"]["stack"]):
        return []
    same = lambda a, b: all(scratch_train_params(SimpleNamespace(task=a, pe=pe)) ==
                            scratch_train_params(SimpleNamespace(task=b, pe=pe))
                            for pe in config["scratch"]["positional_encodings"])
    stacks, placed = [], set()
    for name in config["tasks"]:
        if name in placed:
            continue
        mirror = TASKS[name].mirror
        stack = [name, mirror] if mirror in TASKS and mirror not in placed and same(name, mirror) else [name]
        placed.update(stack)
        stacks.append(stack)
    return stacks


def profile_resources(rule):
    """A rule's resources in the workflow profile (stacked rules, named by their tasks, take
    scratch_train's: the profile stays the one place they are set)."""
    profile = yaml.safe_load((Path(workflow.basedir) / "profiles" / "default" / "config.yaml").read_text())
    return profile["set-resources"].get(rule, {}), profile["set-threads"].get(rule, 1)


def scratch_stack_members(stack, pe):
    """Every run of a stack: its task, seed, settings and where its model and checkpoints go."""
    return [{"task": task, "seed": seed, "section": scratch_train_params(SimpleNamespace(task=task, pe=pe)),
             "checkpoint_dir": SCRATCH_CHECKPOINTS.format(task=task, pe=pe, seed=seed)}
            for task in stack for seed in config["seeds"]]


def scratch_train_cost(wildcards):
    """Expected work of a training job (layers x longest training sequence x steps), as its
    scheduling priority: the longest jobs start first, so the short ones (and the evaluations
    after them) fill the cores at the end instead of one long job running alone."""
    settings, task = scratch_train_params(wildcards), task_of(wildcards)
    width = LengthBin.parse(settings["train_lengths"]).high * (2 if task.family == "copying" else 1)
    return settings["model"]["layers"] * width * settings["training"]["max_steps"] / 1e6


def scratch_eval_params(wildcards):
    task = task_of(wildcards)
    training = scratch_family_settings(config["scratch"], task.family)["training"]
    return {"greedy": config["scratch"]["greedy"], "batch_size": training["eval_batch_size"],
            "precision": training["precision"], "bins": scratch_bins(config["scratch"])[task.family],
            "eos": scratch_eos(task)}


def scratch_eval_data(wildcards):
    """The test data of every bin of the model's family."""
    bins = scratch_bins(config["scratch"])[task_of(wildcards).family]
    return [data_path("tokens", wildcards.task, b, wildcards.seed) for b in bins]


def scratch_evals():
    return expand(f"{SCRATCH}/eval.parquet", task=config["tasks"], pe=config["scratch"]["positional_encodings"],
                  seed=config["seeds"])


def scratch_eval_inputs():
    """Every data file the from-scratch models are evaluated on (the pairs table reads each example's
    input, to pair two tasks' examples only where they are the same)."""
    return [f for name in config["tasks"] for seed in config["seeds"]
            for f in scratch_eval_data(SimpleNamespace(task=name, seed=seed))]


def scratch_outputs():
    return list(rules.scratch_table.output) if scratch_enabled() else []


# -- the embedded model ------------------------------------------------------------------------
def pretrain_outputs():
    if not config["pretrain"]["enabled"]:
        return []
    return expand(rules.pretrain.output.summary, architecture=config["pretrain"]["architectures"])


# -- in context --------------------------------------------------------------------------------
ICL = f"{RESULTS}/icl/{{model}}/{{family}}.parquet"


def icl_enabled():
    return bool(config["icl"]["models"])


def icl_files(family, model):
    """(task, length bin, seed, variant, data file) of one family's in-context grid for one model."""
    section = config["icl"]
    return [{"task": name, "bin": str(length), "seed": seed, "variant": variant,
             "data": data_path("chars", name, length, seed)}
            for name, task in TASKS.items() if task.family == family
            for length in section["lengths"][family]
            for seed in config["seeds"]
            for variant in icl_variants(section, family, config["models"][model]["kind"])]


def icl_families():
    return [f for f in FAMILIES if any(t.family == f for t in TASKS.values()) and config["icl"]["lengths"][f]]


def icl_predict_params(wildcards):
    return {"model": config["models"][wildcards.model], "files": icl_files(wildcards.family, wildcards.model),
            "chat": config["icl"]["chat"] if config["models"][wildcards.model]["kind"] == "chat" else None,
            "settings": {name: config["data"]["chars"][task.generator] for name, task in TASKS.items()
                         if task.family == wildcards.family},
            "shots": config["icl"]["shots"], "batch_size": config["icl"]["batch_size"]}


def icl_predictions():
    return expand(ICL, model=config["icl"]["models"], family=icl_families())


def icl_outputs():
    return list(rules.icl_table.output) if icl_enabled() else []


# -- fine-tuning -------------------------------------------------------------------------------
FINETUNE = f"{RESULTS}/finetune/{{model}}/{{task}}/seed{{seed}}"


def finetune_enabled():
    return bool(config["finetune"]["models"])


def comparison_enabled():
    """The comparison needs all three experiments."""
    return finetune_enabled() and scratch_enabled() and icl_enabled()


def finetune_train_params(wildcards):
    """Only what this fine-tuning depends on: the model entry, its task's data settings, lengths, training."""
    return {"model": config["models"][wildcards.model], **finetune_task_section(config, wildcards.task)}


def finetune_eval_params(wildcards):
    task = task_of(wildcards)
    return {"data": config["data"]["finetune"][task.generator], "format": config["finetune"]["format"],
            "batch_size": config["finetune"]["training"]["eval_batch_size"],
            "precision": config["finetune"]["training"]["precision"],
            "bins": finetune_bins(config["finetune"])[task.family]}


def finetune_eval_data(wildcards):
    bins = finetune_bins(config["finetune"])[task_of(wildcards).family]
    return [data_path("finetune", wildcards.task, b, wildcards.seed) for b in bins]


def finetune_evals():
    return expand(f"{FINETUNE}/eval.parquet", model=config["finetune"]["models"], task=config["tasks"],
                  seed=config["seeds"])


def finetune_eval_inputs():
    """Every data file the fine-tuned models are evaluated on (for the pairs table, as from scratch)."""
    return [f for name in config["tasks"] for seed in config["seeds"]
            for f in finetune_eval_data(SimpleNamespace(task=name, seed=seed))]


def finetune_tables_params():
    """The fine-tuning tables' one config slice: bins, the stage, seeds, tasks and its models."""
    return {"bins": finetune_bins(config["finetune"]), "finetune": config["finetune"], "seeds": config["seeds"],
            "tasks": config["tasks"], "models": {m: config["models"][m] for m in config["finetune"]["models"]}}


def finetune_outputs():
    outputs = list(rules.finetune_table.output) + list(rules.finetune_places.output) if finetune_enabled() else []
    return outputs + (list(rules.comparison_table.output) if comparison_enabled() else [])


# -- mechanism ---------------------------------------------------------------------------------
MECHANISM = f"{RESULTS}/mechanism/{{subject}}"


def mechanism_subjects():
    """Every model the mechanism stage analyses, by name: ("registry", model), ("scratch", task, pe,
    seed) or ("finetune", model, task, seed); trained ones only where their stage runs."""
    section = config["mechanism"]
    subjects = {f"model-{m}": ("registry", m) for m in section["models"]}
    tasks = [t for t in section["trained"]["scratch"] if t in TASKS] if scratch_enabled() else []
    for task in tasks:
        for pe in config["scratch"]["positional_encodings"]:
            for seed in config["seeds"]:
                subjects[f"scratch-{task}-{pe}-seed{seed}"] = ("scratch", task, pe, seed)
    tasks = [t for t in section["trained"]["finetune"] if t in TASKS] if finetune_enabled() else []
    for model in config["finetune"]["models"] if tasks else []:
        for task in tasks:
            for seed in config["seeds"]:
                subjects[f"finetune-{model}-{task}-seed{seed}"] = ("finetune", model, task, seed)
    return subjects


def mechanism_subject(name):
    """One subject of the mechanism stage; a target naming another stops with the valid names."""
    return known("mechanism subject", name, mechanism_subjects())


def mechanism_enabled():
    return bool(mechanism_subjects())


def mechanism_inputs(wildcards):
    """The model the job analyses: a registry model's files, or the directory a stage trained."""
    kind, *rest = mechanism_subject(wildcards.subject)
    if kind == "registry":
        return model_inputs(rest[0])
    if kind == "scratch":
        task, pe, seed = rest
        return {"model": f"{RESULTS}/scratch/{task}/{pe}/seed{seed}/model"}
    model, task, seed = rest
    return {"model": f"{RESULTS}/finetune/{model}/{task}/seed{seed}/model"}


def mechanism_params(wildcards):
    """The analysis settings and how to spell prompts for this model: the authors' few-shot letters
    for a pretrained model, one segment in its own training spelling for a trained one."""
    section = config["mechanism"]
    kind, *rest = mechanism_subject(wildcards.subject)
    spelling = {"kind": kind}
    if kind == "registry":
        spelling["model"] = config["models"][rest[0]]
    elif kind == "scratch":
        spelling["alphabet"] = config["data"]["tokens"]["unique_copy"]["alphabet_size"]
    else:
        spelling.update(alphabet=config["data"]["finetune"]["unique_copy"]["alphabet_size"],
                        format=config["finetune"]["format"])
    settings = {k: v for k, v in section.items() if k not in ("models", "trained")}
    return {"subject": wildcards.subject, "spelling": spelling, "seeds": config["seeds"], **settings}


def mechanism_model(wildcards):
    """The registry model a mechanism job analyses (None: a model a stage trained)."""
    kind, *rest = mechanism_subject(wildcards.subject)
    return rest[0] if kind == "registry" else None


def mechanism_table_outputs():
    return list(rules.heads_table.output) + list(rules.patching_table.output) if mechanism_enabled() else []


def mechanism_outputs(name):
    return expand(f"{MECHANISM}/{name}.parquet", subject=list(mechanism_subjects()))


# -- realistic tasks ---------------------------------------------------------------------------
REALISTIC = f"{RESULTS}/realistic/{{model}}/{{realistic}}.parquet"


def realistic_enabled():
    return bool(config["realistic"]["models"])


def realistic_settings(task):
    """lorem's settings for "lorem", git's for revert and cherry-pick."""
    return config["realistic"]["lorem" if task == "lorem" else "git"]


def realistic_params(wildcards):
    """The model entry, the seeds and the task's own settings: another task's settings never rerun it."""
    return {"model": config["models"][wildcards.model], "batch_size": config["realistic"]["batch_size"],
            "seeds": config["seeds"], "settings": realistic_settings(wildcards.realistic)}


def realistic_predictions():
    return expand(REALISTIC, model=config["realistic"]["models"], realistic=REALISTIC_TASKS)


def realistic_outputs():
    return list(rules.realistic_table.output) if realistic_enabled() else []


# -- figures and the report --------------------------------------------------------------------
def report_outputs():
    """Every figure this config makes, plus the index of the tables."""
    made = tables_made()
    outputs = list(rules.tables_index.output)
    for table, figure in (("scratch", rules.figure_scratch), ("icl", rules.figure_icl),
                          ("finetune", rules.figure_finetune), ("comparison", rules.figure_comparison),
                          ("heads", rules.figure_mechanism), ("realistic", rules.figure_realistic)):
        if table in made:
            outputs += list(figure.output)
    return outputs


def known(what, value, valid):
    """valid[value]: a target whose wildcard names something this config does not make (a typo, a
    model of another stage) stops with one line naming the valid values, never a KeyError."""
    if value not in valid:
        sys.exit(f"lengthgen: no {what} {value!r} in this config; valid: {', '.join(valid) or 'none'}")
    return valid[value]
