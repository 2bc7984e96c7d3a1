"""WorkerSinkTask's loop with a fake consumer (no Kafka): batches, commits, retries, rebalances, failure.

The fake stands in for :class:`pyconnect.kafka.sink_consumer.SinkConsumer` only; what Kafka does with
the group is covered by tests/integration/test_sink_tasks.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pyconnect.api.converters import StringConverter
from pyconnect.api.converters.header import SimpleHeaderConverter
from pyconnect.api.sink import SinkRecord, SinkTask, TopicPartition
from pyconnect.errors import RetriableError
from pyconnect.kafka.sink_consumer import FetchedRecord
from pyconnect.metrics.connect import ConnectMetrics
from pyconnect.metrics.registry import MetricsHub
from pyconnect.metrics.sink_task import SinkTaskMetrics
from pyconnect.protocol.internal_records import State
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.sink_parts import SinkTaskParts
from pyconnect.worker.sink_task import WorkerSinkTask, WorkerSinkTaskContext
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
TASK = ConnectorTaskId("s", 0)


class FakeConsumer:
    """Hands out queued batches; records the calls the task makes."""

    def __init__(self, partitions: Sequence[TopicPartition]) -> None:
        self.partitions = set(partitions)
        self.batches: list[list[FetchedRecord]] = []
        self.commits: list[dict[TopicPartition, int]] = []
        self.paused: set[TopicPartition] = set()
        self.seeks: list[dict[TopicPartition, int]] = []
        self.stopped = False
        self.calls: list[str] = []

    async def start(self, on_assigned: Any, on_revoked: Any) -> None:
        self.on_assigned, self.on_revoked = on_assigned, on_revoked
        await on_assigned(sorted(self.partitions))

    async def fetch(self, timeout_s: float) -> list[FetchedRecord]:
        if self.batches and not self.paused:
            return self.batches.pop(0)
        await asyncio.sleep(min(timeout_s, 0.01))
        return []

    def assignment(self) -> set[TopicPartition]:
        return set(self.partitions)

    def seek(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.seeks.append(dict(offsets))

    def pause(self, partitions: Collection[TopicPartition]) -> None:
        self.paused |= set(partitions)

    def resume(self, partitions: Collection[TopicPartition]) -> None:
        self.paused -= set(partitions)

    async def commit(self, offsets: Mapping[TopicPartition, int], timeout_s: float | None = None) -> None:
        self.calls.append("commit")
        self.commits.append(dict(offsets))

    async def stop(self) -> None:
        self.stopped = True


class RecordingSink(SinkTask):
    def __init__(self, consumer: FakeConsumer) -> None:
        self.consumer = consumer
        self.batches: list[list[SinkRecord]] = []
        self.retries_left = 0
        self.fail = False
        self.pre_commits: list[dict[TopicPartition, int]] = []
        self.opened: list[list[TopicPartition]] = []
        self.closed: list[list[TopicPartition]] = []
        self.stopped = False

    def version(self) -> str:
        return "1"

    async def start(self, props: Mapping[str, str]) -> None:
        return None

    async def put(self, records: Sequence[SinkRecord]) -> None:
        if self.fail and records:
            raise ValueError("sink broke")
        if records and self.retries_left:
            self.retries_left -= 1
            self.context.timeout(10)
            raise RetriableError("later")
        if records:
            self.batches.append(list(records))

    async def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        self.consumer.calls.append("pre_commit")
        self.pre_commits.append(dict(offsets))
        return offsets

    async def open(self, partitions: Collection[TopicPartition]) -> None:
        self.opened.append(list(partitions))

    async def close(self, partitions: Collection[TopicPartition]) -> None:
        self.consumer.calls.append("close")
        self.closed.append(list(partitions))

    async def stop(self) -> None:
        self.stopped = True


def fetched(partition: int, offsets: range, value: str = "v") -> list[FetchedRecord]:
    return [
        FetchedRecord("t", partition, o, 1000 + o, "CreateTime", b"k", f"{value}{o}".encode(), [("h", b"x")])
        for o in offsets
    ]


def runner(
    consumer: FakeConsumer, sink: RecordingSink, reporter: RecordingReporter, **extra: Any
) -> WorkerSinkTask:
    key, value = StringConverter(), StringConverter()
    key.configure({}, True)
    value.configure({}, False)
    headers = SimpleHeaderConverter()
    headers.configure({})
    errors = extra.pop("errors", None) or RetryWithTolerance()
    return WorkerSinkTask(
        TASK,
        sink,
        {"topics": "t"},
        WorkerSinkTaskContext({"topics": "t"}),
        SinkTaskParts(
            consumer,  # type: ignore[arg-type]
            TaskConverters(key, value, headers),
            reporter,
            errors=errors,
            calls=PluginCalls(),
            **extra,
        ),
    )


async def wait_until(probe: Any, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not probe():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def test_one_put_per_fetched_batch_and_commit_of_what_was_put() -> None:
    consumer = FakeConsumer([TP0, TP1])
    sink = RecordingSink(consumer)
    reporter = RecordingReporter()
    consumer.batches = [fetched(0, range(0, 3)) + fetched(1, range(7, 9))]
    task = runner(consumer, sink, reporter, offset_flush_interval_s=0.05)
    task.start()
    await wait_until(lambda: consumer.commits)
    assert len(sink.batches) == 1 and [r.value for r in sink.batches[0]] == ["v0", "v1", "v2", "v7", "v8"]
    first = sink.batches[0][0]
    assert (first.key, first.kafka_offset, first.timestamp, first.timestamp_type) == (
        "k",
        0,
        1000,
        "CreateTime",
    )
    assert [(h.key, h.value) for h in first.headers] == [("h", "x")]
    assert consumer.commits[0] == {TP0: 3, TP1: 9}
    assert sink.opened == [[TP0, TP1]]
    task.stop()
    assert await task.wait_stopped(5)
    assert sink.stopped and consumer.stopped
    assert reporter.states(TASK) == [State.RUNNING, State.UNASSIGNED]


async def test_a_retriable_put_delivers_the_same_batch_again() -> None:
    consumer = FakeConsumer([TP0])
    sink = RecordingSink(consumer)
    sink.retries_left = 2
    consumer.batches = [fetched(0, range(5))]
    task = runner(consumer, sink, RecordingReporter(), offset_flush_interval_s=60)
    task.start()
    await wait_until(lambda: sink.batches)
    assert [r.kafka_offset for r in sink.batches[0]] == [0, 1, 2, 3, 4]
    assert sink.retries_left == 0 and not consumer.paused  # paused while retrying, resumed after
    task.stop()
    assert await task.wait_stopped(5)
    assert consumer.commits == [{TP0: 5}]  # the final commit on stop
    assert consumer.calls == ["pre_commit", "close", "commit"]  # Java's order when closing


async def test_revocation_commits_and_closes_only_the_revoked_partitions() -> None:
    consumer = FakeConsumer([TP0, TP1])
    sink = RecordingSink(consumer)
    consumer.batches = [fetched(0, range(2)) + fetched(1, range(4))]
    task = runner(consumer, sink, RecordingReporter(), offset_flush_interval_s=60)
    task.start()
    await wait_until(lambda: sink.batches)
    await consumer.on_revoked([TP1])
    consumer.partitions = {TP0}
    assert sink.closed == [[TP1]]
    assert sink.pre_commits[-1] == {TP1: 4}
    assert consumer.commits == [{TP1: 4}]
    task.stop()
    assert await task.wait_stopped(5)
    assert consumer.commits[-1] == {TP0: 2}


async def test_a_failing_put_fails_the_task_and_closes_its_clients() -> None:
    consumer = FakeConsumer([TP0])
    sink = RecordingSink(consumer)
    sink.fail = True
    consumer.batches = [fetched(0, range(3))]
    reporter = RecordingReporter()
    task = runner(consumer, sink, reporter)
    task.start()
    await wait_until(lambda: not task.running)
    assert reporter.states(TASK) == [State.RUNNING, State.FAILED]
    trace = reporter.reports[-1][2]
    assert trace is not None and trace.startswith("ValueError: sink broke")
    assert sink.stopped and consumer.stopped
    assert consumer.commits == []  # nothing was put, nothing committed


async def test_conversion_errors_are_skipped_under_tolerance_all() -> None:
    consumer = FakeConsumer([TP0])
    sink = RecordingSink(consumer)
    consumer.batches = [fetched(0, range(3))]
    task = runner(
        consumer,
        sink,
        RecordingReporter(),
        errors=RetryWithTolerance(tolerate_all=True),
        offset_flush_interval_s=60,
    )

    class Picky(StringConverter):
        def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> Any:
            if value == b"v1":
                raise ValueError("bad record")
            return super().to_connect_data(topic, headers, value)

    picky = Picky()
    picky.configure({}, False)
    task._value_converter = picky
    task.start()
    await wait_until(lambda: sink.batches)
    assert [r.value for r in sink.batches[0]] == ["v0", "v2"] and task.records_skipped == 1
    task.stop()
    assert await task.wait_stopped(5)
    assert consumer.commits == [{TP0: 3}]  # the skipped record's offset commits with its neighbours


async def test_sink_task_metrics() -> None:
    hub = MetricsHub()
    metrics = SinkTaskMetrics(ConnectMetrics("w", hub), "s", 0)
    consumer = FakeConsumer([TP0, TP1])
    sink = RecordingSink(consumer)
    consumer.batches = [fetched(0, range(3)) + fetched(1, range(2))]
    task = runner(consumer, sink, RecordingReporter(), offset_flush_interval_s=0.05, sink_metrics=metrics)
    task.start()
    await wait_until(lambda: consumer.commits)
    task.stop()
    assert await task.wait_stopped(5)
    got = {r.name.name: r.value for r in hub.read() if r.name.group == "sink-task-metrics"}
    assert got["sink-record-read-total"] == 5 and got["sink-record-send-total"] == 5
    assert got["partition-count"] == 2
    assert got["offset-commit-completion-total"] >= 1 and got["offset-commit-seq-no"] >= 1
    assert got["sink-record-active-count"] == 0  # everything put was committed
    metrics.close()


def test_insert_field_adds_a_sink_records_offset() -> None:
    from pyconnect.transforms.fields import InsertFieldValue

    transform = InsertFieldValue()
    transform.configure({"offset.field": "off", "topic.field": "t"})
    record = SinkRecord("topic", 0, None, None, None, {"a": 1}, 42)
    out = transform.apply(record)  # type: ignore[arg-type]
    assert out is not None and out.value == {"a": 1, "off": 42, "t": "topic"}
    assert isinstance(out, SinkRecord) and out.kafka_offset == 42
