"""Inference every experiment with a pretrained model shares: how text reaches a model (chat
template, symbol separator), left-padded batches, the teacher-forced pass that also starts greedy
decoding, batched greedy decoding, teacher-forced measures, and the prediction cache with the
forced pass through it (a model loaded only when something is missing).

Used by the in-context, realistic, mechanism and pretraining stages; it knows no experiment.
"""
