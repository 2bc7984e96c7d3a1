"""The arithmetic of a shaped network link, free of IO: a one-way delay that keeps order, and a token
bucket for a rate limit. :mod:`pyconnect.testing.fault_proxy` drives both with its event loop's clock;
tests drive them with numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

# A throttled chunk is written in pieces of about 1/20 s of the rate (between these bounds), so a slow
# link delivers a steady trickle rather than one large write after a long pause.
MIN_PIECE = 512
MAX_PIECE = 64 * 1024


def release_at(arrival: float, delay: float, previous_release: float) -> float:
    """When a chunk that arrived at ``arrival`` leaves a link of one-way ``delay`` seconds, given that the
    chunk before it (same direction, same connection) left at ``previous_release``.

    Chunks leave ``delay`` after they arrive, never before the chunk ahead of them (a link keeps order,
    also when the delay was just lowered). ``delay`` must not be negative.
    """
    if delay < 0:
        raise ValueError(f"delay must be >= 0, got {delay}")
    return max(arrival + delay, previous_release)


def piece_size(rate: float | None) -> int:
    """How many bytes a throttled write sends at once (the whole chunk, up to MAX_PIECE, when unthrottled)."""
    if rate is None:
        return MAX_PIECE
    return int(min(MAX_PIECE, max(MIN_PIECE, rate / 20)))


def pieces(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into consecutive pieces of at most ``size`` bytes (none empty)."""
    if size <= 0:
        raise ValueError(f"piece size must be > 0, got {size}")
    return [data[i : i + size] for i in range(0, len(data), size)]


@dataclass
class TokenBucket:
    """A rate limit of ``rate`` bytes per second with bursts of at most ``burst`` bytes.

    ``reserve(n, now)`` debits ``n`` bytes at once and answers how long the caller must wait before
    sending them; the balance may go negative (a debt later reservations queue behind), so reservations
    are served in the order made and the long-run rate never exceeds ``rate`` whatever the sizes.
    Not thread-safe: one event loop owns it. ``now`` is any monotonic clock in seconds.
    """

    rate: float
    burst: float
    tokens: float
    updated: float

    @classmethod
    def full(cls, rate: float, now: float, burst: float | None = None) -> TokenBucket:
        """A bucket that starts full; ``burst`` defaults to 1/20 s of the rate (at least one piece)."""
        if rate <= 0:
            raise ValueError(f"rate must be > 0 bytes per second, got {rate}")
        size = burst if burst is not None else max(float(piece_size(rate)), rate / 20)
        if size <= 0:
            raise ValueError(f"burst must be > 0 bytes, got {size}")
        return cls(rate=float(rate), burst=float(size), tokens=float(size), updated=now)

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def reserve(self, size: int, now: float) -> float:
        """Debit ``size`` bytes; the seconds to wait (0 when the bucket held them) before sending."""
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        self.refill(now)
        self.tokens -= size
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate
