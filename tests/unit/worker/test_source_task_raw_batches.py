"""A source task's dispatch of raw record batches (pyconnect.api.source): order, bookkeeping and hooks,
against a fake producer that records what it is handed (the Kafka side is tested on real brokers in
tests/integration/test_mirror_raw_batches.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka.producer.message_accumulator import BatchBuilder

from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.data import BYTES_SCHEMA
from pyconnect.api.source import (
    RawBatchTarget,
    RawRecordBatch,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.source_commits import OffsetCommits
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import StatusReporter
from pyconnect.worker.task_converters import TaskConverters
from tests.unit.kafka.test_record_batches import build, placed

PARTITION = {"topic": "t", "partition": 0}


class _Cluster:
    def partitions_for_topic(self, topic: str) -> set[int]:
        return {0, 1}


class _Client:
    cluster = _Cluster()

    def __init__(self) -> None:
        self._topics: set[str] = set()

    async def set_topics(self, topics: set[str]) -> None:
        self._topics = set(topics)


class FakeProducer:
    """What BatchSender and RawBatch use of an AIOKafkaProducer; every batch handed over is kept with
    its future, resolved by the test."""

    def __init__(self) -> None:
        self.client = _Client()
        self._compression_type = None
        self._max_request_size = 1_048_576
        self._txn_manager = None
        self.sent: list[tuple[Any, str, int, asyncio.Future[Any]]] = []

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(16384, 0, is_transactional=False, key_serializer=None, value_serializer=None)

    async def send_batch(self, builder: Any, topic: str, *, partition: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.sent.append((builder, topic, partition, future))
        return future


class _Metadata:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class RawTask(SourceTask):
    def __init__(self) -> None:
        self.raw_acks: list[tuple[int, int]] = []
        self.batch_acks: list[tuple[list[int], int]] = []
        self.accepted: RawBatchTarget | None = None

    def accept_raw_batches(self, target: RawBatchTarget | None) -> bool:
        self.accepted = target
        return target is not None

    def commit_raw_batch(self, batch: RawRecordBatch, base_offset: int) -> None:
        self.raw_acks.append((batch.first_offset, base_offset))

    def commit_record_batch(
        self, records: Sequence[SourceRecord], topic: str, partition: int, base_offset: int
    ) -> None:
        self.batch_acks.append(([r.source_offset["o"] for r in records], base_offset))  # type: ignore[index]


class _Reporter(StatusReporter):
    def __init__(self) -> None:
        pass

    def report(self, *args: Any, **kwargs: Any) -> None:
        return None


async def _callbacks() -> None:
    """Two loop turns: the producer's future settles the batch future the sender returned."""
    for _ in range(2):
        await asyncio.sleep(0)


def _record(offset: int) -> SourceRecord:
    return SourceRecord(PARTITION, {"o": offset}, "out", 0, BYTES_SCHEMA, b"k", BYTES_SCHEMA, b"v")


def _raw(first: int) -> RawRecordBatch:
    data = placed(build(), first)  # four records
    return RawRecordBatch(PARTITION, {"o": first + 3}, "out", 0, memoryview(data), 4, first, 0, 0)


def _runner(
    task: RawTask, producer: FakeProducer, written: list[Mapping[str, Any]], *, tolerate_all: bool = False
) -> WorkerSourceTask:
    async def write_offsets(offsets: Mapping[str, Any]) -> None:
        written.append(dict(offsets))

    converter = ByteArrayConverter()
    runner = WorkerSourceTask(
        ConnectorTaskId("c", 0),
        task,
        {},
        SourceTaskContext({}, offset_storage_reader=None),  # type: ignore[arg-type]
        SourceTaskParts(
            producer,
            TaskConverters(converter, converter, converter),
            _Reporter(),
            errors=RetryWithTolerance(tolerate_all=tolerate_all),
        ),
        OffsetCommits(write_offsets),
    )
    runner.task.accept_raw_batches(runner.dispatcher.raw_target)
    return runner


async def test_raw_batches_go_in_poll_order_and_commit_once_every_batch_before_them_is_acknowledged() -> None:
    task, producer, written = RawTask(), FakeProducer(), []
    runner = _runner(task, producer, written)
    assert task.accepted == RawBatchTarget(0, 1_048_576)
    await runner.dispatcher.dispatch([_record(9), _raw(10), _record(14), _record(15), _raw(16)])
    kinds = [(type(builder).__name__, builder.record_count()) for builder, *_ in producer.sent]
    assert kinds == [("BatchBuilder", 1), ("RawBatch", 4), ("BatchBuilder", 2), ("RawBatch", 4)]
    assert runner.dispatcher.submitted.in_flight == 11
    for index in (3, 2, 1):  # acknowledged out of order, the first last
        producer.sent[index][3].set_result(_Metadata(100 + index))
    await _callbacks()
    assert runner.dispatcher.submitted.in_flight == 1  # the first record's batch
    assert runner.dispatcher.submitted.committable().offsets == {}
    producer.sent[0][3].set_result(_Metadata(100))
    await _callbacks()
    committable = runner.dispatcher.submitted.committable()
    assert list(committable.offsets.values()) == [(PARTITION, {"o": 19})]
    assert runner.records_written == 11 and runner.raw_batches_written == 2
    assert task.raw_acks == [(16, 103), (10, 101)]
    assert task.batch_acks == [([14, 15], 102), ([9], 100)]


async def test_a_failed_raw_batch_fails_the_task_or_is_skipped_whole_under_tolerance_all() -> None:
    for tolerate_all in (False, True):
        task, producer = RawTask(), FakeProducer()
        runner = _runner(task, producer, [], tolerate_all=tolerate_all)
        await runner.dispatcher.dispatch([_raw(0)])
        producer.sent[0][3].set_exception(RuntimeError("refused"))
        await _callbacks()
        if tolerate_all:
            assert runner.send_error is None and runner.records_skipped == 4
            assert runner.dispatcher.submitted.in_flight == 0
            assert list(runner.dispatcher.submitted.committable().offsets.values()) == [(PARTITION, {"o": 3})]
        else:
            assert isinstance(runner.send_error, RuntimeError) and runner.dispatcher.submitted.in_flight == 4
        assert task.raw_acks == []


async def test_a_raw_batch_cancelled_by_a_stopping_producer_fails_or_is_skipped_without_raising() -> None:
    """A stopping producer cancels the futures of its queued batches: the callback must take that
    as a failed send (``exception()`` of a cancelled future raises), never raise in the event loop."""
    for tolerate_all in (False, True):
        task, producer = RawTask(), FakeProducer()
        runner = _runner(task, producer, [], tolerate_all=tolerate_all)
        await runner.dispatcher.dispatch([_raw(0)])
        raised: list[dict[str, Any]] = []
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context, seen=raised: seen.append(context))
        try:
            producer.sent[0][3].cancel()
            await _callbacks()
        finally:
            loop.set_exception_handler(None)
        assert raised == []
        if tolerate_all:
            assert runner.send_error is None and runner.records_skipped == 4
            assert runner.dispatcher.submitted.in_flight == 0
        else:
            assert isinstance(runner.send_error, asyncio.CancelledError)
            assert runner.dispatcher.submitted.in_flight == 4
        assert task.raw_acks == []
