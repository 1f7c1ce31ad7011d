"""The corpora models the repository ships (resources/corpora/CORPUS/seedN/), in the registry's order:
the one list the registry, packaging and plan tests hold shipped_models.yaml and config.yaml to."""

SHIPPED_CORPORA = [("natural", 0), ("natural", 1), ("balanced", 0), ("balanced", 1), ("reversed", 0),
                   ("reversed", 1), ("forward-only", 0), ("forward-only", 1), ("backward-only", 0),
                   ("backward-only", 1)]
