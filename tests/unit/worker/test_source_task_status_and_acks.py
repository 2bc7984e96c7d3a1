"""A source task without Kafka: a producer batch whose future was cancelled, and the conditions a task
reports while it keeps running (``SourceTaskContext.conditions``, :mod:`pyconnect.worker.source_status`)."""

from __future__ import annotations

import asyncio

from pyconnect.api.converters.string import StringConverter
from pyconnect.api.source import SourceRecord, SourceTask, SourceTaskContext
from pyconnect.metrics.registry import MetricsHub
from pyconnect.protocol.internal_records import State
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.source_commits import OffsetCommits
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_status import SourceTaskStatus
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters
from tests.unit.worker.test_source_task_raw_batches import FakeProducer

TASK = ConnectorTaskId("c", 0)


async def test_a_cancelled_batch_future_fails_the_send_without_raising_in_the_callback() -> None:
    converter = StringConverter()
    converter.configure({}, False)
    producer = FakeProducer()
    task = WorkerSourceTask(
        TASK,
        SourceTask(),
        {},
        SourceTaskContext({}, offset_storage_reader=None),  # type: ignore[arg-type]
        SourceTaskParts(producer, TaskConverters(converter, converter, None), RecordingReporter()),
        OffsetCommits(lambda offsets: asyncio.sleep(0)),
    )
    kept = [SourceRecord({"p": 0}, {"o": i}, "t", 0, None, None, None, "v") for i in range(3)]
    await task.dispatcher.dispatch(kept)
    ((_builder, _topic, _partition, future),) = producer.sent
    raised: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: raised.append(context))
    try:
        future.cancel()
        for _ in range(2):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert raised == []
    assert isinstance(task.send_error, asyncio.CancelledError)
    assert task.dispatcher.submitted.in_flight == 3  # nothing acknowledged: the offsets never commit


def test_conditions_are_the_running_tasks_trace_until_cleared() -> None:
    reporter = RecordingReporter()
    status = SourceTaskStatus(TASK, reporter, SourceTaskContext({}, offset_storage_reader=None), lambda: True)  # type: ignore[arg-type]
    board = status.context.conditions
    assert board is not None and board is status.conditions
    board.set("SOURCE_UNREACHABLE", "source cluster A has answered no fetch", cluster="A", client="c-0")
    assert reporter.reports == []  # before RUNNING: kept for the RUNNING report
    status.running()
    board.set("SOURCE_UNREACHABLE", "source cluster A has answered no fetch", cluster="A", client="c-0")
    board.clear("SOURCE_UNREACHABLE")
    assert [(r[0], r[1]) for r in reporter.reports] == [(TASK, State.RUNNING), (TASK, State.RUNNING)]
    first_trace = reporter.reports[0][2]
    assert first_trace is not None
    assert first_trace.splitlines()[0] == "SOURCE_UNREACHABLE: source cluster A has answered no fetch"
    assert "cluster A, client c-0" in first_trace
    assert reporter.reports[1][2] is None


def test_a_tasks_conditions_leave_the_workers_registry_when_it_is_released() -> None:
    hub = MetricsHub()
    context = SourceTaskContext({}, offset_storage_reader=None, metrics=hub)  # type: ignore[arg-type]
    status = SourceTaskStatus(TASK, RecordingReporter(), context, lambda: True)
    status.conditions.set("ACL_DENIED", "READ on t refused", subject="t", cluster="A")
    assert [(c.code, c.connector, c.task) for c in hub.conditions.snapshot()] == [("ACL_DENIED", "c", 0)]
    status.forget()
    status.forget()  # idempotent
    assert hub.conditions.snapshot() == []
