"""The lifecycle every worker task shares, source or sink (Java's ``WorkerTask``).

Contract:
- ``start()`` launches the subclass's ``_run()`` loop in a task owned by this object (once) and
  returns at once; ``running`` says whether that loop is still going.
- ``transition_to(target)`` records the target state and wakes the loop; ``stop()`` asks it to end.
  Both only set state: the loop reads ``_target``, ``_stopping`` and ``_state_changed``.
- ``_stop_plugin()``: ``task.stop()`` once, if ``task.start()`` was entered (bounded by
  ``_stop_timeout_s``; its errors are logged, not raised); the transformation chain is closed here
  too, once, whether or not the plugin started.
- ``_unless_stopping(step)``: awaits ``step`` unless a stop request comes first (then ``step`` is
  cancelled and it returns).
- ``_retry_sleep(ms)``: the wait between two attempts of a retried operation
  (:mod:`pyconnect.worker.retry_with_tolerance`): ``False``, at once, when the task is asked to stop.
- ``wait_stopped(timeout)``: True when the loop ended cleanly within ``timeout`` seconds; otherwise
  (and when the wait itself is cancelled) the loop is cancelled and ``_release()`` closes what the
  loop's own end would have closed, so no client outlives the task. A task whose loop never started
  only runs ``_release_unstarted()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import Any

from pyconnect.concurrency import cancel_and_wait
from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.transforms.chain import TransformationChain
from pyconnect.worker.plugin_calls import PluginCalls, PluginCallTimeout

log = logging.getLogger(__name__)


class TaskLifecycle:
    """Start, state transitions, stop and a bounded wait; subclasses provide ``_run`` and ``_release``."""

    id: ConnectorTaskId
    task: Any
    _calls: PluginCalls
    _owner: str
    _stop_timeout_s: float
    _plugin_started: bool
    _transformations: TransformationChain | None
    kind: str = "task"
    """Names the loop's asyncio task: ``<kind>-task-<connector>-<task>``."""

    def __init__(self, task_id: ConnectorTaskId, target: TargetState) -> None:
        self.id = task_id
        self._target = target
        self._stopping = asyncio.Event()
        self._state_changed = asyncio.Event()
        self._run_task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        raise NotImplementedError

    async def _release(self) -> None:
        """Close the plugin and the clients after the loop was cancelled (errors are the subclass's to
        swallow: this runs while unwinding)."""
        raise NotImplementedError

    async def _release_unstarted(self) -> None:
        """What a task whose loop never started must still close (nothing by default)."""

    @property
    def running(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    def start(self) -> None:
        if self._run_task is None:
            self._run_task = asyncio.create_task(
                self._run(), name=f"{self.kind}-task-{self.id.connector}-{self.id.task}"
            )

    def transition_to(self, target: TargetState) -> None:
        """PAUSED/STOPPED pause the loop (the herder stops STOPPED tasks); STARTED resumes it."""
        self._target = target
        self._state_changed.set()

    def stop(self) -> None:
        self._stopping.set()
        self._state_changed.set()

    async def _retry_sleep(self, delay_ms: int) -> bool:
        """Wait ``delay_ms`` before a retry; ``False`` (at once) when the task is asked to stop."""
        if not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay_ms / 1000)
        return not self._stopping.is_set()

    async def _unless_stopping(self, step: Awaitable[None]) -> None:
        """Run ``step`` (the preflight, which may wait for the herder's loop) unless the task is asked
        to stop first: then it is cancelled, so stopping a task never waits for its fencing round."""
        work = asyncio.ensure_future(step)
        stopped = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            await cancel_and_wait(work, stopped, log=log)
            raise
        if not work.done():
            await cancel_and_wait(work, stopped, log=None)
            return
        await cancel_and_wait(stopped, log=None)
        work.result()

    async def wait_stopped(self, timeout: float) -> bool:
        """True when the loop ended cleanly within ``timeout`` seconds; else it is cancelled."""
        if self._run_task is None:
            await self._release_unstarted()
            return True
        try:
            done, _ = await asyncio.wait({self._run_task}, timeout=timeout)
        except asyncio.CancelledError:
            await self._abort()
            raise
        if done:
            return True
        log.warning("Task %s did not stop within %.1f s; cancelling it", self.id, timeout)
        await self._abort()
        return False

    async def _abort(self) -> None:
        """Cancel the loop, then release (also when this wait is itself cancelled)."""
        try:
            await cancel_and_wait(self._run_task, log=log)
        finally:
            await self._release()

    async def _stop_plugin(self) -> None:
        """``task.stop()`` once, if ``task.start()`` was entered; see the module docstring."""
        chain, self._transformations = self._transformations, None
        if chain is not None:
            try:
                chain.close()
            except Exception:
                log.exception("Task %s: closing its transformations failed", self.id)
        if not self._plugin_started:
            return
        self._plugin_started = False
        try:
            await self._calls.call(self._owner, "stop", self.task.stop, timeout=self._stop_timeout_s)
        except PluginCallTimeout as exc:
            log.error("Task %s: %s", self.id, exc)
        except Exception:
            log.exception("Task %s: stop() failed", self.id)
