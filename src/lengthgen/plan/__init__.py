"""Planning the workflow from a validated config: where each file goes, each rule's params (only its
own config slice), the inputs that come from the config, and what each stage makes.

Every function takes the config explicitly, so planning is tested without Snakemake; the rule files
call these (one module per stage) and keep only what must be Snakefile code.
"""
