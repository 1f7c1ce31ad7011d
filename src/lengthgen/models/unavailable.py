"""The one error for a model that cannot be used here (missing, offline, a package not installed),
raised by the registry and by GGUF sources alike, with what to do in its message."""

from __future__ import annotations

from ..runtime import ExpectedFailure


class ModelUnavailable(ExpectedFailure, RuntimeError):
    """A registry entry that cannot be loaded here."""
