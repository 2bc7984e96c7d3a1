"""Java's MM2 ``Scheduler``, shared by the three mirror connectors, and :class:`ScheduledConnector`, the
base of a connector whose jobs run on one.

Contract: jobs run one at a time, each bounded by ``timeout_s``; a failing or overrunning job is logged
(naming the connector) and not raised into the caller, except a cluster's refusal
(:class:`~pyconnect.errors.KafkaAccessError`: wrong credentials, a missing ACL), which only a person can
fix: ``execute`` raises it (a connector's start fails), and a repeating job that meets one hands it to
``on_fatal`` and stops repeating (without ``on_fatal`` it keeps its schedule, logged each time). Java's
Scheduler logs those too and keeps going, leaving a connector RUNNING that does nothing. ``close`` ends
every repeating job and is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from pyconnect.api.connector import SourceConnector
from pyconnect.concurrency import TaskSet
from pyconnect.errors import ConnectError, KafkaAccessError

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[None]]
FatalHandler = Callable[[KafkaAccessError], None]


class Scheduler:
    """Java's MM2 ``Scheduler``: one job at a time; failures and overruns are logged, never raised.

    Every job is bounded by ``timeout_s`` (Java lets an overrunning job continue; here it is cancelled
    so that ``stop`` is bounded). Repeating jobs run at a fixed rate. Refusals: see the module docstring.
    """

    def __init__(self, name: str, timeout_s: float, on_fatal: FatalHandler | None = None) -> None:
        self._name = name
        self._timeout_s = timeout_s
        self._on_fatal = on_fatal
        self._lock = asyncio.Lock()
        self._tasks = TaskSet(log)

    async def execute(self, job: Job, description: str) -> bool:
        """Run ``job`` now (after any running job); True when it finished without error. A refusal
        is logged and raised."""
        async with self._lock:
            started = time.monotonic()
            try:
                await asyncio.wait_for(job(), self._timeout_s)
                return True
            except KafkaAccessError as exc:
                log.error("%s caught exception %s: %s", self._name, description, exc)
                raise
            except TimeoutError:
                log.error("%s took too long (%.0f ms) %s", self._name, self._timeout_s * 1000, description)
            except ConnectError as exc:
                log.error("%s caught exception %s: %s", self._name, description, exc)
            except Exception:
                log.exception("%s caught exception %s", self._name, description)
            finally:
                elapsed = time.monotonic() - started
                log.debug("%s %s took %.0f ms", self._name, description, elapsed * 1000)
            return False

    def schedule_repeating(
        self, job: Job, interval_s: float | None, description: str, *, delayed: bool = False
    ) -> None:
        """Run ``job`` every ``interval_s`` (first run at once, or after one interval when ``delayed``).
        ``None`` (feature disabled) schedules nothing."""
        if interval_s is None or interval_s < 0:
            return
        self._tasks.spawn(
            self._repeat(job, interval_s, description, delayed), name=f"{self._name}-{description}"
        )

    async def _repeat(self, job: Job, interval_s: float, description: str, delayed: bool) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + (interval_s if delayed else 0.0)
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            try:
                await self.execute(job, description)
            except KafkaAccessError as exc:
                if self._on_fatal is not None:
                    self._on_fatal(exc)
                    return
            due = max(due + interval_s, loop.time()) if interval_s > 0 else loop.time() + 1.0

    async def close(self) -> None:
        await self._tasks.close()


class ClosableAdmin(Protocol):
    async def close(self) -> None: ...


class ScheduledConnector(SourceConnector):
    """A mirror connector that runs its jobs on a :class:`Scheduler` against admin clients of the source
    and target clusters; ``stop`` ends the scheduler (bounded) and then closes both admins. A refusal
    in ``start`` fails the start; a later one fails the connector through :meth:`_fail`."""

    _scheduler: Scheduler | None = None
    _source_admin: ClosableAdmin | None = None
    _target_admin: ClosableAdmin | None = None

    @contextlib.asynccontextmanager
    async def _stopped_unless_started(self) -> AsyncIterator[None]:
        """Around the part of ``start`` that follows creating the clients: a start that is cancelled
        (the runtime stopping the connector meanwhile) or fails stops them before re-raising."""
        try:
            yield
        except BaseException:
            await self.stop()
            raise

    def _fail(self, exc: KafkaAccessError) -> None:
        """A repeating job met a cluster's refusal: the connector fails (the runtime reports FAILED)."""
        if self.context is not None:
            self.context.raise_error(exc)

    async def stop(self) -> None:
        scheduler, self._scheduler = self._scheduler, None
        try:
            if scheduler is not None:
                await scheduler.close()
        finally:  # the admins are closed even when this stop is cancelled
            for admin in (self._source_admin, self._target_admin):
                if admin is not None:
                    with contextlib.suppress(Exception):
                        await admin.close()
            self._source_admin = self._target_admin = None
