# What must be Snakefile code: the config validated once, the registry models' inputs and cluster
# requests, the tables' report entries and what `snakemake` makes. Each stage's planning (paths,
# params, inputs from the config) is lengthgen.plan.<stage>, which the rule files call.
import re
import sys
from functools import reduce
from pathlib import Path

import yaml

from lengthgen.config import ConfigError, check_models, model_entry, pretrain_section, validate_config
from lengthgen.models.gguf import GGUFSource
from lengthgen.models.registry import ModelUnavailable, project_path
from lengthgen.realistic import TASKS as REALISTIC_TASKS
from lengthgen.plan import corpora as corpora_plan
from lengthgen.plan import data as data_plan
from lengthgen.plan import finetune as finetune_plan
from lengthgen.plan import icl as icl_plan
from lengthgen.plan import mechanism as mechanism_plan
from lengthgen.plan import realistic as realistic_plan
from lengthgen.plan import scratch as scratch_plan
from lengthgen.plan import tables as tables_plan
from lengthgen.plan.grid import known, stage_model
from lengthgen.plan.models import RESOURCES, model_job
from lengthgen.plan.figures import figures_made
from lengthgen.plan.tables import CATEGORIES
from lengthgen.layout import (CONVERTED, CORPUS_FINETUNE, CORPUS_ICL, CORPUS_MANIPULATION, CORPUS_MECHANISM, FIGURES, FINETUNE,
                                  FINETUNE_CHECKPOINTS, ICL,
                                  MECHANISM, PRETRAIN, PRETRAIN_CHECKPOINTS, REALISTIC, RESULTS, SCRATCH,
                                  SCRATCH_CHECKPOINTS, TABLES, benchmark_path,
                                  data_path, log_path, table_path)
from lengthgen.records.provenance import Provenance
from lengthgen.jobserver import ScriptJob, run_script
from lengthgen.runtime import run_writer
from lengthgen.pretrain.variants import CORPORA
from lengthgen.settings import CorpusStatisticsSettings
from lengthgen.tasks import FAMILIES, TASK_NAMES

# Relative model paths are looked up in the working directory, then in the repository (where the
# shipped models live).
REPOSITORY = Path(workflow.basedir).parent
MODEL_SEARCH = (".", str(REPOSITORY))

# The validated config (the schema's defaults filled in, each fine-tuning protocol resolved) is what
# every rule plans from; Snakemake's own `config`, as the user gave it, is left as it is.
try:
    _validated = validate_config(config, check_availability=False, search=MODEL_SEARCH)
except ConfigError as error:
    sys.exit(f"lengthgen: {error}")
# Every registry entry as the record planning reads, parsed once here.
MODEL_ENTRIES = {name: model_entry(name, spec, MODEL_SEARCH) for name, spec in _validated["models"].items()}
MODEL_PATHS = {name: entry.path for name, entry in MODEL_ENTRIES.items()}
# What a model's jobs ask a cluster for, kept out of the entries every job carries in its params:
# asking for more memory or time reruns nothing.
CLUSTER_REQUESTS = ("mem_mb", "runtime")
JOB_REQUESTS = {name: {key: getattr(entry, key) for key in CLUSTER_REQUESTS} for name, entry in MODEL_ENTRIES.items()}
EXPERIMENT = {**_validated, "models": {name: {key: value for key, value in spec.items() if key not in CLUSTER_REQUESTS}
                                       for name, spec in _validated["models"].items()}}


onstart:
    # Before the first job (never in a dry run): every registry model the grid uses can be loaded here.
    try:
        check_models(EXPERIMENT, search=MODEL_SEARCH)
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
    protocol=r"[A-Za-z0-9_-]+",
    subject=r"[A-Za-z0-9_.-]+",
    realistic="|".join(REALISTIC_TASKS),
    corpus="|".join(CORPORA),


def caption(name):
    return os.path.join(workflow.basedir, "report", f"{name}.rst")


def caption_params(*names):
    """The settings of this run that the captions `names` (workflow/report/NAME.rst) show, by dotted
    key, as they read them (`snakemake.params.caption["icl.models"]`): the validated config's, so a
    caption shows what ran, defaults included."""
    keys = sorted({key for name in names for key in re.findall(r'snakemake\.params\.caption\["([\w.]+)"\]',
                                                                Path(caption(name)).read_text())})
    return {key: reduce(lambda value, part: value[part], key.split("."), EXPERIMENT) for key in keys}


