"""Port of VerifiableSourceConnector/Task: task configs, records, offsets, throttling, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from connectors.verifiable import VerifiableSourceConnector, VerifiableSourceTask
from connectors.verifiable.throttle import ThroughputThrottler
from pyconnect.api.data import INT32_SCHEMA, INT64_SCHEMA, Struct
from pyconnect.api.source import MemoryOffsetStorageReader, RecordMetadata, SourceTaskContext
from pyconnect.errors import ConnectError

FACTS = json.loads((Path(__file__).parents[2] / "golden" / "converters" / "vectors.json").read_text())[
    "facts"
]
CONFIG = {
    "name": "vs",
    "connector.class": "VerifiableSource",
    "topic": "out",
    "throughput": "-1",
    "tasks.max": "3",
}


class FakeClock:
    """Manual time: ``sleep`` advances it instead of waiting."""

    def __init__(self, ms: int = 1_700_000_000_000) -> None:
        self.ns = ms * 1_000_000
        self.sleeps: list[float] = []

    def time_ms(self) -> int:
        return self.ns // 1_000_000

    def monotonic_ns(self) -> int:
        return self.ns

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.ns += round(seconds * 1e9)

    def advance_ms(self, ms: int) -> None:
        self.ns += ms * 1_000_000


async def started_task(
    props: dict[str, str], clock: FakeClock, offsets: MemoryOffsetStorageReader | None = None
) -> VerifiableSourceTask:
    task = VerifiableSourceTask()
    task.clock = clock
    task.initialize(SourceTaskContext(props, offsets or MemoryOffsetStorageReader()))
    await task.start(props)
    return task


def test_task_configs_copy_config_and_add_ids() -> None:
    connector = VerifiableSourceConnector()
    connector.start(CONFIG)
    configs = connector.task_configs(3)
    assert [c["id"] for c in configs] == ["0", "1", "2"]
    assert all({k: v for k, v in c.items() if k != "id"} == CONFIG for c in configs)
    assert connector.task_class() is VerifiableSourceTask
    assert len(connector.config()) == 0


async def test_records_and_offsets_follow_java() -> None:
    clock = FakeClock()
    task = await started_task({**CONFIG, "id": "1"}, clock)
    first = (await task.poll())[0]
    second = (await task.poll())[0]
    assert (first.source_partition, first.source_offset) == ({"id": 1}, {"seqno": 0})
    assert second.source_offset == {"seqno": 1}
    assert (first.topic, first.kafka_partition, first.timestamp) == ("out", None, None)
    assert (first.key_schema, first.key, first.value_schema, first.value) == (
        INT32_SCHEMA,
        1,
        INT64_SCHEMA,
        0,
    )


async def test_complete_record_data_value() -> None:
    task = await started_task({**CONFIG, "id": "0", "complete.record.data": "TRUE"}, FakeClock(5000))
    record = (await task.poll())[0]
    assert isinstance(record.value, Struct)
    assert [record.value.get(f) for f in ("name", "task", "topic", "time_ms", "seqno")] == [
        "vs",
        0,
        "out",
        5000,
        0,
    ]


async def test_resumes_after_committed_offset() -> None:
    offsets = MemoryOffsetStorageReader([({"id": 2}, {"seqno": 41}), ({"id": 0}, {"seqno": 7})])
    task = await started_task({**CONFIG, "id": "2"}, FakeClock(), offsets)
    assert (await task.poll())[0].source_offset == {"seqno": 42}


async def test_invalid_numbers_fail_like_java() -> None:
    with pytest.raises(ConnectError, match="Invalid VerifiableSourceTask configuration"):
        await started_task({**CONFIG, "id": "x"}, FakeClock())
    with pytest.raises(ConnectError, match="Invalid VerifiableSourceTask configuration"):
        await started_task({"name": "vs", "id": "0", "topic": "out"}, FakeClock())


async def test_output_lines_match_java_key_order(capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock(1_700_000_000_000)
    task = await started_task({**CONFIG, "id": "0", "verifiable.stdout": "true"}, clock)
    for _ in range(5):
        record = (await task.poll())[0]
    await task.commit_record(record, RecordMetadata("out", 0, 4))
    lines = capsys.readouterr().out.splitlines()
    assert lines[4] == FACTS["verifiable.poll_line"].replace('"seqno":5', '"seqno":4')
    assert lines[5] == FACTS["verifiable.commit_line"].replace('"seqno":5', '"seqno":4')


async def test_quiet_unless_stdout_enabled(capsys: pytest.CaptureFixture[str]) -> None:
    task = await started_task({**CONFIG, "id": "0"}, FakeClock())
    await task.poll()
    assert capsys.readouterr().out == ""


async def test_throughput_throttling_uses_the_clock() -> None:
    clock = FakeClock()
    task = await started_task({**CONFIG, "id": "0", "throughput": "100"}, clock)
    await task.poll()
    assert clock.sleeps == []
    clock.advance_ms(15)
    for _ in range(3):
        await task.poll()
    assert clock.sleeps == [pytest.approx(0.01)] * 2
    assert clock.time_ms() - 1_700_000_000_000 == 35
    clock.advance_ms(1000)
    await task.poll()
    assert len(clock.sleeps) == 2


def test_throttler_threshold_uses_java_arithmetic() -> None:
    assert ThroughputThrottler(100, 0, FakeClock(0)).should_throttle(1, 10)
    throttler = ThroughputThrottler(10, 0, FakeClock(0))
    assert not throttler.should_throttle(5, 0)
    assert not throttler.should_throttle(10, 1000)
    assert throttler.should_throttle(11, 1000)
    assert not ThroughputThrottler(-1, 0, FakeClock(0)).should_throttle(10**6, 1)


async def test_small_deficits_accumulate_before_sleeping() -> None:
    clock = FakeClock(0)
    throttler = ThroughputThrottler(1000, 0, clock)
    await throttler.throttle()
    assert clock.sleeps == [] and throttler.sleep_deficit_ns == 1_000_000
    await throttler.throttle()
    assert clock.sleeps == [pytest.approx(0.002)] and throttler.sleep_deficit_ns == 0


async def test_zero_throughput_waits_until_stop() -> None:
    clock = FakeClock()
    task = await started_task({**CONFIG, "id": "0", "throughput": "0"}, clock)
    await task.poll()
    clock.advance_ms(1)
    pending = asyncio.ensure_future(task.poll())
    await asyncio.sleep(0)
    assert not pending.done()
    await task.stop()
    records = await asyncio.wait_for(pending, 1)
    assert records[0].source_offset == {"seqno": 1}


async def test_cancelled_throttle_keeps_remaining_deficit() -> None:
    class StuckClock(FakeClock):
        async def sleep(self, seconds: float) -> None:
            self.ns += 3_000_000
            await asyncio.Event().wait()

    clock = StuckClock(0)
    throttler = ThroughputThrottler(100, 0, clock)
    waiting = asyncio.ensure_future(throttler.throttle())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert throttler.sleep_deficit_ns == 7_000_000
