"""Calling plugin code: a plain method on a worker thread, a coroutine on the loop, each within a bound.

A plugin method that blocks (``time.sleep``, blocking I/O, a busy loop) must never block the event
loop: REST, the group heartbeats and every other connector share it. :class:`PluginCalls` owns that
rule for one worker.

Contract:
- ``await calls.call(owner, method, fn, *args, timeout=...)``: a coroutine function runs on the loop
  (no thread hop); any other callable runs on one of the worker's plugin threads (daemon threads named
  ``plugin-<owner>`` while they run it). A plain method that returns an awaitable has it awaited on the
  loop, within what is left of the bound. ``bind`` does the coroutine-or-thread choice once, for a
  method called on a hot path (a task's ``poll``): a coroutine method is returned as it is.
- The bound (``timeout`` seconds, ``None``: none) starts when the call is made, queueing included. A
  call that overruns raises :class:`PluginCallTimeout` (naming owner and method) and is *abandoned*:
  a coroutine is cancelled; a thread cannot be killed in Python, so a plain method keeps running on
  its thread until it returns by itself. That thread is counted in :attr:`PluginCalls.abandoned` until
  then, is not counted against ``max_threads`` (new calls get a new thread), and a WARN names the
  owner and method. A caller cancelled while a plain method runs detaches from it the same way
  (logged at WARN unless ``routine_cancel``: cancelling a pending ``poll`` is how a task is stopped).
- At most ``max_threads`` threads run calls that are not abandoned; more calls queue. Idle threads
  end after ``idle_s``. Every thread is a daemon thread: an abandoned call never keeps the worker
  process from exiting. ``close()`` ends the idle threads and refuses new calls; it does not wait for
  busy ones: their callers get :class:`PluginCallsClosed` at once (a REST request waiting on a
  validation answers instead of holding up the REST server's shutdown) and the calls count as
  abandoned.
- Exceptions from the plugin method propagate to the caller unchanged.
- ``await calls.version(owner, plugin)``: the plugin's ``version()`` as text, asked once per start
  (the runners keep it for their status reports) within ``VERSION_TIMEOUT_S``; ``None`` when it raised
  or overran (an overrun is abandoned as above).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import logging
import queue
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pyconnect.errors import ConnectError

log = logging.getLogger(__name__)

VERSION_TIMEOUT_S = 1.0
"""How long a plugin's ``version()`` may take before its runner goes on without it."""
DEFAULT_MAX_THREADS = 64
DEFAULT_IDLE_S = 60.0
IDLE_THREAD_NAME = "plugin-idle"


class PluginCallTimeout(ConnectError):
    """A plugin method did not return within its bound; the call was abandoned."""

    def __init__(self, owner: str, method: str, timeout: float) -> None:
        super().__init__(
            f"{owner}: {method}() did not return within {timeout:.3g} s; the call was abandoned "
            "(a plain method keeps running on its thread until it returns)"
        )
        self.owner = owner
        self.method = method
        self.timeout = timeout


class PluginCallsClosed(ConnectError):
    """The worker is shutting down: the call was refused, or abandoned while it ran."""


@dataclass(eq=False)
class _Work:
    owner: str
    method: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    abandoned: bool = False
    context: contextvars.Context = field(default_factory=contextvars.copy_context)
    """The caller's context (its log context among it): the method runs in it on its thread."""


