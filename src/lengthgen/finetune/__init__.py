"""Fine-tuning (paper section 4.3, docs/spec.md §4): a pretrained model trained on one task at short
lengths and tested per length bin.

Rules (workflow/rules/finetune.smk): `finetune_train` -> `train.finetune_run` and `train.finetune_model`, `finetune_eval` ->
`train.evaluate_finetuned`, `finetune_table` -> `tables.write_finetune_table` (no torch).
"""