# -- results tables ----------------------------------------------------------------------------
def table_outputs(name, caption_name="table"):
    """A table's parquet (with provenance), markdown, HTML page (in the report under its stage, read on
    the page, with its caption: workflow/report/table.rst unless the table has its own) and CSV twin
    (in the report's downloads category)."""
    return {"parquet": table_path(name), "markdown": table_path(name, "md"),
            "html": report(table_path(name, "html"), caption=caption(caption_name), category=tables_plan.category_of(name),
                           labels={"table": name}),
            "csv": report(table_path(name, "csv"), caption=caption(caption_name), category=CATEGORIES["downloads"],
                          labels={"table": name})}


def figure_output(figure, key, path):
    """A figure's PNG in the report under its stage (its image's caption), or its PDF twin as it is."""
    if key.endswith("_pdf"):
        return path
    return report(path, caption=caption(key), category=CATEGORIES[figure.stage])


def tables_made():
    return tables_plan.tables_made(EXPERIMENT)


def findings_inputs(wildcards):
    return tables_plan.findings_inputs(EXPERIMENT)


def table_inputs(name):
    """The files each table is made from. For the findings, the files its input function gives, never
    the function itself, whose text would change the index's params on every run."""
    if name == "findings":
        return sorted(findings_inputs(None).values())
    return sorted(map(str, getattr(rules, tables_plan.rule_of(name)).input))


def tables_index_params():
    return {name: {"rule": tables_plan.rule_of(name), "inputs": table_inputs(name)} for name in tables_made()}


# -- models ------------------------------------------------------------------------------------
def model_inputs(name, stage=None):
    """A registry model that lives in a local directory is an input of every job that reads it: the
    directory (`model`, the path the job loads) and every file in it (`model_files`), so rewriting
    any of them reruns exactly what depends on the model. A GGUF model's input is its conversion
    (rule gguf_convert). A hub model is identified by id and revision, which its jobs carry in their
    params. With `stage`, the name comes from a target's {model} wildcard and must be that stage's."""
    if stage is not None:
        stage_model(EXPERIMENT, stage, name)
    if EXPERIMENT["models"][name].get("gguf"):
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
    return known("GGUF model", name, {m: e["gguf"] for m, e in EXPERIMENT["models"].items() if e.get("gguf")})


def model_job_resources(rule, model_of):
    """What every job that loads a model asks for (a `resources:` block); model_of(wildcards) names the model."""
    return {resource: (lambda w, resource=resource: model_job(EXPERIMENT, JOB_REQUESTS, rule, model_of(w), resource))
            for resource in RESOURCES}


def mechanism_inputs(wildcards):
    """The model the job analyses: a registry model's files, or the directory a stage trained."""
    trained = mechanism_plan.trained_model(EXPERIMENT, wildcards.subject)
    return {"model": trained} if trained else model_inputs(mechanism_plan.registry_model(EXPERIMENT, wildcards.subject))


SCRIPTS = Path(workflow.basedir) / "scripts"


def script_job(script, job, benchmark):
    """The body of every script rule's `run:` block (called with its `locals()`): the script runs
    in a fork of this run's warm process (lengthgen.jobserver), which writes its benchmark file."""
    job_files = {name: job[name]._plainstrings() for name in ("input", "output", "log")}
    run_script(SCRIPTS / script, ScriptJob(rule=job["rule"], params=job["params"], wildcards=job["wildcards"],
                                           threads=job["threads"], scriptdir=str(SCRIPTS),
                                           resources={"tmpdir": job["resources"].get("tmpdir")}, **job_files),
               benchmark and benchmark.format(**job["wildcards"]), job.get("conda_env"))


def profile_resources(rule):
    """A rule's resources in the workflow profile (stacked rules, named by their tasks, take
    scratch_train's: the profile stays the one place they are set)."""
    profile = yaml.safe_load((Path(workflow.basedir) / "profiles" / "default" / "config.yaml").read_text())
    return profile["set-resources"].get(rule, {}), profile["set-threads"].get(rule, 1)


# -- what `snakemake` makes --------------------------------------------------------------------
def default_outputs():
    """Every table this config makes (each stage's where it runs), the pretrained models, the figures."""
    outputs = [f for name in tables_made() for f in getattr(rules, tables_plan.rule_of(name)).output]
    if EXPERIMENT["pretrain"]["enabled"]:
        outputs += expand(rules.pretrain.output.summary, architecture=EXPERIMENT["pretrain"]["architectures"],
                          corpus=EXPERIMENT["pretrain"]["corpora"], seed=EXPERIMENT["pretrain"]["seeds"])
    return outputs + report_outputs()


# -- figures and the report --------------------------------------------------------------------
def report_outputs():
    """Every figure this config makes (the registry's, lengthgen.plan.figures), plus the index of the tables."""
    outputs = list(rules.tables_index.output)
    for figure in figures_made(EXPERIMENT, tables_made(), MODEL_PATHS):
        outputs += list(figure.outputs().values())
    return outputs