def is_coroutine_method(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` returns a coroutine (``async def``, also behind ``functools.partial``)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn)


class PluginCalls:
    """The worker's plugin threads and bounds; see the module docstring."""

    def __init__(self, *, max_threads: int = DEFAULT_MAX_THREADS, idle_s: float = DEFAULT_IDLE_S) -> None:
        if max_threads < 1:
            raise ValueError(f"max_threads must be at least 1, not {max_threads}")
        self._max_threads = max_threads
        self._idle_s = idle_s
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._abandoned = 0
        self._closed = False
        self._running: set[_Work] = set()
        self.abandoned_total = 0
        """Every call abandoned so far (its thread may have returned since)."""

    @property
    def abandoned(self) -> int:
        """Threads still running a plain plugin method whose caller gave up on it."""
        with self._lock:
            return self._abandoned

    @property
    def threads(self) -> int:
        """Live plugin threads (idle, busy and abandoned)."""
        with self._lock:
            return self._threads

    def bind(
        self,
        owner: str,
        method: str,
        fn: Callable[..., Any],
        *,
        timeout: float | None = None,
        routine_cancel: bool = False,
    ) -> Callable[..., Awaitable[Any]]:
        """``fn`` as a coroutine function that calls it the way :meth:`call` would (decided once)."""
        if is_coroutine_method(fn) and timeout is None:
            return fn

        async def bound(*args: Any) -> Any:
            return await self.call(owner, method, fn, *args, timeout=timeout, routine_cancel=routine_cancel)

        return bound

    async def call(
        self,
        owner: str,
        method: str,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float | None = None,
        routine_cancel: bool = False,
    ) -> Any:
        """Call ``fn(*args)`` as the module docstring says; raises :class:`PluginCallTimeout` on overrun."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        if is_coroutine_method(fn):
            return await self._await(owner, method, fn(*args), deadline, timeout)
        work = self._submit(owner, method, fn, args)
        waiter = asyncio.wrap_future(work.future)
        try:
            if deadline is None:
                result = await waiter  # the hot path (a plain poll): no timer, no extra future
            else:
                done, _ = await asyncio.wait({waiter}, timeout=deadline - loop.time())
                if not done:
                    waiter.cancel()
                    self._give_up(work, f"it did not return within {timeout:.3g} s")
                    assert timeout is not None
                    raise PluginCallTimeout(owner, method, timeout)
                result = waiter.result()
        except asyncio.CancelledError:
            waiter.cancel()
            self._give_up(work, None if routine_cancel else "its caller was cancelled")
            raise
        if inspect.isawaitable(result):
            return await self._await(owner, method, result, deadline, timeout)
        return result

    async def version(self, owner: str, plugin: Any, *, timeout: float = VERSION_TIMEOUT_S) -> str | None:
        """``plugin.version()`` as text within ``timeout``; ``None`` when it raised or overran."""
        try:
            return str(await self.call(owner, "version", plugin.version, timeout=timeout))
        except (PluginCallTimeout, PluginCallsClosed):
            return None
        except Exception as exc:
            log.debug("%s: version() failed: %s", owner, exc)
            return None

    async def _await(
        self,
        owner: str,
        method: str,
        awaitable: Awaitable[Any],
        deadline: float | None,
        timeout: float | None,
    ) -> Any:
        if deadline is None:
            return await awaitable
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        try:
            return await asyncio.wait_for(awaitable, remaining)
        except TimeoutError:
            log.warning("%s: %s() did not return within %.3g s; cancelled it", owner, method, timeout)
            raise PluginCallTimeout(owner, method, timeout or 0.0) from None

    def _submit(self, owner: str, method: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> _Work:
        work = _Work(owner, method, fn, args)
        with self._lock:
            if self._closed:
                raise PluginCallsClosed(f"{owner}: cannot call {method}(): the worker is shutting down")
            if self._idle > 0:
                self._idle -= 1
            elif self._threads - self._abandoned < self._max_threads:
                self._threads += 1
                threading.Thread(target=self._run, name=IDLE_THREAD_NAME, daemon=True).start()
            self._queue.put(work)
        return work

    def _give_up(self, work: _Work, reason: str | None) -> None:
        """The caller stops waiting: a queued call is dropped, a running one abandoned."""
        if work.future.cancel():
            return
        with self._lock:
            if work.future.done():
                return
            work.abandoned = True
            self._abandoned += 1
            self.abandoned_total += 1
            abandoned = self._abandoned
        if reason is not None:
            log.warning(
                "%s: abandoned its %s() call: %s; its thread keeps running until the method returns "
                "(%d abandoned plugin thread(s) on this worker)",
                work.owner,
                work.method,
                reason,
                abandoned,
            )

    def _run(self) -> None:
        thread = threading.current_thread()
        while True:
            try:
                work = self._queue.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no call has claimed an idle thread: this one may go
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue
            if work is None:
                with self._lock:
                    self._threads -= 1
                return
            with self._lock:
                runs = work.future.set_running_or_notify_cancel()
                if runs:
                    self._running.add(work)
            if runs:
                thread.name = f"plugin-{work.owner}"
                try:
                    result = work.context.run(work.fn, *work.args)
                except BaseException as exc:
                    self._settle(work, None, exc)
                else:
                    self._settle(work, result, None)
                thread.name = IDLE_THREAD_NAME
            with self._lock:
                self._running.discard(work)
                if work.abandoned:
                    self._abandoned -= 1
                    log.info("%s: abandoned %s() call returned at last", work.owner, work.method)
                if self._closed:
                    self._threads -= 1
                    return
                self._idle += 1
            del work

    def _settle(self, work: _Work, result: Any, error: BaseException | None) -> None:
        """On the plugin thread: the outcome, unless ``close`` already answered the caller."""
        with self._lock:
            if work.future.done():
                return
            if error is not None:
                work.future.set_exception(error)
            else:
                work.future.set_result(result)

    def close(self) -> None:
        """Refuse new calls, end the idle threads and answer the callers of running calls (see the
        module docstring); busy threads end when their method returns."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, 0
            running = [work for work in self._running if not work.future.done()]
            for work in running:
                if not work.abandoned:
                    work.abandoned = True
                    self._abandoned += 1
                    self.abandoned_total += 1
                work.future.set_exception(
                    PluginCallsClosed(f"{work.owner}: {work.method}() abandoned: the worker is shutting down")
                )
        for _ in range(idle):
            self._queue.put(None)
