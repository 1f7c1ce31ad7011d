"""Results: parquet tables with provenance, the comparison of the three experiments, figures.

`tables` and `provenance` sit under every stage (each writes its outputs through them); the
comparison and the figures read the finished tables (workflow/rules/finetune.smk, report.smk).
"""
