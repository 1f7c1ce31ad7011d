# Figures from the result tables and an index of the tables. `snakemake --report results/report.html`
# (or `make report`) collects them with each table's CSV twin, grouped by stage, with captions
# written from the config and wildcards (workflow/report/*.rst). Tables, figures and the index run
# on the submitting machine (localrules): seconds of work each, never worth a cluster job. The
# table rules are `run:` blocks inside Snakemake itself (polars, no torch: no process start-up).

# The writers of this file's `run:` rules, imported when the workflow is parsed (a missing one
# stops the parse, not a job).
from lengthgen.finetune.robustness import write_finetune_robustness
from lengthgen.results.findings_markdown import write_findings
from lengthgen.results.index import write_tables_index
from lengthgen.plan.figures import FIGURE_LIST

workflow.localrules(*tables_plan.local_rules())  # the `localrules:` of the registry (lengthgen.plan.tables)


rule findings:
    # The report's first table: which of the paper's findings this run shows, from the pairs tables
    # of the stages it ran (see lengthgen.results.findings for how each verdict is computed).
    input:
        unpack(findings_inputs),
    output:
        **table_outputs("findings", caption_name="findings"),
    params:
        section=tables_plan.findings_params(EXPERIMENT),
    log:
        log_path("findings"),
    run:
        run_writer(write_findings, log, output,
                   {name: getattr(input, name) for name in params.section["tables"]}, params.section["models"],
                   Provenance(params.section), params.section["rules"])


rule finetune_robustness:
    # Finding 3 under each fine-tuning protocol: the findings' per-protocol verdicts side by side.
    input:
        findings=rules.findings.output.parquet,
        finetune=rules.finetune_table.output.parquet,
    output:
        **table_outputs("finetune_robustness"),
    params:
        section=finetune_plan.tables_params(EXPERIMENT),
    log:
        log_path("finetune_robustness"),
    run:
        run_writer(write_finetune_robustness, log, output, input.findings,
                   input.finetune, params.section["protocols"], params.section["models"], Provenance(params.section))


# Every figure rule, generated from its record (lengthgen.plan.figures): its inputs, its images (a
# PNG in the report under its stage with workflow/report/IMAGE.rst as caption, and a PDF twin) and
# any params; lengthgen.results.figures.DRAWINGS draws it.
for _figure in FIGURE_LIST:

    rule:
        name:
            _figure.rule
        input:
            unpack(lambda w, figure=_figure: figure.inputs(EXPERIMENT, MODEL_PATHS)),
        output:
            **{key: figure_output(_figure, key, path) for key, path in _figure.outputs().items()},
        params:
            **{key: (lambda w, value=value: value(EXPERIMENT, MODEL_PATHS)) for key, value in _figure.params.items()},
            caption=caption_params(*_figure.images),
        log:
            log_path(_figure.rule),
        conda:
            ENV
        run:
            script_job("figures.py", locals(), None)


rule tables_index:
    input:
        tables=lambda w: [table_path(t) for t in tables_made()],
    output:
        parquet=f"{TABLES}/index.parquet",
        markdown=report(f"{TABLES}/index.md", caption=caption("index"), category=CATEGORIES["data"]),
    params:
        section=lambda w: tables_index_params(),
    log:
        log_path("tables_index"),
    run:
        run_writer(write_tables_index, log, output, params.section, input.tables)
