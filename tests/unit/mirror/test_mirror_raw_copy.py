"""MirrorSourceTask's raw path decisions (connectors.mirror.raw_copy) and the worker's permission
(pyconnect.worker.raw_batches), over batches built by aiokafka's own v2 builder."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from connectors.mirror import raw_copy
from connectors.mirror.policy import DefaultReplicationPolicy
from connectors.mirror.source_task import MirrorSourceTask
from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.converters.header import SimpleHeaderConverter
from pyconnect.api.converters.json_converter import JsonConverter
from pyconnect.api.source import (
    MemoryOffsetStorageReader,
    RawBatchTarget,
    RawRecordBatch,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
)
from pyconnect.kafka import record_batches as rb
from pyconnect.kafka.raw_batches_io import RawFetch
from pyconnect.kafka.raw_source_fetch import FetchedPartition
from pyconnect.worker.raw_batches import raw_batch_target, records_only_reason
from tests.unit.kafka.test_record_batches import RECORDS, T0, build, log_append_time, placed

SOURCE = {"cluster": "A", "topic": "t", "partition": 0}
APPEND_TIME = T0 + 60_000


def take(data: bytes, position: int, codec: int = rb.Codec.NONE, limit: int = 1 << 20) -> raw_copy.Taken:
    return raw_copy.take(
        RawFetch(0, 100, 100, [], data),
        position,
        RawBatchTarget(codec, limit),
        read_committed=False,
        remote="A.t",
        partition=0,
        source_partition=SOURCE,
    )


def test_whole_batches_become_raw_items_with_their_offsets_and_timestamps() -> None:
    data = placed(build(), 10) + placed(build(), 14)
    taken = take(data, 10)
    assert [type(i) for i in taken.items] == [RawRecordBatch, RawRecordBatch]
    first, second = taken.items
    assert isinstance(first, RawRecordBatch) and isinstance(second, RawRecordBatch)
    assert (first.first_offset, first.record_count, first.source_offset) == (10, 4, {"offset": 13})
    assert (second.first_offset, second.source_offset) == (14, {"offset": 17})
    assert bytes(first.data) == data[: len(data) // 2]
    assert (first.first_timestamp, first.max_timestamp) == (T0, T0 + 21)
    assert (first.topic, first.kafka_partition, first.source_partition) == ("A.t", 0, SOURCE)
    assert (taken.next_position, taken.records, taken.copied_batches, taken.decoded_batches) == (18, 8, 2, 0)


def test_refused_batches_are_decoded_from_the_position_as_the_record_path_reads_them() -> None:
    gaps = placed(build(offsets=[0, 2, 3, 5]), 20)  # compaction gaps
    log_append = placed(log_append_time(build(rb.Codec.LZ4), APPEND_TIME), 26)  # compressed: decoded
    taken = take(gaps + log_append, 23)  # a batch starting before the position: offsets >= 23 only
    records = [i for i in taken.items if isinstance(i, SourceRecord)]
    assert len(records) == len(taken.items) == 2 + 4
    assert [r.source_offset for r in records] == [{"offset": o} for o in (23, 25, 26, 27, 28, 29)]
    assert [r.key for r in records[2:]] == [k for k, _, _ in RECORDS]
    assert {r.timestamp for r in records[2:]} == {APPEND_TIME}  # LogAppendTime: the batch's max timestamp
    assert [(h.key, h.value) for h in records[2].headers] == RECORDS[0][2]
    assert (taken.next_position, taken.copied_batches, taken.decoded_batches) == (30, 0, 2)


def test_an_uncompressed_log_append_time_batch_is_restamped_and_copied_as_one_batch() -> None:
    log_append = placed(log_append_time(build(), APPEND_TIME), 26)
    taken = take(log_append, 26)
    (batch,) = taken.items
    assert isinstance(batch, RawRecordBatch)
    assert (batch.first_offset, batch.record_count, batch.source_offset) == (26, 4, {"offset": 29})
    assert (batch.first_timestamp, batch.max_timestamp) == (APPEND_TIME, APPEND_TIME)
    assert bytes(batch.data) == bytes(rb.restamp(log_append, rb.split(log_append).batches[0]))
    assert taken.timestamps == [APPEND_TIME, APPEND_TIME] and taken.size == len(batch.data)
    assert (taken.next_position, taken.copied_batches, taken.decoded_batches) == (30, 1, 0)


def test_another_codec_or_a_batch_too_large_for_the_producer_is_decoded() -> None:
    lz4 = placed(build(rb.Codec.LZ4), 0)
    assert take(lz4, 0, rb.Codec.LZ4).copied_batches == 1
    assert take(lz4, 0, rb.Codec.NONE).decoded_batches == 1
    plain = placed(build(), 0)
    assert take(plain, 0, limit=len(plain) - 1).decoded_batches == 1
    assert take(plain, 0, limit=len(plain)).copied_batches == 1


def test_the_connector_key_is_true_by_default_and_validated() -> None:
    assert raw_copy.enabled(None) and raw_copy.enabled(" TRUE ") and not raw_copy.enabled("false")
    assert raw_copy.enabled_error("yes") is not None and raw_copy.enabled_error("false") is None
    with pytest.raises(ValueError, match=raw_copy.RAW_BATCHES_CONFIG):
        raw_copy.enabled("1")


class _Producer:
    def __init__(self, compression: str | None = None) -> None:
        self._compression_type = compression
        self._max_request_size = 1_048_576

    def send_batch(self, *args: Any) -> None:
        raise AssertionError("not sent here")


def test_the_worker_allows_raw_batches_only_with_byte_array_converters_and_no_transformation() -> None:
    task = MirrorSourceTask()
    raw = ByteArrayConverter()
    assert raw_batch_target(task, _Producer(), (raw, raw, raw), None) == RawBatchTarget(0, 1_048_576)
    assert raw_batch_target(task, _Producer("zstd"), (raw, raw, raw), None) == RawBatchTarget(4, 1_048_576)
    # the default header converter writes a BYTES header as base64 text: not the bytes as fetched
    assert raw_batch_target(task, _Producer(), (raw, raw, SimpleHeaderConverter()), None) is None
    assert raw_batch_target(task, _Producer(), (raw, raw, raw), ["a transformation"]) is None
    assert raw_batch_target(SourceTask(), _Producer(), (raw, raw, raw), None) is None  # does not accept them


def test_the_reason_for_records_only_names_the_converter_or_the_transformations() -> None:
    raw = ByteArrayConverter()
    assert records_only_reason((raw, raw, raw), None) is None
    assert records_only_reason((raw, raw, raw), []) is None  # an empty chain
    header = records_only_reason((raw, raw, SimpleHeaderConverter()), None) or ""
    assert (
        header.startswith("header.converter is ")
        and "SimpleHeaderConverter, not ByteArrayConverter" in header
    )
    assert (records_only_reason((raw, JsonConverter(), raw), None) or "").startswith("value.converter is ")
    assert records_only_reason((raw, raw, raw), ["a transformation"]) == "the connector has transformations"


def test_the_mirror_task_takes_raw_batches_only_when_its_connector_key_turns_them_on() -> None:
    target = RawBatchTarget(0, 1_048_576)
    for config, wanted in (
        ({}, True),
        ({raw_copy.RAW_BATCHES_CONFIG: "true"}, True),
        ({raw_copy.RAW_BATCHES_CONFIG: "false"}, False),
    ):
        task = MirrorSourceTask()
        task.initialize(SourceTaskContext(config, MemoryOffsetStorageReader()))
        assert task.accept_raw_batches(target) is wanted
        assert task.accept_raw_batches(None) is False


def test_max_poll_records_stops_taking_whole_batches_and_the_position_stops_after_the_last_taken() -> None:
    data = placed(build(), 10) + placed(build(), 14) + placed(build(), 18)

    def capped(budget: int | None) -> raw_copy.Taken:
        return raw_copy.take(
            RawFetch(0, 100, 100, [], data),
            10,
            RawBatchTarget(rb.Codec.NONE, 1 << 20),
            read_committed=False,
            remote="A.t",
            partition=0,
            source_partition=SOURCE,
            max_records=budget,
        )

    whole = capped(None)
    assert (whole.records, whole.next_position, whole.end, whole.rest) == (12, 22, 22, None)
    five = capped(5)  # the budget is reached inside the second batch: whole batches, so two
    assert (five.records, five.copied_batches, five.next_position) == (8, 2, 18)
    one = capped(1)
    assert (one.records, one.next_position) == (4, 14)  # at least one batch
    nothing = capped(0)  # the poll's budget is spent: nothing taken, the position unchanged
    assert (nothing.records, nothing.items, nothing.next_position) == (0, [], 10)
    # What was not taken starts at `rest` in the fetched bytes: taking it from there gives the rest.
    size = len(placed(build(), 10))
    assert (five.rest, one.rest, nothing.rest) == (2 * size, size, 0)
    assert five.end == one.end == nothing.end == 22
    rest = raw_copy.take(
        RawFetch(0, 100, 100, [], data[one.rest :]),
        one.next_position,
        RawBatchTarget(rb.Codec.NONE, 1 << 20),
        read_committed=False,
        remote="A.t",
        partition=0,
        source_partition=SOURCE,
    )
    assert [i.first_offset for i in one.items + rest.items] == [10, 14, 18]
    assert (rest.next_position, rest.rest) == (22, None)


class _Fetcher:
    """What MirrorSourceTask's raw poll uses of RawSourceFetch, over fixed answers."""

    read_committed = False

    def __init__(self, answers: list[FetchedPartition]) -> None:
        self.answers = answers
        self.held: list[tuple[int, int]] = []
        self.advanced: list[tuple[int, int, int]] = []

    async def fetch(self, timeout_ms: int) -> list[FetchedPartition]:
        return self.answers

    def hold(self, answer: FetchedPartition, position: int, rest: int, end: int) -> None:
        self.held.append((answer.partition, position))

    def advance(self, topic: str, partition: int, position: int, records: int) -> None:
        self.advanced.append((partition, position, records))

    def prefetch(self, timeout_ms: int) -> None:
        return None


