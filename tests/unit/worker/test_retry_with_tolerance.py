"""The retry-with-tolerance core without Kafka: the jitter above the delay cap, the async driver's
interruptible waits, a fast path's first error, and the core inside a sink task (fake consumer) and
a source task's conversion (no producer: the converted batch is not sent).

The backoff sequences, deadlines, ``-1``/``0`` timeouts, the stage table and the metric counts are
checked against the Java jars in tests/golden/test_retry_golden.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyconnect.api.converters.string import StringConverter
from pyconnect.api.source import SourceRecord
from pyconnect.errors import ConnectError, DataError, RetriableError
from pyconnect.metrics.connect import ConnectMetrics
from pyconnect.metrics.registry import MetricsHub
from pyconnect.metrics.task_errors import TASK_ERROR_GROUP, TaskErrorMetrics
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.retry_with_tolerance import (
    SKIPPED,
    TRANSFORMATION,
    VALUE_CONVERTER,
    ProcessingFailure,
    RetryInterrupted,
    RetryWithTolerance,
)
from pyconnect.worker.source_records import SourceRecordPipeline
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters
from tests.unit.worker.test_worker_sink_task import (
    TP0,
    FakeConsumer,
    RecordingSink,
    fetched,
    runner,
    wait_until,
)


class Flaky:
    """Raises ``RetriableError`` the first ``failures`` calls, then returns ``"ok"``."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise RetriableError(f"not yet ({self.calls})")
        return "ok"


def test_a_delay_above_the_cap_is_a_random_delay_below_it() -> None:
    bounds: list[int] = []

    def below(bound: int) -> int:
        bounds.append(bound)
        return bound - 1

    core = RetryWithTolerance(60000, 1000, random_below=below)
    now, waits = [0], []

    def sleep(ms: int) -> bool:
        waits.append(ms)
        now[0] += ms
        return True

    assert core.execute(Flaky(4), "r", VALUE_CONVERTER, "C", clock_ms=lambda: now[0], sleep=sleep) == "ok"
    assert waits == [300, 600, 999, 999] and bounds == [1000, 1000]  # 1200 and 2400 exceed the cap


def test_the_default_random_delay_stays_below_the_cap() -> None:
    core = RetryWithTolerance(-1, 500)
    assert all(0 <= core._backoff_ms(attempt, float("inf"), 0) < 500 for attempt in range(2, 200))
    assert core._backoff_ms(1, float("inf"), 0) == 300


def test_tolerance_none_fails_at_the_first_error_all_never() -> None:
    strict, tolerant = RetryWithTolerance(), RetryWithTolerance(tolerate_all=True)
    assert strict.within_tolerance() and tolerant.within_tolerance()
    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler") as raised:
        strict.execute(Flaky(1), "r", TRANSFORMATION, "T", clock_ms=lambda: 0, sleep=lambda ms: True)
    assert isinstance(raised.value.__cause__, RetriableError) and not strict.within_tolerance()
    for _ in range(3):
        assert (
            tolerant.execute(Flaky(1), "r", TRANSFORMATION, "T", clock_ms=lambda: 0, sleep=lambda ms: True)
            is SKIPPED
        )
    assert tolerant.within_tolerance() and tolerant.total_failures == 3


def test_an_operation_that_returns_none_is_not_skipped() -> None:
    core = RetryWithTolerance(tolerate_all=True)
    assert (
        core.execute(lambda: None, "r", TRANSFORMATION, "T", clock_ms=lambda: 0, sleep=lambda ms: True)
        is None
    )


async def test_the_async_driver_awaits_its_sleep_and_takes_a_first_error() -> None:
    now, waits = [0], []

    async def sleep(ms: int) -> bool:
        waits.append(ms)
        now[0] += ms
        return True

    flaky = Flaky(1)

    async def operation() -> str:
        return flaky()

    core = RetryWithTolerance(10_000)
    result = await core.execute_async(
        operation,
        "r",
        VALUE_CONVERTER,
        "C",
        clock_ms=lambda: now[0],
        sleep=sleep,
        first_error=RetriableError("the fast path's attempt"),
    )
    # the fast path's failure counts as attempt 1: two retries, and the operation ran twice
    assert result == "ok" and waits == [300, 600] and flaky.calls == 2


async def test_a_stop_during_the_wait_abandons_the_operation() -> None:
    reported: list[ProcessingFailure] = []
    core = RetryWithTolerance(-1, tolerate_all=True, report=reported.append)

    async def stopped(ms: int) -> bool:
        return False

    async def operation() -> str:
        raise RetriableError("down")

    with pytest.raises(RetryInterrupted):
        await core.execute_async(operation, "r", VALUE_CONVERTER, "C", clock_ms=lambda: 0, sleep=stopped)
    assert reported == [] and core.total_failures == 0  # neither skipped nor reported


def test_execute_failed_counts_reports_and_raises_under_none() -> None:
    hub = MetricsHub()
    metrics = TaskErrorMetrics(ConnectMetrics("w", hub), "c", 0)
    reported: list[ProcessingFailure] = []
    tolerant = RetryWithTolerance(tolerate_all=True, metrics=metrics, report=reported.append)
    tolerant.execute_failed("r", "TASK_PUT", "SinkTask", DataError("bad"), 5)
    strict = RetryWithTolerance(metrics=metrics, report=reported.append)
    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler"):
        strict.execute_failed("r", "TASK_PUT", "SinkTask", DataError("bad"), 5)
    assert [f.stage for f in reported] == ["TASK_PUT", "TASK_PUT"]
    values = {r.name.name: r.value for r in hub.read() if r.name.group == TASK_ERROR_GROUP}
    assert values["total-record-failures"] == 2 and values["total-record-errors"] == 1
    assert values["last-error-timestamp"] > 0
    metrics.close()
    assert not [r for r in hub.read() if r.name.group == TASK_ERROR_GROUP]


