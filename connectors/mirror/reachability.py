"""Whether a MirrorSourceTask's source cluster answers its fetches, as the operator should hear it.

Java's consumer retries an unreachable cluster for ever while the task stays RUNNING and the REST status
says nothing. Here the task keeps retrying too, but once the source has answered no fetch of an assigned
partition for ``pyconnect.mirror.unreachable.after.ms`` (default: half the flow's target latency,
``pyconnect.mirror.target.latency.ms``, so the flow leaves IN_SYNC within its target) its status carries a trace naming
the cluster, the client and the partitions (the condition ``SOURCE_UNREACHABLE``, pyconnect.conditions), and the log says so at WARN
when it starts, every :data:`REPEAT_S` while it lasts, and at INFO when fetches are answered again (then
the trace is cleared).

Pure: :class:`Reachability` takes the time and the late partitions and answers what to report. The
task's source watch (connectors.mirror.source_watch) leaves out the partitions of topics another
condition explains (READ refused, deleted) and all of them while the source refuses the login.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

UNREACHABLE_AFTER_CONFIG = "pyconnect.mirror.unreachable.after.ms"
"""Connector config key of MirrorSourceConnector: how long the source may answer no fetch of an assigned
partition before the task's status says so."""
DEFAULT_UNREACHABLE_AFTER_MS = 30_000
MIN_UNREACHABLE_AFTER_MS = 1_000
REPEAT_S = 300.0
"""While the source stays unreachable the WARN line is repeated this often (a bounded repeat rate)."""


def unreachable_after_error(value: str | None) -> str | None:
    """Why ``value`` is not a valid :data:`UNREACHABLE_AFTER_CONFIG` (``None``: valid or absent)."""
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return (
            f"Invalid value {value} for configuration {UNREACHABLE_AFTER_CONFIG}: Not a number of type LONG"
        )
    if number < MIN_UNREACHABLE_AFTER_MS:
        return (
            f"Invalid value {number} for configuration {UNREACHABLE_AFTER_CONFIG}: "
            f"Value must be at least {MIN_UNREACHABLE_AFTER_MS}"
        )
    return None


def unreachable_after_ms(value: str | None, target_latency_ms: int | None = None) -> int:
    """The threshold a config value names; when absent, half of ``target_latency_ms`` (at least
    :data:`MIN_UNREACHABLE_AFTER_MS`, at most :data:`DEFAULT_UNREACHABLE_AFTER_MS`) so that an
    unreachable source takes the flow out of IN_SYNC within its target latency. ``ValueError`` if
    invalid."""
    error = unreachable_after_error(value)
    if error is not None:
        raise ValueError(error)
    if value is not None:
        return int(value.strip())
    if target_latency_ms is None:
        return DEFAULT_UNREACHABLE_AFTER_MS
    return max(MIN_UNREACHABLE_AFTER_MS, min(DEFAULT_UNREACHABLE_AFTER_MS, target_latency_ms // 2))


@dataclass(frozen=True)
class Report:
    """What to do now: ``problem`` is the task's new trace (``None``: clear it); ``log`` a line to log
    (``warn``: at WARN, else INFO), or ``None``."""

    problem: str | None
    log: str | None
    warn: bool


class Reachability:
    """The state of one task's source (see the module docstring). ``cluster`` names it in messages
    (:func:`pyconnect.kafka.access.cluster_label`), ``client`` is the consumer's client id."""

    def __init__(self, cluster: str, client: str, after_ms: int) -> None:
        self.cluster = cluster
        self.client = client
        self.after_ms = after_ms
        self._problem: str | None = None
        self._warned_at: float | None = None

    @property
    def problem(self) -> str | None:
        return self._problem

    def observe(self, now_s: float, late: Sequence[tuple[str, int]]) -> Report | None:
        """``late``: the assigned partitions the source has answered no fetch of for ``after_ms``.
        Returns what changed, or ``None`` when nothing is to be reported or logged."""
        if not late:
            if self._problem is None:
                return None
            self._problem, self._warned_at = None, None
            return Report(None, f"{self.cluster} answers the fetches of client '{self.client}' again", False)
        shown = ", ".join(f"{t}-{p}" for t, p in sorted(late)[:5]) + (
            f" and {len(late) - 5} more" if len(late) > 5 else ""
        )
        problem = (
            f"{self.cluster} has answered no fetch of client '{self.client}' for "
            f"{self.after_ms / 1000:g} s or more (partitions {shown}); the task keeps retrying"
        )
        changed = problem != self._problem
        self._problem = problem
        if self._warned_at is None or now_s - self._warned_at >= REPEAT_S:
            self._warned_at = now_s
            return Report(problem, f"Unreachable: {problem}", True)
        return Report(problem, None, True) if changed else None
