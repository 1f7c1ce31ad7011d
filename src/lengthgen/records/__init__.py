"""Records: what every stage writes and reads, under every stage.

`provenance` (what made a result), `tables` (parquet with provenance, written atomically, and its
markdown and CSV twins), `files` (reading parquet, safetensors and JSON: a damaged file is named
with the target that remakes it). Reporting (`lengthgen.results`) sits on top of the stages.
"""
