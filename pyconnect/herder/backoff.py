"""Per-key exponential backoff: the one place the herder's retry delays are computed.

``Backoff(first, cap)`` doubles a key's delay on each failure (starting at ``first``, never above
``cap``) until :meth:`reset`. Pure; the caller adds the delay to its own clock.
"""

from __future__ import annotations

from collections.abc import Hashable


class Backoff:
    def __init__(self, first: float, cap: float) -> None:
        self.first = first
        self.cap = cap
        self._delays: dict[Hashable, float] = {}

    def failed(self, key: Hashable = None) -> float:
        """The delay before retrying ``key`` after one more failure."""
        delay = min(max(self._delays.get(key, 0.0) * 2, self.first), self.cap)
        self._delays[key] = delay
        return delay

    def reset(self, key: Hashable = None) -> None:
        """``key`` succeeded: its next failure waits ``first`` again."""
        self._delays.pop(key, None)
