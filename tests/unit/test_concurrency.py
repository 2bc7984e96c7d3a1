"""``together``: concurrent start-up steps, results in order, the first failure raised as itself."""

from __future__ import annotations

import asyncio

import pytest

from pyconnect.concurrency import together
from pyconnect.errors import ConfigError


async def _after(seconds: float, value: object, log: list[str]) -> object:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        log.append(f"cancelled {value}")
        raise
    log.append(f"done {value}")
    return value


async def _fail(seconds: float, error: BaseException) -> None:
    await asyncio.sleep(seconds)
    raise error


async def test_steps_run_at_once_and_results_keep_their_order() -> None:
    log: list[str] = []
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    results = await together(_after(0.2, "slow", log), _after(0.05, "fast", log))
    assert results == ["slow", "fast"]
    assert log == ["done fast", "done slow"]
    assert loop.time() - t0 < 0.35, "the steps overlapped"


async def test_first_failure_is_raised_as_itself_and_the_rest_are_cancelled() -> None:
    log: list[str] = []
    with pytest.raises(ConfigError, match="bad topic"):
        await together(_after(5.0, "store", log), _fail(0.01, ConfigError("bad topic")))
    assert log == ["cancelled store"]


async def test_cancelling_the_caller_cancels_every_step() -> None:
    log: list[str] = []
    outer = asyncio.ensure_future(together(_after(5.0, "a", log), _after(5.0, "b", log)))
    await asyncio.sleep(0.05)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert sorted(log) == ["cancelled a", "cancelled b"]
