"""Length bins: the grid axis over input lengths."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LengthBin:
    """A length bin: one length ("30") or an inclusive range of lengths ("51-100").

    The same name everywhere: the `bin` wildcard in paths, the `bin` column of every table.
    """

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | int) -> LengthBin:
        parts = str(text).split("-")
        try:
            low, high = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (None, None)
        except ValueError:
            low = high = None
        if low is None or low < 1 or high < low:
            raise ValueError(f"bad length {text!r}: expected N or LOW-HIGH with 1 <= LOW <= HIGH")
        return cls(low, high)

    def __str__(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


def bins_beyond(bins, train_lengths: str) -> list[str]:
    """The test bins wholly past the training lengths, nearest first (out of distribution)."""
    longest = LengthBin.parse(train_lengths).high
    return sorted((b for b in bins if LengthBin.parse(b).low > longest), key=lambda b: LengthBin.parse(b).low)
