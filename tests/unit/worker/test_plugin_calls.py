"""PluginCalls: plain methods on named daemon threads, coroutines on the loop, bounds and abandonment.

A blocking plugin method waits on a ``threading.Event`` the test sets at the end, so no thread outlives
the test.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator

import pytest

from pyconnect.metrics.process import plugin_call_samples
from pyconnect.metrics.prometheus import COUNTER, GAUGE
from pyconnect.worker.plugin_calls import PluginCalls, PluginCallsClosed, PluginCallTimeout


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def calls() -> Iterator[PluginCalls]:
    pool = PluginCalls(max_threads=2, idle_s=5.0)
    yield pool
    pool.close()


def wait_until(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


async def test_plain_method_runs_on_a_named_daemon_thread_off_the_loop(calls: PluginCalls) -> None:
    loop_thread = threading.current_thread()

    def start(props: dict[str, str]) -> tuple[str, bool, bool, str]:
        me = threading.current_thread()
        return me.name, me.daemon, me is loop_thread, props["k"]

    name, daemon, on_loop, value = await calls.call("conn-a", "start", start, {"k": "v"})
    assert (name, daemon, on_loop, value) == ("plugin-conn-a", True, False, "v")


async def test_coroutine_method_runs_on_the_loop_and_bind_returns_it_unchanged(calls: PluginCalls) -> None:
    class Task:
        async def poll(self) -> str:
            return threading.current_thread().name

    task = Task()
    assert await calls.call("t-0", "poll", task.poll) == threading.current_thread().name
    assert calls.bind("t-0", "poll", task.poll) == task.poll
    assert calls.threads == 0


async def test_plain_method_returning_an_awaitable_has_it_awaited(calls: PluginCalls) -> None:
    async def later() -> int:
        return 7

    assert await calls.call("c", "stop", lambda: later()) == 7


async def test_exceptions_propagate_unchanged(calls: PluginCalls) -> None:
    def boom() -> None:
        raise ValueError("bad config")

    with pytest.raises(ValueError, match="bad config"):
        await calls.call("c", "validate", boom)


async def test_overrun_abandons_the_thread_counts_it_and_warns(
    calls: PluginCalls, release: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    entered = threading.Event()

    def stop() -> str:
        entered.set()
        release.wait(30)
        return "done"

    with caplog.at_level(logging.WARNING, logger="pyconnect.worker.plugin_calls"):
        with pytest.raises(PluginCallTimeout, match=r"blocking-0: stop\(\) did not return within 0.05 s"):
            await calls.call("blocking-0", "stop", stop, timeout=0.05)
    assert entered.is_set()
    assert calls.abandoned == 1 and calls.abandoned_total == 1
    assert any("blocking-0" in r.getMessage() and "stop()" in r.getMessage() for r in caplog.records)
    release.set()
    await asyncio.to_thread(wait_until, lambda: calls.abandoned == 0)
    assert calls.abandoned_total == 1


async def test_abandoned_threads_do_not_count_against_the_bound(
    calls: PluginCalls, release: threading.Event
) -> None:
    started = threading.Semaphore(0)

    def start() -> None:
        started.release()
        release.wait(30)

    for n in range(3):  # more than max_threads=2
        # long enough for a loaded machine to start the thread: a call still queued at its deadline is
        # dropped, not abandoned
        with pytest.raises(PluginCallTimeout):
            await calls.call(f"c{n}", "start", start, timeout=0.5)
        assert started.acquire(timeout=0)  # it ran, so it was abandoned
    assert calls.abandoned == 3
    assert await calls.call("healthy", "task_configs", lambda: [{"a": "b"}], timeout=5) == [{"a": "b"}]
    release.set()


async def test_calls_beyond_max_threads_queue_and_the_bound_includes_the_wait(
    calls: PluginCalls, release: threading.Event
) -> None:
    busy = [asyncio.ensure_future(calls.call(f"c{n}", "poll", release.wait, 30)) for n in range(2)]
    await asyncio.to_thread(wait_until, lambda: calls.threads == 2)
    with pytest.raises(PluginCallTimeout):
        await calls.call("queued", "poll", lambda: "never", timeout=0.05)
    assert calls.abandoned == 0  # it never ran: dropped from the queue, no thread lost
    release.set()
    assert await asyncio.gather(*busy) == [True, True]
    assert calls.threads == 2


async def test_async_overrun_is_cancelled(calls: PluginCalls) -> None:
    cancelled = asyncio.Event()

    async def start() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(PluginCallTimeout, match=r"start\(\)"):
        await calls.call("c", "start", start, timeout=0.02)
    assert cancelled.is_set() and calls.abandoned == 0


async def test_cancelled_caller_detaches_and_a_routine_cancel_is_quiet(
    calls: PluginCalls, release: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    poll = calls.bind("t-0", "poll", release.wait, routine_cancel=True)
    pending = asyncio.ensure_future(poll(30))
    await asyncio.to_thread(wait_until, lambda: calls.threads == 1)
    await asyncio.sleep(0.01)
    with caplog.at_level(logging.WARNING, logger="pyconnect.worker.plugin_calls"):
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
    assert calls.abandoned == 1
    assert not caplog.records
    release.set()
    await asyncio.to_thread(wait_until, lambda: calls.abandoned == 0)


async def test_close_refuses_new_calls_and_ends_idle_threads(calls: PluginCalls) -> None:
    assert await calls.call("c", "config", lambda: threading.current_thread().name) == "plugin-c"
    assert calls.threads == 1
    calls.close()
    await asyncio.to_thread(wait_until, lambda: calls.threads == 0)
    with pytest.raises(Exception, match="shutting down"):
        await calls.call("c", "config", lambda: None)


async def test_close_answers_the_callers_of_running_calls_at_once(
    calls: PluginCalls, release: threading.Event
) -> None:
    pending = asyncio.ensure_future(calls.call("c", "validate", release.wait, 30))
    await asyncio.to_thread(wait_until, lambda: calls.threads == 1)
    await asyncio.sleep(0.01)
    calls.close()
    with pytest.raises(PluginCallsClosed, match=r"c: validate\(\) abandoned: the worker is shutting down"):
        await asyncio.wait_for(pending, 1.0)
    assert calls.abandoned == 1
    release.set()
    await asyncio.to_thread(wait_until, lambda: calls.threads == 0)
    assert calls.abandoned == 0


async def test_the_metrics_say_how_many_threads_were_abandoned(
    calls: PluginCalls, release: threading.Event
) -> None:
    with pytest.raises(PluginCallTimeout):
        await calls.call("c", "stop", release.wait, 30, timeout=0.02)
    values = {sample.name: (sample.value, sample.type) for sample in plugin_call_samples(calls)}
    assert values == {
        "pyconnect_plugin_threads": (1.0, GAUGE),
        "pyconnect_plugin_threads_abandoned": (1.0, GAUGE),
        "pyconnect_plugin_calls_abandoned_total": (1.0, COUNTER),
    }
    release.set()
    await asyncio.to_thread(wait_until, lambda: calls.abandoned == 0)
    values = {sample.name: sample.value for sample in plugin_call_samples(calls)}
    assert values["pyconnect_plugin_threads_abandoned"] == 0.0
    assert values["pyconnect_plugin_calls_abandoned_total"] == 1.0


def test_max_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        PluginCalls(max_threads=0)


async def test_version_is_asked_off_the_loop_and_a_failing_or_blocking_one_is_none(
    calls: PluginCalls, release: threading.Event
) -> None:
    class Plugin:
        def __init__(self, mode: str) -> None:
            self.mode = mode

        def version(self) -> object:
            if self.mode == "raise":
                raise RuntimeError("no version")
            if self.mode == "block":
                release.wait(30)
            return threading.current_thread().name

    assert await calls.version("c", Plugin("ok")) == "plugin-c"
    assert await calls.version("c", Plugin("raise")) is None
    started = time.monotonic()
    assert await calls.version("c", Plugin("block"), timeout=0.2) is None
    assert time.monotonic() - started < 2.0
    assert calls.abandoned == 1
