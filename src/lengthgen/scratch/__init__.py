"""From scratch (paper Appendix B): small models trained on short inputs, tested per length bin.

Rules (workflow/rules/scratch.smk): `scratch_train` -> `train.train_scratch_model`, `scratch_eval` ->
`train.evaluate_scratch_model`, `scratch_table` -> `tables.write_scratch_tables` (no torch).
"""
