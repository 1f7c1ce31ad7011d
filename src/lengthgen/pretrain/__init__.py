"""The embedded pretrained model: a character-level LM trained on text that ships with Python.

Rule: `pretrain` (workflow/rules/pretrain.smk, run by `make embedded`).
"""
