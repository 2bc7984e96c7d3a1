"""Run independent start-up steps at once, failing like the first step that failed.

:func:`together` awaits several awaitables concurrently. When one raises, the others are cancelled
and awaited, and that first exception is re-raised as itself (not wrapped in an ``ExceptionGroup``),
so callers keep catching ``ConfigError``/``ConnectError`` exactly as with sequential awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Iterable
from typing import Any


async def together(*steps: Awaitable[Any]) -> list[Any]:
    """Await ``steps`` concurrently; their results in the given order, or the first failure raised
    after every other step was cancelled and has finished."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:
        await _cancel(tasks)
        raise
    failed = next((t for t in tasks if t in done and not t.cancelled() and t.exception() is not None), None)
    if failed is not None:
        await _cancel(pending)
        raise failed.exception()  # type: ignore[misc]
    return [t.result() for t in tasks]


async def _cancel(tasks: Iterable[asyncio.Future[Any]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
