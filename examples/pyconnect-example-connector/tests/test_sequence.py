"""SequenceSource without a worker: config checks, and a task that resumes from a committed offset."""

from __future__ import annotations

import asyncio

from pyconnect.api.source import MemoryOffsetStorageReader, SourceRecord, SourceTaskContext

from pyconnect_example import __version__
from pyconnect_example.sequence import SequenceSourceConnector, SequenceSourceTask

CONFIG = {"topic": "numbers", "batch.size": "3", "interval.ms": "0"}


def errors(config: dict[str, str]) -> dict[str, list[str]]:
    return {
        name: value.errors
        for name, value in SequenceSourceConnector().validate(config).items()
        if value.errors
    }


def polls(task: SequenceSourceTask, rounds: int) -> list[list[SourceRecord] | None]:
    async def run() -> list[list[SourceRecord] | None]:
        return [await task.poll() for _ in range(rounds)]

    return asyncio.run(run())


def started(config: dict[str, str], committed: dict[str, int] | None = None) -> SequenceSourceTask:
    entries = [({"topic": config["topic"]}, committed)] if committed is not None else []
    task = SequenceSourceTask()
    task.initialize(SourceTaskContext(config, MemoryOffsetStorageReader(entries)))
    asyncio.run(task.start(config))
    return task


def test_a_good_config_has_no_errors_and_the_connector_runs_one_task() -> None:
    assert errors(CONFIG) == {}
    connector = SequenceSourceConnector()
    connector.start(CONFIG)
    assert connector.task_configs(4) == [CONFIG]
    assert connector.task_class() is SequenceSourceTask
    assert connector.version() == __version__


def test_bad_values_are_named_with_their_key() -> None:
    found = errors({"topic": "a/b", "batch.size": "0", "interval.ms": "soon"})
    assert sorted(found) == ["batch.size", "interval.ms", "topic"]
    assert found["batch.size"] == ["Invalid value 0 for configuration batch.size: Value must be at least 1"]
    assert "a topic name is 1 to 249 of" in found["topic"][0]
    assert errors({})["topic"] == ['Missing required configuration "topic" which has no default value.']


def test_a_new_task_starts_at_zero_with_one_offset_per_record() -> None:
    batch = polls(started(CONFIG), 1)[0]
    assert batch is not None
    assert [r.value for r in batch] == [0, 1, 2]
    assert [r.source_offset for r in batch] == [{"next": 1}, {"next": 2}, {"next": 3}]
    assert {r.topic for r in batch} == {"numbers"}
    assert all(r.source_partition == {"topic": "numbers"} for r in batch)


def test_a_task_resumes_at_the_committed_offset() -> None:
    batches = polls(started(CONFIG, {"next": 42}), 2)
    assert [[r.value for r in b or []] for b in batches] == [[42, 43, 44], [45, 46, 47]]


def test_count_ends_the_sequence_and_a_new_topic_starts_over() -> None:
    task = started({**CONFIG, "count": "5"}, {"next": 3})
    assert [r.value for r in polls(task, 1)[0] or []] == [3, 4]
    assert started({**CONFIG, "count": "5"}, {"next": 5}).next == 5
    assert started({**CONFIG, "topic": "other"}).next == 0


def test_a_cancelled_poll_returns_nothing_and_loses_nothing() -> None:
    task = started({**CONFIG, "interval.ms": "1000"})

    async def cancel_then_poll() -> list[SourceRecord] | None:
        pending = asyncio.ensure_future(task.poll())
        await asyncio.sleep(0)
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)
        task.interval_s = 0
        return await task.poll()

    assert [r.value for r in asyncio.run(cancel_then_poll()) or []] == [0, 1, 2]