class FlakyValues(StringConverter):
    """Raises ``RetriableError`` the first ``failures`` times it converts each of ``values``."""

    def __init__(self, values: set[bytes], failures: int) -> None:
        super().__init__()
        self.values, self.failures = values, failures
        self.seen: dict[bytes, int] = {}

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> Any:
        if value in self.values:
            count = self.seen[value] = self.seen.get(value, 0) + 1
            if count <= self.failures:
                raise RetriableError(f"{value!r} not yet")
        return super().to_connect_data(topic, headers, value)


def sink_with(converter: FlakyValues, errors: RetryWithTolerance) -> tuple[Any, FakeConsumer, RecordingSink]:
    consumer = FakeConsumer([TP0])
    sink = RecordingSink(consumer)
    consumer.batches = [fetched(0, range(3))]
    task = runner(consumer, sink, RecordingReporter(), errors=errors, offset_flush_interval_s=60)
    converter.configure({}, False)
    task._value_converter = converter
    return task, consumer, sink


async def test_a_sink_record_retried_in_its_converter_is_delivered_in_order() -> None:
    hub = MetricsHub()
    metrics = TaskErrorMetrics(ConnectMetrics("w", hub), "c", 0)
    converter = FlakyValues({b"v1"}, 1)
    task, consumer, sink = sink_with(converter, RetryWithTolerance(5000, metrics=metrics))
    task.start()
    await wait_until(lambda: sink.batches)
    assert [r.value for r in sink.batches[0]] == ["v0", "v1", "v2"] and task.records_skipped == 0
    values = {r.name.name: r.value for r in hub.read() if r.name.group == TASK_ERROR_GROUP}
    assert values["total-retries"] == 1 and values["total-record-failures"] == 1
    assert values["total-records-skipped"] == 0
    task.stop()
    assert await task.wait_stopped(5)
    assert consumer.commits == [{TP0: 3}]


async def test_a_sink_stopped_while_waiting_to_retry_drops_the_batch_uncommitted() -> None:
    converter = FlakyValues({b"v1"}, 1000)
    task, consumer, sink = sink_with(converter, RetryWithTolerance(-1, tolerate_all=True))
    task.start()
    await wait_until(lambda: converter.seen.get(b"v1", 0) >= 2)  # in its second wait (600 ms)
    started = asyncio.get_running_loop().time()
    task.stop()
    assert await task.wait_stopped(5)
    assert asyncio.get_running_loop().time() - started < 0.5  # the wait ends at once
    assert sink.batches == [] and consumer.commits == [] and task.records_skipped == 0


class FlakyEncoder:
    """A value converter whose ``from_connect_data`` raises ``RetriableError`` the first ``failures``
    times it sees ``flaky`` (no batch method: the task loops over ``from_connect_data``)."""

    def __init__(self, flaky: str, failures: int) -> None:
        self.flaky, self.failures, self.calls = flaky, failures, 0

    def from_connect_data(self, topic: str, headers: Any, schema: Any, value: Any) -> bytes:
        if value == self.flaky:
            self.calls += 1
            if self.calls <= self.failures:
                raise RetriableError(f"{value} not yet")
        return str(value).encode()


async def sleep_ms(delay_ms: int) -> bool:
    """A running task's wait between two attempts (never asked to stop here)."""
    await asyncio.sleep(delay_ms / 1000)
    return True


def source_with(encoder: FlakyEncoder, errors: RetryWithTolerance) -> SourceRecordPipeline:
    key = StringConverter()
    key.configure({}, True)
    return SourceRecordPipeline(
        TaskConverters(key, encoder, None), None, errors, sleep_ms, PluginCalls(), "c-0"
    )


RECORDS = [SourceRecord({"p": 0}, {"o": i}, "t", None, None, "k", None, v) for i, v in enumerate("abc")]


async def test_a_source_batch_conversion_that_fails_is_redone_record_by_record_with_retries() -> None:
    hub = MetricsHub()
    metrics = TaskErrorMetrics(ConnectMetrics("w", hub), "c", 0)
    # the batch call is the first failure (not counted: which record failed is unknown), the record's
    # own first attempt the second: one retry after 300 ms
    encoder = FlakyEncoder("b", 2)
    task = source_with(encoder, RetryWithTolerance(5000, metrics=metrics))
    started = asyncio.get_running_loop().time()
    out = (await task.prepare(RECORDS)).outgoing
    assert asyncio.get_running_loop().time() - started >= 0.3
    assert [o.value if o is not None else None for o in out] == [b"a", b"b", b"c"]
    values = {r.name.name: r.value for r in hub.read() if r.name.group == TASK_ERROR_GROUP}
    assert values["total-retries"] == 1 and values["total-record-failures"] == 1 and encoder.calls == 3


async def test_a_source_record_whose_conversion_gives_up_is_skipped_under_tolerance_all() -> None:
    task = source_with(FlakyEncoder("b", 1000), RetryWithTolerance(0, tolerate_all=True))
    out = (await task.prepare(RECORDS)).outgoing
    assert [o.value if o is not None else None for o in out] == [b"a", None, b"c"]
    assert task.skipped == 1
    strict = source_with(FlakyEncoder("b", 1000), RetryWithTolerance(0))
    with pytest.raises(ConnectError, match="Tolerance exceeded in error handler"):
        await strict.prepare(RECORDS)
