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

workflow.localrules(*tables_plan.local_rules())  # the `localrules:` of the registry (lengthgen.plan.tables)


rule findings:
    # The report's first table: which of the paper's findings this run shows, from the pairs tables
    # of the stages it ran (see lengthgen.results.findings for how each verdict is computed).
    input:
        unpack(findings_inputs),
    output:
        **table_outputs("findings", caption_name="findings"),
    params:
        section=tables_plan.findings_params(config),
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
        section=finetune_plan.tables_params(config),
    log:
        log_path("finetune_robustness"),
    run:
        run_writer(write_finetune_robustness, log, output, input.findings,
                   input.finetune, params.section["protocols"], params.section["models"], Provenance(params.section))


rule figure_scratch:
    input:
        table=rules.scratch_table.output.parquet,
        by_length=rules.scratch_table.output.by_length,
    output:
        bins=report(f"{FIGURES}/scratch_bins.png", caption=caption("scratch_bins"),
                    category=CATEGORIES["scratch"]),
        bins_pdf=f"{FIGURES}/scratch_bins.pdf",
        by_length=report(f"{FIGURES}/scratch_by_length.png", caption=caption("scratch_by_length"),
                         category=CATEGORIES["scratch"]),
        by_length_pdf=f"{FIGURES}/scratch_by_length.pdf",
    log:
        log_path("figure_scratch"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_icl:
    input:
        table=rules.icl_table.output.parquet,
    output:
        mirror=report(f"{FIGURES}/icl_mirror_pairs.png", caption=caption("icl_mirror_pairs"),
                      category=CATEGORIES["icl"]),
        mirror_pdf=f"{FIGURES}/icl_mirror_pairs.pdf",
        teacher=report(f"{FIGURES}/icl_teacher_forced.png", caption=caption("icl_teacher_forced"),
                       category=CATEGORIES["icl"]),
        teacher_pdf=f"{FIGURES}/icl_teacher_forced.pdf",
    log:
        log_path("figure_icl"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_finetune:
    input:
        table=rules.finetune_table.output.parquet,
    output:
        bins=report(f"{FIGURES}/finetune_bins.png", caption=caption("finetune_bins"),
                    category=CATEGORIES["finetune"]),
        bins_pdf=f"{FIGURES}/finetune_bins.pdf",
    log:
        log_path("figure_finetune"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_finetune_curves:
    # Validation and beyond-training accuracy at every evaluation of every fine-tuning, per protocol.
    input:
        histories=finetune_plan.histories(config),
    output:
        curves=report(f"{FIGURES}/finetune_curves.png", caption=caption("finetune_curves"),
                      category=CATEGORIES["finetune"]),
        curves_pdf=f"{FIGURES}/finetune_curves.pdf",
    log:
        log_path("figure_finetune_curves"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_comparison:
    input:
        table=rules.comparison_table.output.parquet,
    output:
        comparison=report(f"{FIGURES}/comparison.png", caption=caption("comparison"),
                          category=CATEGORIES["comparison"]),
        comparison_pdf=f"{FIGURES}/comparison.pdf",
    log:
        log_path("figure_comparison"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_mechanism:
    input:
        heads=rules.heads_table.output.parquet,
        patching=rules.patching_table.output.parquet,
    output:
        heads=report(f"{FIGURES}/mechanism_heads.png", caption=caption("mechanism_heads"),
                     category=CATEGORIES["mechanism"]),
        heads_pdf=f"{FIGURES}/mechanism_heads.pdf",
        patching=report(f"{FIGURES}/mechanism_patching.png", caption=caption("mechanism_patching"),
                        category=CATEGORIES["mechanism"]),
        patching_pdf=f"{FIGURES}/mechanism_patching.pdf",
    log:
        log_path("figure_mechanism"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


rule figure_realistic:
    input:
        table=rules.realistic_table.output.parquet,
    output:
        realistic=report(f"{FIGURES}/realistic.png", caption=caption("realistic"),
                         category=CATEGORIES["realistic"]),
        realistic_pdf=f"{FIGURES}/realistic.pdf",
    log:
        log_path("figure_realistic"),
    conda:
        ENV
    script:
        "../scripts/figures.py"


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
