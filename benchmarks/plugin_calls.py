"""What a thread hop costs a plain (synchronous) source task per ``poll`` (pyconnect.worker.plugin_calls).

Run: ``python -m benchmarks.plugin_calls [calls]``. Prints microseconds per call for a coroutine
``poll`` (bound as it is: no hop), a plain ``poll`` called on the loop (what the runtime did before,
blocking it), and a plain ``poll`` through :class:`~pyconnect.worker.plugin_calls.PluginCalls` (one
hop to a plugin thread and back). ``poll`` runs once per batch, so the hop is paid per batch.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pyconnect.worker.plugin_calls import PluginCalls

BATCH: list[int] = list(range(100))


class AsyncTask:
    async def poll(self) -> list[int]:
        return BATCH


class PlainTask:
    def poll(self) -> list[int]:
        return BATCH


async def per_call_us(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    for _ in range(min(1000, calls)):
        await call()
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - started) / calls * 1e6


async def main(calls: int) -> dict[str, float]:
    pool = PluginCalls()
    try:
        plain = PlainTask()

        async def on_loop() -> list[int]:
            return plain.poll()

        return {
            "async poll, no hop": await per_call_us(pool.bind("t-0", "poll", AsyncTask().poll), calls),
            "plain poll on the loop": await per_call_us(on_loop, calls),
            "plain poll, thread hop": await per_call_us(pool.bind("t-0", "poll", plain.poll), calls),
        }
    finally:
        pool.close()


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    for name, us in asyncio.run(main(count)).items():
        print(f"{name:<24} {us:8.2f} us/call")
