"""The engine every experiment shares: training runs (alone, interleaved or stacked), token
sequences and batches, exact-match scoring and batched greedy decoding."""
