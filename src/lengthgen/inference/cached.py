"""Forced passes and greedy completions through the prediction cache: what is cached is read, the
rest comes from one forced pass per batch, and the model is loaded only when something is missing
(a 70B model takes minutes to load)."""

from __future__ import annotations

import json
from dataclasses import replace

from .cache import PredictionCache, prediction_key
from .forcing import ForcedItem, force


class CachedModel:
    """The model, loaded on first use only (never when everything is cached)."""

    def __init__(self, load):
        self.load, self.model = load, None

    def __call__(self):
        if self.model is None:
            self.model = self.load() if callable(self.load) and not hasattr(self.load, "forward") else self.load
        return self.model


def cached_values(cache: PredictionCache | None, keys: list[str]):
    """The cached value of each key (None where there is none), and the indices of those missing."""
    found = [cache.get(k) if cache is not None else None for k in keys]
    return found, [i for i, value in enumerate(found) if value is None]


def decoding_key(prompt: str, item: ForcedItem) -> str:
    """A greedy completion's cache key: the exact prompt, the budget and the stop strings."""
    return prediction_key(prompt, {"greedy": True, "max_new_tokens": item.budget, "stop": list(item.stop)})


def forced_with_cache(model: CachedModel, tokenizer, prompts: list[str], items: list[ForcedItem],
                      teacher_keys: list[str], summarise, cache: PredictionCache | None, batch_size: int,
                      progress: bool = False, decoding: list[ForcedItem] | None = None):
    """Greedy completions of `prompts` and teacher-forced summaries of `items`, from the cache where
    it has them; the rest from one forced pass per batch (`forcing.force`), which decodes
    only the rows whose completion is missing. `decoding`: where greedy decoding starts from other
    prompts than the measures read, the items it decodes (apart, their answers empty).
    summarise(index, Forced) -> what is kept of a forced reading (JSON-able). Returns (completions,
    which completions came from the cache, summaries, the new cache entries: the caller stores
    them with whatever else it made, as one shard)."""
    decoders = decoding or items
    decoding_keys = [decoding_key(p, i) for p, i in zip(prompts, decoders)]
    completions, _ = cached_values(cache, decoding_keys)
    stored, _ = cached_values(cache, teacher_keys)
    summaries = [json.loads(s) if s is not None else None for s in stored]
    from_cache = [c is not None for c in completions]
    missing = [i for i in range(len(items)) if completions[i] is None or summaries[i] is None]
    if missing:
        together = decoding is None
        asked = [replace(items[i], budget=items[i].budget if together and not from_cache[i] else 0) for i in missing]
        for i, result in zip(missing, force(model(), tokenizer, asked, batch_size, progress)):
            completions[i] = result.completion if together and not from_cache[i] else completions[i]
            summaries[i] = summaries[i] if stored[i] is not None else summarise(i, result)
        apart = [i for i in missing if not together and not from_cache[i]]
        for i, result in zip(apart, force(model(), tokenizer, [decoders[i] for i in apart], batch_size, progress)):
            completions[i] = result.completion
    new = {decoding_keys[i]: completions[i] for i in missing if not from_cache[i]}
    new.update({teacher_keys[i]: json.dumps(summaries[i]) for i in missing if stored[i] is None})
    return completions, from_cache, summaries, new
