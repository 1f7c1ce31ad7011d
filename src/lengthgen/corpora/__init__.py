"""The corpus experiment (beyond the paper, docs/spec.md §8): the same small model pretrained on
corpora that differ in the direction of their repeats (natural, balanced, forward-only,
backward-only, reversed; `lengthgen.pretrain.variants`), several pretraining seeds an arm, checked
for having learnt its corpus's copies (`manipulation`), then compared on what the mechanism,
in-context and fine-tuning stages measured of each, on the same prompts and examples, the
pretraining seed the unit.

Rules: `corpus_manipulation` (one per model), `corpus_pairs` (its table feeds finding 7).
"""
