"""Java's MM2 ``Scheduler``, shared by the three mirror connectors, and :class:`ScheduledConnector`, the
base of a connector whose jobs run on one.

Contract: jobs run one at a time, each bounded by ``timeout_s``; a failing or overrunning job is logged
(naming the connector) and not raised into the caller, except a cluster's refusal
(:class:`~pyconnect.errors.KafkaAccessError`: wrong credentials, a missing ACL), which only a person can
fix: ``execute`` raises it, and a repeating job that meets one hands it to ``on_refused`` and is tried
again after at most :data:`REFUSED_RETRY_S` (its own interval when shorter); its next success calls
``on_accepted``. ``close`` ends every repeating job and is idempotent.

:class:`ScheduledConnector` turns refusals into conditions of the connector (pyconnect.conditions, on
its ``context.conditions``) instead of failing it: ``SOURCE_AUTH_FAILED`` / ``TARGET_AUTH_FAILED`` for a
refused login, ``ACL_DENIED`` for a missing ACL (subject: the job), each naming the cluster, and keeps
RUNNING. A start step that is refused is retried in the background with backoff; the steps after it
and the repeating jobs begin once it passes, and the connector then asks for new task configs. Java's
Scheduler logs refusals and keeps going too, leaving a connector RUNNING that does nothing and says
nothing; here the connector says why with a stable code, and its flow is not IN_SYNC meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from pyconnect.api.connector import SourceConnector
from pyconnect.concurrency import TaskSet
from pyconnect.errors import AuthenticationError, ConnectError, KafkaAccessError

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[None]]
RefusedHandler = Callable[[KafkaAccessError, str], None]
AcceptedHandler = Callable[[str], None]

REFUSED_RETRY_S = 10.0
"""A refused job is tried again after at most this long."""
START_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 10.0)
"""Pauses between tries of a refused start step (the last one repeats)."""


class Scheduler:
    """Java's MM2 ``Scheduler``: one job at a time; failures and overruns are logged, never raised.

    Every job is bounded by ``timeout_s`` (Java lets an overrunning job continue; here it is cancelled
    so that ``stop`` is bounded). Repeating jobs run at a fixed rate. Refusals: see the module docstring.
    """

    def __init__(
        self,
        name: str,
        timeout_s: float,
        on_refused: RefusedHandler | None = None,
        on_accepted: AcceptedHandler | None = None,
    ) -> None:
        self._name = name
        self._timeout_s = timeout_s
        self._on_refused = on_refused
        self._on_accepted = on_accepted
        self._refusals_said: dict[str, str] = {}
        self._lock = asyncio.Lock()
        self._tasks = TaskSet(log)

    async def execute(self, job: Job, description: str) -> bool:
        """Run ``job`` now (after any running job); True when it finished without error. A refusal
        is logged and raised."""
        async with self._lock:
            started = time.monotonic()
            try:
                await asyncio.wait_for(job(), self._timeout_s)
                self._refusals_said.pop(description, None)
                return True
            except KafkaAccessError as exc:
                said = self._refusals_said.get(description)
                self._refusals_said[description] = str(exc)
                level = logging.DEBUG if said == str(exc) else logging.ERROR  # a refusal once, not each try
                log.log(level, "%s caught exception %s: %s", self._name, description, exc)
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
                done = await self.execute(job, description)
            except KafkaAccessError as exc:
                if self._on_refused is not None:
                    self._on_refused(exc, description)
                due = loop.time() + min(REFUSED_RETRY_S, interval_s if interval_s > 0 else 1.0)
                continue
            finally:
                _honour_cancellation()
            if done and self._on_accepted is not None:
                self._on_accepted(description)
            due = max(due + interval_s, loop.time()) if interval_s > 0 else loop.time() + 1.0

    def spawn(self, work: Coroutine[Any, Any, None], description: str) -> None:
        """Run ``work`` in the background, ended by :meth:`close`."""
        self._tasks.spawn(work, name=f"{self._name}-{description}")

    async def close(self) -> None:
        await self._tasks.close()


def _honour_cancellation() -> None:
    """Raise ``CancelledError`` when the current task was asked to stop: ``asyncio.wait_for`` on 3.11
    can return a job's result although the task was cancelled as the job finished, and a loop of
    jobs must not outlive its ``close``."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


SOURCE_AUTH_FAILED, TARGET_AUTH_FAILED, ACL_DENIED = "SOURCE_AUTH_FAILED", "TARGET_AUTH_FAILED", "ACL_DENIED"


