"""In context (paper section 4.1): few-shot prompts, batched greedy predictions through a
prediction cache, and the in-context table.

Rules: `icl_predict`, `icl_table` (workflow/rules/icl.smk).
"""
