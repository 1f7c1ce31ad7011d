# Figures from the result tables, a CSV twin of every table for the HTML report, and an index of
# the tables. `snakemake --report results/report.html` (or `make report`) collects them, grouped by
# stage, with captions written from the config and wildcards (workflow/report/*.rst).

FIGURES = f"{RESULTS}/figures"


def caption(name):
    return os.path.join(workflow.basedir, "workflow", "report", f"{name}.rst")


rule figure_scratch:
    input:
        table=rules.scratch_table.output.parquet,
        by_length=rules.scratch_table.output.by_length,
    output:
        bins=report(f"{FIGURES}/scratch_bins.png", caption=caption("scratch_bins"), category="1 From scratch"),
        bins_pdf=f"{FIGURES}/scratch_bins.pdf",
        by_length=report(f"{FIGURES}/scratch_by_length.png", caption=caption("scratch_by_length"),
                         category="1 From scratch"),
        by_length_pdf=f"{FIGURES}/scratch_by_length.pdf",
    script:
        "../scripts/figures.py"


rule figure_icl:
    input:
        table=rules.icl_table.output.parquet,
    output:
        mirror=report(f"{FIGURES}/icl_mirror_pairs.png", caption=caption("icl_mirror_pairs"), category="2 In context"),
        mirror_pdf=f"{FIGURES}/icl_mirror_pairs.pdf",
    script:
        "../scripts/figures.py"


rule figure_finetune:
    input:
        table=rules.finetune_table.output.parquet,
    output:
        bins=report(f"{FIGURES}/finetune_bins.png", caption=caption("finetune_bins"), category="3 Fine-tuned"),
        bins_pdf=f"{FIGURES}/finetune_bins.pdf",
    script:
        "../scripts/figures.py"


rule figure_comparison:
    input:
        table=rules.comparison_table.output.parquet,
    output:
        comparison=report(f"{FIGURES}/comparison.png", caption=caption("comparison"), category="4 Comparison"),
        comparison_pdf=f"{FIGURES}/comparison.pdf",
    script:
        "../scripts/figures.py"


# Every table: the rule that writes it, its stage (report category), and whether this config makes it.
TABLES_MADE = {
    "theory": ("theory_table", "0 Data and theory", lambda: True),
    "data_summary": ("data_summary", "0 Data and theory", lambda: True),
    "scratch": ("scratch_table", "1 From scratch", scratch_enabled),
    "icl": ("icl_table", "2 In context", icl_enabled),
    "finetune": ("finetune_table", "3 Fine-tuned", finetune_enabled),
    "comparison": ("comparison_table", "4 Comparison", comparison_enabled),
}


rule table_csv:
    input:
        f"{TABLES}/{{table}}.parquet",
    output:
        report(f"{TABLES}/{{table}}.csv", caption=caption("table"), category=lambda w: TABLES_MADE[w.table][1],
               labels=lambda w: {"table": w.table}),
    wildcard_constraints:
        table="|".join(TABLES_MADE),
    run:
        import polars as pl

        from lengthgen.results.tables import write_text

        frame = pl.read_parquet(input[0])
        write_text(output[0], frame.select([c for c in frame.columns if frame[c].dtype != pl.Null]).write_csv())


def tables_made():
    """The tables this config makes, by name."""
    return [name for name, (_, _, made) in TABLES_MADE.items() if made()]


rule tables_index:
    input:
        tables=lambda w: [f"{TABLES}/{t}.parquet" for t in tables_made()],
    output:
        parquet=f"{TABLES}/index.parquet",
        markdown=report(f"{TABLES}/index.md", caption=caption("index"), category="0 Data and theory"),
    params:
        section=lambda w: {t: {"rule": TABLES_MADE[t][0],
                               "inputs": sorted(map(str, getattr(rules, TABLES_MADE[t][0]).input))}
                           for t in tables_made()},
    script:
        "../scripts/tables_index.py"


def report_outputs():
    """Every figure and table CSV this config makes, plus the index."""
    made = tables_made()
    outputs = [f"{TABLES}/{t}.csv" for t in made] + list(rules.tables_index.output)
    if "scratch" in made:
        outputs += list(rules.figure_scratch.output)
    if "icl" in made:
        outputs += list(rules.figure_icl.output)
    if "finetune" in made:
        outputs += list(rules.figure_finetune.output)
    if "comparison" in made:
        outputs += list(rules.figure_comparison.output)
    return outputs
