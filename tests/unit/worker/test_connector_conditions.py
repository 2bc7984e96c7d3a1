"""A connector's conditions: a board of its own on its context, shown as its RUNNING trace, cleared by a
stop and removed from the worker's registry by the shutdown (pyconnect.worker.worker_connector)."""

from __future__ import annotations

from types import SimpleNamespace

from pyconnect.conditions import ConditionRegistry
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.worker_connector import WorkerConnector
from tests.unit.worker.test_worker_connector import FakeConnector


def running_traces(reporter: RecordingReporter) -> list[str | None]:
    return [trace for _, state, trace in reporter.reports if state == State.RUNNING]


async def test_conditions_become_the_running_trace_until_cleared() -> None:
    registry, reporter, context = ConditionRegistry(lambda: 1_000), RecordingReporter(), SimpleNamespace()
    wc = WorkerConnector("c", FakeConnector(), {"k": "v"}, context, reporter, conditions=registry)
    assert context.conditions is wc.conditions
    assert await wc.start(TargetState.STARTED)
    context.conditions.set("CONFIG_DRIFT", "target B refuses message.format.version", subject="A.t")
    context.conditions.set("CONFIG_DRIFT", "target B refuses message.format.version", subject="A.t")
    assert [c.connector for c in registry.snapshot()] == ["c"]
    assert registry.snapshot()[0].task is None
    context.conditions.clear("CONFIG_DRIFT")
    traces = running_traces(reporter)
    assert traces[0] is None
    assert traces[1] is not None and traces[1].startswith("CONFIG_DRIFT: target B refuses")
    assert traces[2:] == [None]


async def test_a_pause_clears_the_board_without_reporting_running() -> None:
    registry, reporter, context = ConditionRegistry(), RecordingReporter(), SimpleNamespace()
    wc = WorkerConnector("c", FakeConnector(), {"k": "v"}, context, reporter, conditions=registry)
    assert await wc.start(TargetState.STARTED)
    context.conditions.set("CONFIG_DRIFT", "refused", subject="A.t")
    assert await wc.transition_to(TargetState.PAUSED)
    assert registry.snapshot() == []
    assert reporter.states("c") == [State.RUNNING, State.RUNNING, State.PAUSED]


async def test_the_shutdown_removes_the_board_from_the_registry() -> None:
    registry, reporter, context = ConditionRegistry(), RecordingReporter(), SimpleNamespace()
    wc = WorkerConnector("c", FakeConnector(), {"k": "v"}, context, reporter, conditions=registry)
    assert await wc.start(TargetState.STARTED)
    context.conditions.set("CONFIG_DRIFT", "refused", subject="A.t")
    await wc.shutdown()
    assert registry.snapshot() == []
    context.conditions.set("CONFIG_DRIFT", "late", subject="A.u")
    assert registry.snapshot() == []
    assert reporter.states("c")[-1] == State.UNASSIGNED


async def test_without_a_registry_the_context_is_left_alone() -> None:
    context = SimpleNamespace()
    wc = WorkerConnector("c", FakeConnector(), {"k": "v"}, context, RecordingReporter())
    assert wc.conditions is None and not hasattr(context, "conditions")
