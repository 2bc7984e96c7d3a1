"""Retries and error tolerance of one task's record processing (Java's ``RetryWithToleranceOperator``).

A pure core: no clock, no sleep, no event loop of its own. Time is passed in (milliseconds), waiting is
the caller's (the drivers take a ``sleep``), reporting goes through the ``report`` callback and the
counts through ``metrics`` (``task-error-metrics``, :mod:`pyconnect.metrics.task_errors`). One
instance belongs to one task and is used from that task's event loop only.

Contract, as Java 4.3.1 (with KAFKA-18073: a retriable error that runs out of retries is no longer
dropped silently under ``errors.tolerance=none``):

- An *operation* is one step of one record in a *stage* (``KEY_CONVERTER``, ``VALUE_CONVERTER``,
  ``HEADER_CONVERTER``, ``TRANSFORMATION``; the task also reports ``TASK_PUT`` and ``KAFKA_PRODUCE``
  failures through :meth:`RetryWithTolerance.execute_failed`). Its state is an :class:`Attempts`.
- An operation raising :class:`~pyconnect.errors.RetriableError` counts a failure and, while the clock
  is before its deadline (first failure + ``errors.retry.timeout``; ``-1`` never expires; ``0`` means no
  retry), is attempted again after a backoff: 300 ms, doubling each retry; a delay above
  ``errors.retry.delay.max.ms`` becomes a random delay below it (Java's jitter); never past the
  deadline. Each wait that ends counts a retry.
- Otherwise (any other error, or a retriable one past its deadline) the operation *gives up*: one more
  failure is counted (so a retriable error that is not retried counts two, as in Java), the time is
  kept as ``last-error-timestamp``, the error is counted and reported (log, dead-letter queue). Then
  the error fails the task with ``ConnectError("Unhandled exception in error handler")`` unless the
  stage tolerates it (the four record stages tolerate any error; other stages only retriable ones),
  and with ``ConnectError("Tolerance exceeded in error handler")`` unless ``errors.tolerance=all``
  (``none`` tolerates no failure at all); a tolerated error skips the record (``SKIPPED``, counted).
- Beyond Java: a task asked to stop while waiting to retry abandons the operation
  (:class:`RetryInterrupted`) instead of skipping the record, so the record's offset is not committed
  and the task's next owner processes it again.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from pyconnect.errors import ConnectError, RetriableError

T = TypeVar("T")

RETRIES_DELAY_MIN_MS: Final = 300
"""The first backoff (Java's ``RETRIES_DELAY_MIN_MS``)."""

KEY_CONVERTER: Final = "KEY_CONVERTER"
VALUE_CONVERTER: Final = "VALUE_CONVERTER"
HEADER_CONVERTER: Final = "HEADER_CONVERTER"
TRANSFORMATION: Final = "TRANSFORMATION"
TASK_PUT: Final = "TASK_PUT"
TASK_POLL: Final = "TASK_POLL"
KAFKA_PRODUCE: Final = "KAFKA_PRODUCE"
KAFKA_CONSUME: Final = "KAFKA_CONSUME"

TOLERABLE_STAGES: Final = frozenset({KEY_CONVERTER, VALUE_CONVERTER, HEADER_CONVERTER, TRANSFORMATION})
"""Stages where any error may be tolerated; in the others only a retriable one (Java's table)."""


class _Skipped:
    __slots__ = ()

    def __repr__(self) -> str:
        return "SKIPPED"


SKIPPED: Final = _Skipped()
"""What an operation that gave up on a tolerated error returns (an operation may return ``None``)."""


class RetryInterrupted(ConnectError):
    """The task was asked to stop while an operation waited to be retried: drop the record unprocessed."""


class ErrorCounts(Protocol):
    """What the core counts (Java's ``ErrorHandlingMetrics``); :mod:`pyconnect.metrics.task_errors`."""

    def record_failure(self) -> None: ...
    def record_error(self) -> None: ...
    def record_skipped(self) -> None: ...
    def record_retry(self) -> None: ...
    def record_error_timestamp(self, now_ms: int) -> None: ...


class _NoCounts:
    def record_failure(self) -> None:
        return None

    def record_error(self) -> None:
        return None

    def record_skipped(self) -> None:
        return None

    def record_retry(self) -> None:
        return None

    def record_error_timestamp(self, now_ms: int) -> None:
        return None


@dataclass(frozen=True, slots=True)
class ProcessingFailure:
    """A failed operation as it is reported (Java's failed ``ProcessingContext``)."""

    original: Any
    stage: str
    executing_class: str
    error: BaseException
    attempts: int


Report = Callable[[ProcessingFailure], object]


class RetryWithTolerance:
    """The policy and the failure count of one task (see the module docstring)."""

    def __init__(
        self,
        retry_timeout_ms: int = 0,
        retry_delay_max_ms: int = 60000,
        tolerate_all: bool = False,
        *,
        metrics: ErrorCounts | None = None,
        report: Report | None = None,
        random_below: Callable[[int], int] | None = None,
    ) -> None:
        self.retry_timeout_ms = int(retry_timeout_ms)
        self.retry_delay_max_ms = int(retry_delay_max_ms)
        self.tolerate_all = tolerate_all
        self.metrics: ErrorCounts = metrics if metrics is not None else _NoCounts()
        self.report = report
        self._random_below = random_below or (lambda bound: random.randrange(bound) if bound > 0 else 0)
        self.total_failures = 0

    @classmethod
    def from_config(
        cls,
        connector_config: Any,
        *,
        metrics: ErrorCounts | None = None,
        report: Report | None = None,
    ) -> RetryWithTolerance:
        """From a connector config's ``errors.*`` keys (Java's defaults when absent)."""
        return cls(
            int(connector_config.get("errors.retry.timeout") or 0),
            int(connector_config.get("errors.retry.delay.max.ms") or 60000),
            str(connector_config.get("errors.tolerance") or "none").strip().lower() == "all",
            metrics=metrics,
            report=report,
        )

    def within_tolerance(self) -> bool:
        """Java's ``withinToleranceLimits``: ``all`` always; ``none`` only before the first failure."""
        return self.tolerate_all or self.total_failures == 0

    def attempts(self, original: Any, stage: str, executing_class: str, now_ms: int) -> Attempts:
        """The state of one operation that starts (or first failed) at ``now_ms``."""
        return Attempts(self, original, stage, executing_class, now_ms)

    def execute_failed(
        self, original: Any, stage: str, executing_class: str, error: BaseException, now_ms: int
    ) -> object:
        """Java's ``executeFailed``: an operation that failed outside the core (``put`` reporting an errant
        record, a failed produce). Counts and reports it; returns what ``report`` returned; raises
        ``Tolerance exceeded in error handler`` unless ``errors.tolerance=all``."""
        self._mark_failed(now_ms)
        self.metrics.record_failure()
        reported = self._report(ProcessingFailure(original, stage, executing_class, error, 0))
        if not self.within_tolerance():
            self.metrics.record_error()
            raise ConnectError("Tolerance exceeded in error handler") from error
        return reported

    def execute(
        self,
        operation: Callable[[], T],
        original: Any,
        stage: str,
        executing_class: str,
        *,
        clock_ms: Callable[[], int],
        sleep: Callable[[int], bool],
    ) -> T | _Skipped:
        """Run ``operation`` with retries, blocking in ``sleep(ms)`` (``False``: stop requested)."""
        state = self.attempts(original, stage, executing_class, clock_ms())
        while True:
            try:
                return operation()
            except Exception as error:
                delay = state.failed(error, clock_ms())
                if delay is None:
                    return SKIPPED
            if not sleep(delay):
                raise RetryInterrupted(f"stopped while retrying {stage}") from state.last_error
            state.retried()

    async def execute_async(
        self,
        operation: Callable[[], Awaitable[T]],
        original: Any,
        stage: str,
        executing_class: str,
        *,
        clock_ms: Callable[[], int],
        sleep: Callable[[int], Awaitable[bool]],
        first_error: BaseException | None = None,
    ) -> T | _Skipped:
        """:meth:`execute` for a task loop: ``operation`` and ``sleep(ms)`` are awaited (``sleep`` returns
        ``False`` when the task is asked to stop). With ``first_error`` the operation has already been
        attempted once (by a batch fast path) and failed with it."""
        state = self.attempts(original, stage, executing_class, clock_ms())
        error = first_error
        while True:
            if error is None:
                try:
                    return await operation()
                except Exception as raised:
                    error = raised
            delay = state.failed(error, clock_ms())
            error = None
            if delay is None:
                return SKIPPED
            if not await sleep(delay):
                raise RetryInterrupted(f"stopped while retrying {stage}") from state.last_error
            state.retried()

    # -- internals shared with Attempts ----------------------------------------------------------

    def _mark_failed(self, now_ms: int) -> None:
        self.metrics.record_error_timestamp(now_ms)
        self.total_failures += 1

    def _report(self, failure: ProcessingFailure) -> object:
        return self.report(failure) if self.report is not None else None

    def _backoff_ms(self, attempt: int, deadline_ms: float, now_ms: int) -> int:
        delay = RETRIES_DELAY_MIN_MS << min(attempt - 1, 40)
        if delay > self.retry_delay_max_ms:
            delay = self._random_below(self.retry_delay_max_ms)
        if now_ms + delay > deadline_ms:
            delay = int(max(0, deadline_ms - now_ms))
        return delay


class Attempts:
    """One operation's attempts: call :meth:`failed` after each error, :meth:`retried` after each wait."""

    __slots__ = ("_core", "attempt", "deadline_ms", "executing_class", "last_error", "original", "stage")

    def __init__(
        self, core: RetryWithTolerance, original: Any, stage: str, executing_class: str, now_ms: int
    ) -> None:
        self._core = core
        self.original = original
        self.stage = stage
        self.executing_class = executing_class
        timeout = core.retry_timeout_ms
        self.deadline_ms: float = now_ms + timeout if timeout >= 0 else float("inf")
        self.attempt = 0
        self.last_error: BaseException | None = None

    def failed(self, error: BaseException, now_ms: int) -> int | None:
        """The operation raised ``error`` at ``now_ms``: the milliseconds to wait before attempting it
        again, or ``None`` when the record is skipped; raises :class:`ConnectError` (with ``error`` as
        its cause) when the error fails the task. Reports the error whenever the operation gives up."""
        core = self._core
        self.attempt += 1
        self.last_error = error
        retriable = isinstance(error, RetriableError)
        if retriable:
            core.metrics.record_failure()
            if now_ms < self.deadline_ms:
                return core._backoff_ms(self.attempt, self.deadline_ms, now_ms)
        core.metrics.record_failure()
        core._mark_failed(now_ms)
        core.metrics.record_error()
        core._report(ProcessingFailure(self.original, self.stage, self.executing_class, error, self.attempt))
        if not (retriable or self.stage in TOLERABLE_STAGES):
            raise ConnectError("Unhandled exception in error handler") from error
        if not core.within_tolerance():
            raise ConnectError("Tolerance exceeded in error handler") from error
        core.metrics.record_skipped()
        return None

    def retried(self) -> None:
        """A wait ended and the operation is attempted again (counted as a retry)."""
        self._core.metrics.record_retry()
