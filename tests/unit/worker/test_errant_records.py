"""Errant sink records without Kafka: Java's DLQ context headers, the KIP-610 reporter's contract."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyconnect.api.sink import SinkRecord
from pyconnect.errors import ConnectError, DataError
from pyconnect.kafka.sink_consumer import FetchedRecord
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.errant_records import ErrantRecords, TaskErrantRecordReporter, context_headers
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance

TASK = ConnectorTaskId("c", 3)
RECORD = FetchedRecord("t", 1, 42, 1000, "CreateTime", b"k", b"v", [("h", b"x")])


class FakeWriter:
    topic = "dlq"

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.started = self.stopped = False

    async def start(self) -> None:
        self.started = True

    async def send(self, key: Any, value: Any, headers: Any, timestamp: Any) -> asyncio.Future[Any]:
        self.sent.append((key, value, list(headers), timestamp))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def stop(self) -> None:
        self.stopped = True


def test_context_headers_are_javas() -> None:
    error = DataError("bad bytes")
    headers = dict(
        context_headers(RECORD, TASK, "VALUE_CONVERTER", "org.apache.kafka.connect.json.JsonConverter", error)
    )
    assert list(headers) == [
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.message",
        "__connect.errors.exception.stacktrace",
    ]
    assert headers["__connect.errors.partition"] == b"1" and headers["__connect.errors.offset"] == b"42"
    assert headers["__connect.errors.task.id"] == b"3"
    assert headers["__connect.errors.exception.class.name"] == b"pyconnect.errors.DataError"
    assert headers["__connect.errors.exception.message"] == b"bad bytes"


async def test_the_original_record_goes_to_the_queue_and_commits_wait_for_it() -> None:
    writer = FakeWriter()
    errant = ErrantRecords(TASK, writer=writer, context_headers_enabled=True)  # type: ignore[arg-type]
    await errant.start()
    errant.report(RECORD, "TRANSFORMATION", "org.example.T", ValueError("no"))
    await errant.flush()
    ((key, value, headers, timestamp),) = writer.sent
    assert (key, value, timestamp) == (b"k", b"v", 1000)
    assert headers[0] == ("h", b"x") and dict(headers)["__connect.errors.stage"] == b"TRANSFORMATION"
    await errant.stop()
    assert writer.started and writer.stopped


async def test_reporter_from_a_plugin_thread_and_tolerance_none() -> None:
    writer = FakeWriter()
    errant = ErrantRecords(TASK, writer=writer)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    originals = {("t", 1, 42): RECORD}
    record = SinkRecord(
        "renamed", 1, None, "k", None, "v", 42, original_topic="t", original_kafka_partition=1
    )
    tolerant = TaskErrantRecordReporter(
        RetryWithTolerance(tolerate_all=True, report=errant.report_failure),
        loop,
        lambda: originals,
        "org.example.Task",
        lambda: 0,
    )
    future = await asyncio.to_thread(tolerant.report, record, ValueError("put failed"))
    await asyncio.wrap_future(future)  # type: ignore[arg-type]
    assert writer.sent[0][:2] == (b"k", b"v")  # the original bytes, not the transformed record
    strict = TaskErrantRecordReporter(
        RetryWithTolerance(report=errant.report_failure),
        loop,
        lambda: originals,
        "org.example.Task",
        lambda: 0,
    )
    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler"):
        strict.report(record, ValueError("put failed"))
    await errant.flush()
    assert len(writer.sent) == 2  # reported before the task fails, as Java's
