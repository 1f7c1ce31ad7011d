"""The corpus experiment (beyond the paper, docs/spec.md §8): the same small model pretrained on corpora that
differ in the direction of their repeats (natural, balanced, reversed; `lengthgen.pretrain.variants`),
compared on what the mechanism, in-context and fine-tuning stages measured of each, on the same
prompts and examples.

Rule: `corpus_pairs` (its table feeds finding 7).
"""
