"""WorkerConnector: target-state transitions, failures and statuses, with a fake connector plugin."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.worker_connector import TASK_CLASS_CONFIG, WorkerConnector


class FakeTask:
    java_class = "org.example.FakeTask"


class FakeConnector:
    def __init__(
        self, fail_on: str | None = None, async_stop: bool = False, hang_on_stop: bool = False
    ) -> None:
        self.calls: list[str] = []
        self.fail_on = fail_on
        self.async_stop = async_stop
        self.hang_on_stop = hang_on_stop

    def initialize(self, context: object) -> None:
        self.calls.append("initialize")

    def version(self) -> str:
        return "1.2.3"

    def start(self, props: Mapping[str, str]) -> None:
        self.calls.append(f"start:{props['k']}")
        if self.fail_on == "start":
            raise ValueError("cannot start")

    def task_class(self) -> type:
        return FakeTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"n": str(i)} for i in range(max_tasks)]

    def stop(self):  # type: ignore[no-untyped-def]
        self.calls.append("stop")
        if self.fail_on == "stop":
            raise RuntimeError("cannot stop")
        if self.hang_on_stop:
            return asyncio.sleep(3600)
        if self.async_stop:
            return asyncio.sleep(0)
        return None


async def test_started_paused_stopped_resumed_and_shut_down() -> None:
    reporter = RecordingReporter()
    plugin = FakeConnector(async_stop=True)
    wc = WorkerConnector("c", plugin, {"k": "v"}, object(), reporter)
    assert await wc.start(TargetState.STARTED)
    assert await wc.task_configs(2) == [
        {"n": "0", TASK_CLASS_CONFIG: "org.example.FakeTask"},
        {"n": "1", TASK_CLASS_CONFIG: "org.example.FakeTask"},
    ]
    assert await wc.transition_to(TargetState.PAUSED)
    assert await wc.transition_to(TargetState.STOPPED)
    assert await wc.transition_to(TargetState.STARTED)
    await wc.shutdown()
    await wc.shutdown()
    assert plugin.calls == ["initialize", "start:v", "stop", "start:v", "stop"]
    assert reporter.states("c") == [
        State.RUNNING,
        State.PAUSED,
        State.STOPPED,
        State.RUNNING,
        State.UNASSIGNED,
    ]


async def test_a_connector_created_stopped_is_never_started() -> None:
    reporter = RecordingReporter()
    plugin = FakeConnector()
    wc = WorkerConnector("c", plugin, {"k": "v"}, object(), reporter)
    assert await wc.start(TargetState.STOPPED)
    await wc.shutdown()
    assert plugin.calls == ["initialize"]
    assert reporter.states("c") == [State.STOPPED, State.UNASSIGNED]


async def test_failures_are_reported_with_the_trace_and_stick() -> None:
    reporter = RecordingReporter()
    wc = WorkerConnector("c", FakeConnector(fail_on="start"), {"k": "v"}, object(), reporter)
    assert not await wc.start(TargetState.STARTED)
    assert wc.failed and not wc.running
    item, state, trace = reporter.reports[-1]
    assert (item, state) == ("c", State.FAILED) and trace and "ValueError: cannot start" in trace
    assert not await wc.transition_to(TargetState.STARTED), "a failed connector stays failed until restarted"
    await wc.shutdown()
    assert reporter.states("c") == [State.FAILED], "no UNASSIGNED over a FAILED status"


async def test_a_stop_failure_fails_the_connector() -> None:
    reporter = RecordingReporter()
    wc = WorkerConnector("c", FakeConnector(fail_on="stop"), {"k": "v"}, object(), reporter)
    await wc.start(TargetState.STARTED)
    assert not await wc.transition_to(TargetState.PAUSED)
    assert reporter.states("c") == [State.RUNNING, State.FAILED]


async def test_a_hanging_stop_is_bounded() -> None:
    reporter = RecordingReporter()
    wc = WorkerConnector(
        "c", FakeConnector(hang_on_stop=True), {"k": "v"}, object(), reporter, stop_timeout_s=0.05
    )
    await wc.start(TargetState.STARTED)
    await asyncio.wait_for(wc.shutdown(), 2)
    assert reporter.states("c") == [State.RUNNING, State.UNASSIGNED]


class SlowStartingConnector(FakeConnector):
    """A plugin whose start opens something and then waits (an async start, e.g. MirrorMaker's)."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = asyncio.Event()

    async def start(self, props: Mapping[str, str]) -> None:  # type: ignore[override]
        self.calls.append("start")
        self.opened.set()
        await asyncio.sleep(3600)


async def test_a_start_cancelled_by_a_stop_lets_the_plugin_release_what_it_opened() -> None:
    plugin = SlowStartingConnector()
    wc = WorkerConnector("c", plugin, {"k": "v"}, object(), RecordingReporter())
    starting = asyncio.create_task(wc.start(TargetState.STARTED))
    await plugin.opened.wait()
    starting.cancel()
    try:
        await starting
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the cancelled start returned")
    assert plugin.calls == ["initialize", "start", "stop"]
    assert not wc.running
    await wc.shutdown()
    assert plugin.calls == ["initialize", "start", "stop"], "shutdown does not stop the plugin twice"
