"""``cancel_and_wait``, ``TaskSet`` and ``together``: children end, the caller's cancellation is kept."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from pyconnect.concurrency import TaskSet, cancel_and_wait, stop_in_order, together
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


async def test_steps_failing_together_leave_no_unretrieved_exception() -> None:
    """Two clients failing to bootstrap at the same moment: the first in order is raised, the other's
    exception is retrieved (asyncio would log "Task exception was never retrieved" at collection)."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        with pytest.raises(ConfigError, match="first"):
            await together(_fail(0.01, ConfigError("first")), _fail(0.01, OSError("second")))
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert reported == []


async def test_cancelling_the_caller_cancels_every_step() -> None:
    log: list[str] = []
    outer = asyncio.ensure_future(together(_after(5.0, "a", log), _after(5.0, "b", log)))
    await asyncio.sleep(0.05)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert sorted(log) == ["cancelled a", "cancelled b"]


async def _stubborn(log: list[str], name: str, cleanup_s: float = 0.05) -> None:
    """Needs ``cleanup_s`` to finish after being cancelled (as a client closing its connections)."""
    try:
        await asyncio.sleep(5.0)
    except asyncio.CancelledError:
        await asyncio.sleep(cleanup_s)
        log.append(f"cleaned {name}")
        raise


async def test_cancel_and_wait_absorbs_the_childrens_cancellation_and_waits_for_them() -> None:
    log: list[str] = []
    a = asyncio.create_task(_stubborn(log, "a"))
    b = asyncio.create_task(_stubborn(log, "b", 0.1))
    await asyncio.sleep(0)
    assert await cancel_and_wait(a, None, b, a) == []
    assert a.cancelled() and b.cancelled()
    assert sorted(log) == ["cleaned a", "cleaned b"]


async def test_cancel_and_wait_propagates_the_callers_own_cancellation() -> None:
    """The caller is cancelled while its children clean up: the children still finish, and the
    caller ends cancelled (its CancelledError is not mistaken for a child's)."""
    log: list[str] = []
    after: list[str] = []
    child = asyncio.create_task(_stubborn(log, "child", 0.2))

    async def stopper() -> None:
        await cancel_and_wait(child)
        after.append("continued")  # must not run: the stopper itself was cancelled

    await asyncio.sleep(0)
    caller = asyncio.create_task(stopper())
    await asyncio.sleep(0.05)
    caller.cancel("operator stop")
    with pytest.raises(asyncio.CancelledError, match="operator stop"):
        await caller
    assert caller.cancelled()
    assert after == []
    assert child.done() and log == ["cleaned child"]


async def test_cancel_and_wait_propagates_a_cancellation_pending_before_it_started() -> None:
    child = asyncio.create_task(asyncio.sleep(5.0))
    reached: list[str] = []

    async def stopper() -> None:
        asyncio.current_task().cancel()  # type: ignore[union-attr]
        await cancel_and_wait(child)
        reached.append("after")

    caller = asyncio.create_task(stopper())
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert reached == []
    await cancel_and_wait(child)
    assert child.cancelled()


async def test_cancel_and_wait_logs_and_returns_child_failures(caplog: pytest.LogCaptureFixture) -> None:
    async def fails_on_cancel() -> None:
        try:
            await asyncio.sleep(5.0)
        except asyncio.CancelledError:
            raise RuntimeError("close failed") from None

    async def failed_before() -> None:
        raise ValueError("early")

    early = asyncio.create_task(failed_before(), name="early-task")
    late = asyncio.create_task(fails_on_cancel(), name="late-task")
    await asyncio.sleep(0)
    with caplog.at_level(logging.ERROR, logger="test.owner"):
        errors = await cancel_and_wait(early, late, log=logging.getLogger("test.owner"))
    assert [type(e) for e in errors] == [ValueError, RuntimeError]
    assert [r.getMessage() for r in caplog.records] == [
        "early-task failed: early",
        "late-task failed: close failed",
    ]
    assert await cancel_and_wait(late, log=None) != []  # retrievable again, logged only when asked


async def test_cancel_and_wait_skips_the_calling_task() -> None:
    async def stops_itself() -> str:
        await cancel_and_wait(asyncio.current_task())
        return "still running"

    assert await asyncio.create_task(stops_itself()) == "still running"


async def test_task_set_owns_its_tasks_logs_failures_and_closes_idempotently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    tasks = TaskSet(logging.getLogger("test.owner"))

    async def boom() -> None:
        raise RuntimeError("send failed")

    with caplog.at_level(logging.ERROR, logger="test.owner"):
        tasks.spawn(boom(), name="send-1")
        tasks.spawn(_stubborn(log, "sync"), name="sync")
        await asyncio.sleep(0.01)
        assert len(tasks) == 1, "a finished task is dropped"
        await tasks.close()
        await tasks.close()
    assert len(tasks) == 0
    assert log == ["cleaned sync"]
    assert [r.getMessage() for r in caplog.records] == ["send-1 failed: send failed"]
    again = tasks.spawn(asyncio.sleep(0, "reused"))
    assert await again == "reused"


async def test_task_set_close_ends_tasks_spawned_while_closing() -> None:
    tasks = TaskSet()
    spawned: list[asyncio.Task[None]] = []

    async def spawns_on_cancel() -> None:
        try:
            await asyncio.sleep(5.0)
        except asyncio.CancelledError:
            spawned.append(tasks.spawn(asyncio.sleep(5.0)))
            raise

    tasks.spawn(spawns_on_cancel())
    await asyncio.sleep(0)
    await tasks.close()
    assert len(spawned) == 1 and spawned[0].cancelled()


async def test_together_logs_a_second_failure_instead_of_dropping_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails_on_cancel() -> None:
        try:
            await asyncio.sleep(5.0)
        except asyncio.CancelledError:
            raise OSError("socket close failed") from None

    with caplog.at_level(logging.ERROR, logger="pyconnect.concurrency"):
        with pytest.raises(ConfigError):
            await together(fails_on_cancel(), _fail(0.01, ConfigError("bad topic")))
    assert any("socket close failed" in r.getMessage() for r in caplog.records)


class _Part:
    def __init__(
        self, name: str, log: list[str], seconds: float = 0.0, error: Exception | None = None
    ) -> None:
        self.name, self.log, self.seconds, self.error = name, log, seconds, error

    async def stop(self) -> None:
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.log.append(self.name)
        if self.error is not None:
            raise self.error


async def test_stop_in_order_runs_every_step_in_order_and_returns_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    boom = RuntimeError("boom")

    async def rest() -> None:
        log.append("rest")

    with caplog.at_level(logging.WARNING, logger="test.owner"):
        failures = await stop_in_order(
            ("herder", _Part("herder", log, error=boom)),
            ("nothing", None),
            ("offsets", _Part("offsets", log)),
            ("REST server", rest),
            log=logging.getLogger("test.owner"),
        )
    assert log == ["herder", "offsets", "rest"]
    assert failures == [boom]
    assert [r.getMessage() for r in caplog.records] == ["Stopping herder failed: boom"]


async def test_stop_in_order_finishes_every_step_when_the_caller_is_cancelled() -> None:
    log: list[str] = []
    stopping = asyncio.create_task(
        stop_in_order(("herder", _Part("herder", log, 5.0)), ("offsets", _Part("offsets", log, 0.05)))
    )
    await asyncio.sleep(0.02)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert log == ["herder", "offsets"], "the cancelled step ended, the next one still ran to its end"