def refusal_code(exc: KafkaAccessError) -> tuple[str, str | None]:
    """(condition code, ``source``/``target``/``None``) of a refusal; the side is read from the cluster
    the message names (pyconnect.kafka.access names it ``source cluster S (...)``)."""
    text = str(exc)
    side = "source" if "source cluster" in text else "target" if "target cluster" in text else None
    if isinstance(exc, AuthenticationError):
        return (TARGET_AUTH_FAILED if side == "target" else SOURCE_AUTH_FAILED), side
    return ACL_DENIED, side


class ClosableAdmin(Protocol):
    async def close(self) -> None: ...


class ScheduledConnector(SourceConnector):
    """A mirror connector that runs its jobs on a :class:`Scheduler` against admin clients of the source
    and target clusters; ``stop`` ends the scheduler (bounded) and then closes both admins. Refusals
    are conditions of the connector, retried (see the module docstring): build the scheduler with
    :meth:`_scheduler_for` and run the start's steps with :meth:`_start_steps`."""

    _scheduler: Scheduler | None = None
    _source_admin: ClosableAdmin | None = None
    _target_admin: ClosableAdmin | None = None
    _name: str = "connector"
    _refusals: dict[str, tuple[str, str]]
    """job description -> (code, subject) of the condition its refusal raised"""

    def _aliases(self) -> tuple[str | None, str | None]:
        """(source alias, target alias) for the conditions' ``cluster``."""
        config = getattr(self, "_config", None)
        return getattr(config, "source_cluster_alias", None), getattr(config, "target_cluster_alias", None)

    def _scheduler_for(self, name: str, timeout_s: float) -> Scheduler:
        self._refusals = {}
        return Scheduler(name, timeout_s, self._refused, self._accepted)

    def _refused(self, exc: KafkaAccessError, description: str) -> None:
        """A job met a refusal: raise its condition (kept while it lasts: one board entry per job)."""
        code, side = refusal_code(exc)
        source, target = self._aliases()
        subject = description if code == ACL_DENIED else ""
        self._refusals = getattr(self, "_refusals", {})
        self._refusals[description] = (code, subject)
        board = getattr(self.context, "conditions", None) if self.context is not None else None
        if board is not None:
            board.set(
                code,
                f"{description}: {exc}; retried every {REFUSED_RETRY_S:g} s at most",
                subject=subject,
                cluster=source if side == "source" else target if side == "target" else None,
            )

    def _accepted(self, description: str) -> None:
        """A job passed: the condition its last refusal raised goes (unless another job holds it)."""
        refusals = getattr(self, "_refusals", {})
        found = refusals.pop(description, None)
        if found is None:
            return
        board = getattr(self.context, "conditions", None) if self.context is not None else None
        if board is not None and found not in refusals.values():
            board.clear(*found)
            log.info("%s: %s passes again", self._name, description)

    async def _start_steps(
        self, scheduler: Scheduler, steps: Sequence[tuple[Job, str]], then: Callable[[], None]
    ) -> None:
        """Run the start's ``steps`` in order, then ``then()`` (scheduling the repeating jobs). A refused
        step raises its condition and the rest continue in the background (:meth:`_retry_steps`):
        ``start`` returns, the connector RUNNING without its tasks until the steps pass."""
        for index, (job, description) in enumerate(steps):
            try:
                await scheduler.execute(job, description)
            except KafkaAccessError as exc:
                self._refused(exc, description)
                scheduler.spawn(self._retry_steps(scheduler, steps[index:], then), "retrying start")
                return
        then()

    async def _retry_steps(
        self, scheduler: Scheduler, steps: Sequence[tuple[Job, str]], then: Callable[[], None]
    ) -> None:
        pauses = iter(START_BACKOFF_S)
        pause = START_BACKOFF_S[0]
        for job, description in steps:
            while True:
                pause = next(pauses, pause)
                await asyncio.sleep(pause)
                try:
                    await scheduler.execute(job, description)
                except KafkaAccessError as exc:
                    self._refused(exc, description)
                    continue
                finally:
                    _honour_cancellation()
                self._accepted(description)
                break
        log.info("%s: started after its refused steps passed", self._name)
        then()
        if self.context is not None:
            self.context.request_task_reconfiguration()

    @contextlib.asynccontextmanager
    async def _stopped_unless_started(self) -> AsyncIterator[None]:
        """Around the part of ``start`` that follows creating the clients: a start that is cancelled
        (the runtime stopping the connector meanwhile) or fails stops them before re-raising."""
        try:
            yield
        except BaseException:
            await self.stop()
            raise

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
