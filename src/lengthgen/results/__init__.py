"""Results: the top of the library, reading the stages' finished tables.

The comparison of the three experiments, the findings, figures, the index of tables and the run
times (workflow/rules/finetune.smk, report.smk; `python -m lengthgen`). Nothing below imports it:
stages write through `lengthgen.records`.
"""
