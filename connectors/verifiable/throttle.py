"""``org.apache.kafka.server.util.ThroughputThrottler`` on an injected clock.

``should_throttle(amount, now_ms)`` is true when more than ``throughput`` units per second were sent
since ``start_ms`` (Java's single-precision elapsed-seconds arithmetic included). ``throttle()`` then
sleeps ``1/throughput`` seconds per call, accumulating deficits under 2 ms; throughput 0 waits until
``wakeup()``, a negative throughput never throttles. Cancelling ``throttle()`` keeps the unslept
remainder as deficit (Java's interrupt handling) and propagates the cancellation.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from pyconnect.api.converters.jackson import to_float32
from pyconnect.concurrency import cancel_and_wait

NS_PER_MS = 1_000_000
NS_PER_SEC = 1_000 * NS_PER_MS
MIN_SLEEP_NS = 2 * NS_PER_MS
_LONG_MAX = 2**63 - 1


class Clock(Protocol):
    """Wall-clock milliseconds, a monotonic nanosecond counter and a sleep that uses the same time."""

    def time_ms(self) -> int: ...

    def monotonic_ns(self) -> int: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time_ms(self) -> int:
        return time.time_ns() // NS_PER_MS

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ThroughputThrottler:
    def __init__(self, throughput: float, start_ms: int, clock: Clock) -> None:
        self.start_ms = start_ms
        self.throughput = throughput
        self.sleep_time_ns = int(NS_PER_SEC / throughput) if throughput > 0 else _LONG_MAX
        self.sleep_deficit_ns = 0
        self._clock = clock
        self._wakeup = asyncio.Event()

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.throughput < 0:
            return False
        elapsed_sec = to_float32(to_float32(send_start_ms - self.start_ms) / 1000.0)
        return elapsed_sec > 0 and amount_so_far / elapsed_sec > self.throughput

    async def throttle(self) -> None:
        if self.throughput == 0:
            await self._wakeup.wait()
            return
        self.sleep_deficit_ns += self.sleep_time_ns
        if self.sleep_deficit_ns < MIN_SLEEP_NS:
            return
        started = self._clock.monotonic_ns()
        try:
            remaining = self.sleep_deficit_ns
            while not self._wakeup.is_set() and remaining > 0:
                await self._sleep_or_wakeup(remaining)
                remaining = self.sleep_deficit_ns - (self._clock.monotonic_ns() - started)
            self._wakeup.clear()
            self.sleep_deficit_ns = 0
        except asyncio.CancelledError:
            slept = self._clock.monotonic_ns() - started
            if slept <= self.sleep_deficit_ns:
                self.sleep_deficit_ns -= slept
            raise

    async def _sleep_or_wakeup(self, remaining_ns: int) -> None:
        sleeper = asyncio.ensure_future(self._clock.sleep(remaining_ns / NS_PER_SEC))
        waker = asyncio.ensure_future(self._wakeup.wait())
        try:
            await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(sleeper, waker)

    def wakeup(self) -> None:
        self._wakeup.set()