def test_a_polls_budget_is_shared_among_the_partitions_answered() -> None:
    """max.poll.records is split among the partitions a fetch answered (whole batches, the first served
    rotating), so a poll holds batches of each and the worker can send one of each per request."""
    four_batches = b"".join(placed(build(), base) for base in (0, 4, 8, 12))  # 4 records each
    answers = [FetchedPartition("t", p, 0, RawFetch(0, 16, 16, [], four_batches)) for p in (0, 1)]
    task = MirrorSourceTask()
    task._raw_target = RawBatchTarget(rb.Codec.NONE, 1 << 20)
    task._policy = DefaultReplicationPolicy()
    task._source_alias = "A"
    task._poll_timeout_ms = 100
    task._consumer = SimpleNamespace(max_poll_records=8)  # type: ignore[assignment]
    fetcher = _Fetcher(answers)
    items = asyncio.run(task._poll_raw(fetcher))  # type: ignore[arg-type]
    assert items is not None
    assert [(i.kafka_partition, i.first_offset) for i in items if isinstance(i, RawRecordBatch)] == [
        (0, 0),
        (1, 0),
    ]
    assert fetcher.advanced == [(0, 4, 4), (1, 4, 4)] and fetcher.held == [(0, 4), (1, 4)]
    task._consumer = SimpleNamespace(max_poll_records=6)  # type: ignore[assignment]
    items = asyncio.run(task._poll_raw(_Fetcher(answers)))  # type: ignore[arg-type]
    assert items is not None  # partition 1 first now; a share of 3 takes one whole batch of 4 each
    assert [(i.kafka_partition, i.first_offset) for i in items if isinstance(i, RawRecordBatch)] == [
        (1, 0),
        (0, 0),
    ]
