"""WorkerSourceTask without Kafka: a producer batch whose future was cancelled, and the conditions a task
reports while it keeps running (``SourceTaskContext.conditions``)."""

from __future__ import annotations

import asyncio

from pyconnect.api.converters.string import StringConverter
from pyconnect.api.source import SourceRecord, SourceTask, SourceTaskContext
from pyconnect.kafka.batch_sender import SentBatch
from pyconnect.protocol.internal_records import State
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.submitted_records import DispatchedRuns


class NoProducer:
    """Stands in for the task's producer: nothing is sent here."""


def source_task(reporter: RecordingReporter) -> WorkerSourceTask:
    converter = StringConverter()
    converter.configure({}, False)
    return WorkerSourceTask(
        ConnectorTaskId("c", 0),
        SourceTask(),
        {},
        SourceTaskContext({}, offset_storage_reader=None),  # type: ignore[arg-type]
        producer=NoProducer(),
        key_converter=converter,
        value_converter=converter,
        header_converter=None,
        write_offsets=lambda offsets: asyncio.sleep(0),
        reporter=reporter,
        calls=PluginCalls(),
    )


async def test_a_cancelled_batch_future_fails_the_send_without_raising_in_the_callback() -> None:
    task = source_task(RecordingReporter())
    kept = [SourceRecord({"p": 0}, {"o": i}, "t", 0, None, None, None, "v") for i in range(3)]
    runs = DispatchedRuns(task._submitted, kept)
    future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    future.cancel()
    task._on_batch_done(future, batch=SentBatch("t", 0, [0, 1, 2], future), kept=kept, tracked=runs)
    assert isinstance(task._send_error, asyncio.CancelledError)
    assert task._submitted.in_flight == 3  # nothing acknowledged: the offsets never commit


def test_conditions_are_the_running_tasks_trace_until_cleared() -> None:
    reporter = RecordingReporter()
    task = source_task(reporter)
    board = task._context.conditions
    assert board is not None and board is task.conditions
    board.set("SOURCE_UNREACHABLE", "source cluster A has answered no fetch", cluster="A", client="c-0")
    assert reporter.reports == []  # before RUNNING: kept for the RUNNING report
    task._report_running()
    board.set("SOURCE_UNREACHABLE", "source cluster A has answered no fetch", cluster="A", client="c-0")
    board.clear("SOURCE_UNREACHABLE")
    item = ConnectorTaskId("c", 0)
    assert [(r[0], r[1]) for r in reporter.reports] == [(item, State.RUNNING), (item, State.RUNNING)]
    first_trace = reporter.reports[0][2]
    assert first_trace is not None
    assert first_trace.splitlines()[0] == "SOURCE_UNREACHABLE: source cluster A has answered no fetch"
    assert "cluster A, client c-0" in first_trace
    assert reporter.reports[1][2] is None


def test_a_tasks_conditions_leave_the_workers_registry_when_it_is_released() -> None:
    from pyconnect.metrics.registry import MetricsHub

    hub = MetricsHub()
    converter = StringConverter()
    converter.configure({}, False)
    task = WorkerSourceTask(
        ConnectorTaskId("c", 0),
        SourceTask(),
        {},
        SourceTaskContext({}, offset_storage_reader=None, metrics=hub),  # type: ignore[arg-type]
        producer=NoProducer(),
        key_converter=converter,
        value_converter=converter,
        header_converter=None,
        write_offsets=lambda offsets: asyncio.sleep(0),
        reporter=RecordingReporter(),
        calls=PluginCalls(),
    )
    task.conditions.set("ACL_DENIED", "READ on t refused", subject="t", cluster="A")
    assert [(c.code, c.connector, c.task) for c in hub.conditions.snapshot()] == [("ACL_DENIED", "c", 0)]
    task._forget_conditions()
    assert hub.conditions.snapshot() == []
