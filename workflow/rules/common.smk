# What must be Snakefile code: the config validated once, the registry models' inputs and cluster
# requests, the tables' report entries and what `snakemake` makes. Each stage's planning (paths,
# params, inputs from the config) is lengthgen.plan.<stage>, which the rule files call.
import sys
from pathlib import Path

import yaml

from lengthgen.config import ConfigError, check_models, model_entry, pretrain_section, validate_config
from lengthgen.models.gguf import GGUFSource
from lengthgen.models.registry import ModelUnavailable, project_path
from lengthgen.realistic import TASKS as REALISTIC_TASKS
from lengthgen.plan import data as data_plan
from lengthgen.plan import finetune as finetune_plan
from lengthgen.plan import icl as icl_plan
from lengthgen.plan import mechanism as mechanism_plan
from lengthgen.plan import realistic as realistic_plan
from lengthgen.plan import scratch as scratch_plan
from lengthgen.plan.grid import known, stage_model
from lengthgen.plan.paths import (BENCHMARKS, CONVERTED, FIGURES, FINETUNE, ICL, LOGS, MECHANISM, REALISTIC, RESULTS,
                                  SCRATCH, SCRATCH_CHECKPOINTS, TABLES, benchmark_path, data_path, log_path)
from lengthgen.results.findings import findings_sources
from lengthgen.runtime import run_writer
from lengthgen.tasks import FAMILIES, TASK_NAMES

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
# Every registry entry as the record planning reads, parsed once here.
MODEL_ENTRIES = {name: model_entry(name, spec, MODEL_SEARCH) for name, spec in config["models"].items()}
# What a model's jobs ask a cluster for, kept out of the entries every job carries in its params:
# asking for more memory or time reruns nothing.
CLUSTER_REQUESTS = ("mem_mb", "runtime")
JOB_REQUESTS = {name: {key: getattr(entry, key) for key in CLUSTER_REQUESTS} for name, entry in MODEL_ENTRIES.items()}
config["models"] = {name: {key: value for key, value in spec.items() if key not in CLUSTER_REQUESTS}
                    for name, spec in config["models"].items()}


onstart:
    # Before the first job (never in a dry run): every registry model the grid uses can be loaded here.
    try:
        check_models(config, search=MODEL_SEARCH)
    except ConfigError as error:
        sys.exit(f"lengthgen: {error}")


ENV = "../envs/lengthgen.yaml"  # relative to the rule files

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
    "scratch": ("scratch_table", CATEGORIES["scratch"], lambda: scratch_plan.enabled(config)),
    "scratch_pairs": ("scratch_pairs", CATEGORIES["scratch"], lambda: scratch_plan.enabled(config)),
    "icl": ("icl_table", CATEGORIES["icl"], lambda: icl_plan.enabled(config)),
    "icl_pairs": ("icl_pairs", CATEGORIES["icl"], lambda: icl_plan.enabled(config)),
    "finetune": ("finetune_table", CATEGORIES["finetune"], lambda: finetune_plan.enabled(config)),
    "finetune_pairs": ("finetune_pairs", CATEGORIES["finetune"], lambda: finetune_plan.enabled(config)),
    "finetune_places": ("finetune_places", CATEGORIES["finetune"], lambda: finetune_plan.enabled(config)),
    "comparison": ("comparison_table", CATEGORIES["comparison"], lambda: finetune_plan.comparison_enabled(config)),
    "heads": ("heads_table", CATEGORIES["mechanism"], lambda: mechanism_plan.enabled(config)),
    "patching": ("patching_table", CATEGORIES["mechanism"], lambda: mechanism_plan.enabled(config)),
    "mechanism_pairs": ("mechanism_pairs", CATEGORIES["mechanism"], lambda: mechanism_plan.enabled(config)),
    "realistic": ("realistic_table", CATEGORIES["realistic"], lambda: realistic_plan.enabled(config)),
    "realistic_pairs": ("realistic_pairs", CATEGORIES["realistic"], lambda: realistic_plan.enabled(config)),
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
def model_inputs(name, stage=None):
    """A registry model that lives in a local directory is an input of every job that reads it: the
    directory (`model`, the path the job loads) and every file in it (`model_files`), so rewriting
    any of them reruns exactly what depends on the model. A GGUF model's input is its conversion
    (rule gguf_convert). A hub model is identified by id and revision, which its jobs carry in their
    params. With `stage`, the name comes from a target's {model} wildcard and must be that stage's."""
    if stage is not None:
        stage_model(config, stage, name)
    if config["models"][name].get("gguf"):
        return {"model": CONVERTED.format(model=name)}
    entry = MODEL_ENTRIES[name]
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


# -- what `snakemake` makes --------------------------------------------------------------------
def default_outputs():
    """Every table this config makes (each stage's where it runs), the pretrained models, the figures."""
    outputs = [f for name in tables_made() for f in getattr(rules, TABLES_MADE[name][0]).output]
    if config["pretrain"]["enabled"]:
        outputs += expand(rules.pretrain.output.summary, architecture=config["pretrain"]["architectures"])
    return outputs + report_outputs()


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
