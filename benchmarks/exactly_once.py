"""The exactly-once scenario (KIP-618): one worker with ``exactly.once.source.support=enabled`` per
Connect system drains a backlog with MirrorSourceConnector at each transaction boundary, then mirrors a
fixed rate for latency.

Both systems get the same connector JSON: the flow settings of every scenario plus
``transaction.boundary`` (``poll``, or ``interval`` with ``transaction.boundary.interval.ms`` from the
settings) and the Red Hat guide's ``consumer.isolation.level=read_committed``.

A transactional target topic's end offset counts one commit marker per partition and transaction
besides the records, so a drain is over once the end offset is at least the backlog and has not moved
for ``settle_s``; its window ends at the last move. Then a ``read_committed`` reader counts what
committed: every backlog record exactly once, or the drain is reported as failed (``committed``,
``duplicates`` and ``missing`` say what it saw). Latency, as in the latency scenario, is the target
record's LogAppendTime minus the source's: a transactional record is appended before its transaction
commits, so this leaves out the wait for the commit (at most one poll batch with the ``poll`` boundary).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchmarks import runners, workload
from benchmarks.procstats import total_cpu_seconds
from benchmarks.stats import cpu_seconds_per_million, rate
from pyconnect.kafka.clients import create_consumer
from pyconnect.kafka.log import TopicPartition

BOUNDARIES = ("poll", "interval")
WORKER_SETTINGS: dict[str, object] = {"exactly.once.source.support": "enabled"}


def connector_config(
    system: str, source: str, target: str, topic: str, tasks_max: int, boundary: str, interval_ms: int
) -> dict[str, str]:
    """The MirrorSourceConnector JSON of this scenario (identical but for the alias across systems)."""
    config = {
        **runners.connector_config(system, source, target, [topic], tasks_max),
        "transaction.boundary": boundary,
        "consumer.isolation.level": "read_committed",
    }
    if boundary == "interval":
        config["transaction.boundary.interval.ms"] = str(interval_ms)
    return config


def count_committed(bootstrap: str, topic: str, max_s: float = 300.0) -> tuple[int, int]:
    """``(records, distinct sequence numbers)`` a ``read_committed`` reader sees in ``topic`` up to its
    end (bounded by ``max_s``); each backlog record's value starts with its sequence number."""
    counted = workload.run(_count_committed(bootstrap, topic, max_s), max_s + 30)
    return counted  # type: ignore[return-value]


async def _count_committed(bootstrap: str, topic: str, max_s: float) -> tuple[int, int]:
    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "isolation.level": "read_committed",
            "max.partition.fetch.bytes": "4194304",
        },
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        if not partitions:
            await consumer._client.force_metadata_update()
            partitions = [
                TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])
            ]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)  # the last stable offsets under read_committed
        records, seqs = 0, set[int | None]()
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            positions = [await _position(consumer, tp) for tp in partitions]
            if all(position >= ends[tp] for position, tp in zip(positions, partitions, strict=True)):
                break
            batches = await consumer.getmany(timeout_ms=500, max_records=10_000)
            for messages in batches.values():
                records += len(messages)
                seqs.update(workload.seq_of(m.value) for m in messages)
        return records, len(seqs)
    finally:
        await consumer.stop()


async def _position(consumer: Any, tp: TopicPartition) -> int:
    return int(await consumer.position(tp))


def drain_committed(
    pids: Callable[[], list[int]],
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    t_create: float,
    timeout: float,
    check_alive: Callable[[], None],
    settle_s: float = 3.0,
) -> dict[str, Any]:
    """Time a transactional drain of ``records`` into ``topic`` (see the module docstring); raises when
    the committed records are not the backlog exactly once."""
    watcher = workload.OffsetWatcher(bootstrap, topic)
    first: tuple[float, float] | None = None
    last_move, last_count = time.monotonic(), -1
    cpu_at_create = total_cpu_seconds(pids()) or 0.0
    cpu_at_last_move = cpu_at_create
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check_alive()
            count = watcher.count()
            now = time.monotonic()
            if count != last_count:
                last_move, last_count = now, count
                cpu_at_last_move = total_cpu_seconds(pids()) or cpu_at_last_move
                if first is None and count > 0:
                    first = (now, cpu_at_last_move)
            elif count >= records and now - last_move >= settle_s:
                break
            time.sleep(0.2)
        else:
            raise TimeoutError(f"{topic} end offset {last_count} of at least {records} after {timeout:.0f}s")
    finally:
        watcher.close()
    committed, distinct = count_committed(bootstrap, topic)
    result: dict[str, Any] = {
        "records": records,
        "committed": committed,
        "duplicates": committed - distinct,
        "missing": records - distinct,
        "end_offset": last_count,
    }
    if committed != records or distinct != records:
        raise AssertionError(f"exactly-once drain of {topic} broke its promise: {result}")
    assert first is not None
    t_first, cpu_first = first
    if t_first - t_create > 0 and last_move - t_first < 1.0:
        t_first, cpu_first = t_create, cpu_at_create  # drained before the first look: from creation
    window = max(last_move - t_first, 1e-3)
    rps = rate(records, window)
    return {
        **result,
        "records_per_s": None if rps is None else round(rps, 1),
        "mb_per_s": None if rps is None else round(rps * record_size / 1e6, 3),
        "cpu_s_per_million": _rounded(cpu_seconds_per_million(cpu_at_last_move - cpu_first, records)),
        "measured_window_s": round(window, 3),
        "first_record_after_s": round(first[0] - t_create, 3),
        "wall_s": round(last_move - t_create, 3),
    }


def produce_backlog(bootstrap: str, topic: str, records: int, size: int) -> None:
    """``records`` sequence-numbered records (0..records-1) of ``size`` bytes, at up to 20,000 a second."""
    fast = 20_000.0  # records/s; the producer phase is bounded by its length plus 30 s
    producer = workload.RateProducer(bootstrap, topic, size=size)
    producer.produce(fast, records / fast)
    if producer.next_seq != records:
        raise RuntimeError(f"the {topic} backlog holds {producer.next_seq} of {records} records")


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
