"""Structured concurrency helpers: every background coroutine has an owner that ends it.

- :func:`cancel_and_wait` is the one way to end tasks a component started: cancel them, wait until
  each has finished, absorb their own ``CancelledError`` and never the caller's.
- :class:`TaskSet` is the owned set of a component whose background tasks come and go (fire-and-forget
  sends, scheduled jobs): it keeps a strong reference to each task, logs a task that failed, and ends
  the ones still running on :meth:`TaskSet.close`.
- :func:`stop_in_order` runs a composition root's shutdown steps in its one written order: each step
  runs even when an earlier one failed or the caller was cancelled.
- :func:`together` awaits several awaitables concurrently. When one raises, the others are cancelled
  and awaited, and that first exception is re-raised as itself (not wrapped in an ``ExceptionGroup``),
  so callers keep catching ``ConfigError``/``ConnectError`` exactly as with sequential awaits.

A component whose background work lives exactly as long as one ``async with`` uses
:class:`asyncio.TaskGroup`; these helpers serve components with ``start()``/``stop()`` lifetimes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

_log = logging.getLogger(__name__)

T = TypeVar("T")


async def cancel_and_wait(
    *tasks: asyncio.Future[Any] | None, log: logging.Logger | None = _log
) -> list[BaseException]:
    """Cancel ``tasks`` and wait until every one has finished.

    Contract:
    - ``None`` entries, duplicates and tasks already done are accepted; the calling task itself, if
      listed, is neither cancelled nor awaited (a component stopping itself from its own task).
    - A child's own ``CancelledError`` is absorbed. The caller's is not: when the calling task is
      cancelled while waiting, the children (already cancelled once, and not interrupted again in
      their clean-up, such as closing a client) are still awaited so that none is left running, then
      the caller's ``CancelledError`` is raised.
    - A child that ended with another exception (before or after the cancel) does not raise here: each
      such exception is logged at ERROR with its traceback on ``log`` (pass the component's logger so
      the line names it; ``None`` when the caller reports them itself) and returned, in ``tasks``
      order, so a caller may re-raise one.
    """
    current = asyncio.current_task()
    children = [t for t in dict.fromkeys(tasks) if t is not None and t is not current]
    for child in children:
        child.cancel()
    caller_cancelled: asyncio.CancelledError | None = None
    pending = {child for child in children if not child.done()}
    while pending:
        try:
            _, pending = await asyncio.wait(pending)
        except asyncio.CancelledError as exc:
            caller_cancelled = caller_cancelled or exc
    errors: list[BaseException] = []
    for child in children:
        if child.cancelled():
            continue
        error = child.exception()
        if error is None:
            continue
        errors.append(error)
        if log is not None:
            log.error("%s failed: %s", _describe(child), error, exc_info=error)
    if caller_cancelled is not None:
        raise caller_cancelled
    return errors


def _describe(task: asyncio.Future[Any]) -> str:
    return task.get_name() if isinstance(task, asyncio.Task) else repr(task)


class TaskSet:
    """The background tasks one component owns.

    Contract: :meth:`spawn` starts a task and keeps it until it finishes; a task that fails is logged
    at ERROR on ``log`` when it finishes (its exception is retrieved, never left to the loop's
    "exception was never retrieved"). :meth:`close` ends every task still running with
    :func:`cancel_and_wait` (tasks spawned meanwhile included), optionally after a grace period; it
    is idempotent and the set can be used again afterwards. Called from the event loop's thread only.
    """

    def __init__(self, log: logging.Logger = _log) -> None:
        self._log = log
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log.error("%s failed: %s", task.get_name(), task.exception(), exc_info=task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    def running(self) -> set[asyncio.Task[Any]]:
        """A snapshot of the tasks not finished yet (for ``asyncio.wait``)."""
        return set(self._tasks)

    async def close(self, grace_s: float = 0.0) -> None:
        """Give running tasks up to ``grace_s`` seconds to finish on their own, then cancel and wait."""
        if grace_s > 0 and self._tasks:
            await asyncio.wait(self.running(), timeout=grace_s)
        while self._tasks:
            await cancel_and_wait(*self._tasks, log=None)
            # a task that just ended may not have run its done callback yet: never spin on it
            self._tasks.difference_update([task for task in self._tasks if task.done()])


class Stoppable(Protocol):
    async def stop(self) -> None: ...


async def stop_in_order(
    *steps: tuple[str, Stoppable | Callable[[], Awaitable[Any]] | None], log: logging.Logger | None = _log
) -> list[Exception]:
    """Run each ``(what, part)`` step in the given order (a composition root's shutdown order): await
    ``part.stop()``, or ``part()`` for a function.

    Contract: every step runs, whatever the previous ones did (``None`` parts are skipped). A step
    that raises is logged at WARNING on ``log`` ("Stopping <what> failed", unless ``log`` is None) and
    its exception returned, in order. When the caller is cancelled during a step, that step ends as
    the cancellation makes it end, the remaining steps still run to completion (so no client is left
    open), then the caller's ``CancelledError`` is raised.
    """
    failures: list[Exception] = []
    caller_cancelled: asyncio.CancelledError | None = None
    current = asyncio.current_task()
    for what, part in steps:
        if part is None:
            continue
        try:
            await (part.stop() if hasattr(part, "stop") else part())
        except asyncio.CancelledError as exc:
            if current is not None and current.cancelling():
                caller_cancelled = caller_cancelled or exc
            elif log is not None:  # the step's own stray cancellation, not the caller's
                log.warning("Stopping %s was cancelled", what)
        except Exception as exc:
            failures.append(exc)
            if log is not None:
                log.warning("Stopping %s failed: %s", what, exc)
    if caller_cancelled is not None:
        raise caller_cancelled
    return failures


async def together(*steps: Awaitable[Any]) -> list[Any]:
    """Await ``steps`` concurrently; their results in the given order, or the first failure raised
    after every other step was cancelled and has finished (a later failure of another step is
    logged). Cancelling the caller cancels every step and waits for them."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:
        await cancel_and_wait(*tasks)
        raise
    failures = [t.exception() for t in tasks if t in done and not t.cancelled() and t.exception() is not None]
    if failures:
        await cancel_and_wait(*pending)
        for other in failures[1:]:
            _log.debug("A concurrent step also failed: %r", other)
        raise failures[0]  # type: ignore[misc]
    return [t.result() for t in tasks]
