"""The herder's tick loop: ask the core for a step, perform it, and wait for work when there is none.

Contract:
- :meth:`TickLoop.run` never returns (it is cancelled with the herder): each round calls ``step()``
  (the core's next effects) and ``perform(effects)``. A round that raises is recorded by the
  :class:`~pyconnect.herder.health.TickRecorder`, reported to the core (``step_failed``), logged, and
  retried after a backoff (0.25 s doubling to 5 s); the herder never dies of it.
- With no effects the loop is idle: it waits for :meth:`wake` (a config record, a REST write, a connector
  asking for reconfiguration), one of ``extra_wakeups`` (the member needing a rejoin), or the core's
  ``wait_time``, whichever comes first.
- :meth:`idle` waits until a step found nothing to do after the last :meth:`wake`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from pyconnect.herder import effects as fx
from pyconnect.herder.backoff import Backoff
from pyconnect.herder.core import HerderCore
from pyconnect.herder.health import TickRecorder

log = logging.getLogger(__name__)

STEP_BACKOFF_S = (0.25, 5.0)


class TickLoop:
    """See the module docstring; one per herder."""

    def __init__(
        self,
        core: HerderCore,
        recorder: TickRecorder,
        clock: Callable[[], float],
        *,
        step: Callable[[], Sequence[fx.Effect]],
        perform: Callable[[Sequence[fx.Effect]], Awaitable[None]],
        extra_wakeups: Callable[[], Sequence[asyncio.Event]],
        worker_id: str,
    ) -> None:
        self._core = core
        self._recorder = recorder
        self._clock = clock
        self._step = step
        self._perform = perform
        self._extra_wakeups = extra_wakeups
        self._worker_id = worker_id
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    async def run(self) -> None:
        backoff = Backoff(*STEP_BACKOFF_S)
        while True:
            try:
                idle = await self._round()
                backoff.reset()
                self._recorder.step_succeeded()
            except Exception as exc:
                self._recorder.step_failed(exc, self._now_ms())
                self._core.step_failed()
                delay = backoff.failed()
                log.exception("Worker %s: herder tick failed; retrying in %.2f s", self._worker_id, delay)
                await asyncio.sleep(delay)
                continue
            if idle:
                await self._wait_for_work()

    async def _round(self) -> bool:
        """One core step performed; True when the core had nothing to do."""
        effects = self._step()
        if not effects:
            if not self._wakeup.is_set():
                self._idle.set()
            return True
        await self._perform(effects)
        return False

    async def _wait_for_work(self) -> None:
        wakeups = (self._wakeup, *self._extra_wakeups())
        if not any(event.is_set() for event in wakeups):
            self._recorder.begin("polling the group coordinator until interrupted", self._now_ms())
            waiters = [asyncio.ensure_future(event.wait()) for event in wakeups]
            try:
                timeout = self._core.wait_time(self._clock())
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
        self._wakeup.clear()

    def wake(self) -> None:
        self._idle.clear()
        self._wakeup.set()

    async def idle(self) -> None:
        await self._idle.wait()
