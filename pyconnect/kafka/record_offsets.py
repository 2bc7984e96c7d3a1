"""The committed data records of stretches of partitions, and partitions' bounds (failover, failback).

Contract: :func:`committed_records` reads, ``read_committed``, each requested stretch
``(topic, partition, after, before)`` and returns its data records strictly between ``after`` and
``before`` (``before`` ``None``: up to the partition's last stable offset when the read started);
:func:`committed_record_offsets` returns only their offsets. Transaction markers, aborted records and
offsets removed by compaction never appear. :func:`partition_bounds` answers each partition's log start
and last stable offset. One consumer (Java client keys in ``config``: SASL, TLS, OAUTHBEARER as for every
client) serves a call; the whole call is bounded by ``timeout_s`` (``TimeoutError``); other client errors
propagate. The records of a call are held in memory: callers read bounded stretches.

Latency: the operator commands call these many times while producers wait (a cutover's write pause), so
a call must not idle. The consumer fetches with ``fetch.max.wait.ms`` :data:`FETCH_WAIT_MS`: a broker
answers the requests of one connection in order, so a fetch long-polling an idle partition held every
later request (the next stretch's fetch, an offset lookup) for Kafka's 500 ms. Every stretch's end offset
is read in one request before the first fetch. A topic the fresh consumer has no metadata of yet is
asked for again after :data:`RETRY_BACKOFF_MS` instead of 100 ms (the first offset lookup of each call
waits for it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from aiokafka import ConsumerRecord, TopicPartition

from pyconnect.kafka.clients import create_consumer

Stretch = tuple[str, int, int, int | None]
FetchedRecord: TypeAlias = "ConsumerRecord[bytes, bytes]"
"""One record as :func:`committed_records` answers it: ``topic``, ``partition``, ``offset``, ``key``,
``value``, ``headers``, ``timestamp``."""
FETCH_TIMEOUT_MS = 500
FETCH_WAIT_MS = 20
RETRY_BACKOFF_MS = 20
READER_SETTINGS = {
    "enable_auto_commit": False,
    "isolation_level": "read_committed",
    "group_id": None,
    "fetch_max_wait_ms": FETCH_WAIT_MS,
    "retry_backoff_ms": RETRY_BACKOFF_MS,
}
"""The reader's aiokafka settings over the caller's ``config``."""


async def committed_record_offsets(
    config: Mapping[str, Any], stretches: Sequence[Stretch], timeout_s: float
) -> dict[Stretch, list[int]]:
    """``{stretch: ascending offsets}`` for every stretch (see the module contract)."""
    found = await committed_records(config, stretches, timeout_s)
    return {stretch: [r.offset for r in records] for stretch, records in found.items()}


def _read_committed(config: Mapping[str, Any]) -> Any:
    return create_consumer(config, **READER_SETTINGS)


async def committed_records(
    config: Mapping[str, Any], stretches: Sequence[Stretch], timeout_s: float
) -> dict[Stretch, list[FetchedRecord]]:
    """``{stretch: its records in offset order}`` for every stretch (see the module contract)."""
    if not stretches:
        return {}
    consumer = _read_committed(config)
    deadline = time.monotonic() + timeout_s
    await asyncio.wait_for(consumer.start(), timeout_s)
    try:
        unique = list(dict.fromkeys(stretches))
        tps = list(dict.fromkeys(TopicPartition(t, p) for t, p, _, _ in unique))
        ends = await asyncio.wait_for(consumer.end_offsets(tps), max(deadline - time.monotonic(), 0.001))
        found: dict[Stretch, list[FetchedRecord]] = {}
        for stretch in unique:
            found[stretch] = await _read(
                consumer, stretch, ends[TopicPartition(stretch[0], stretch[1])], deadline
            )
        return found
    finally:
        await consumer.stop()


async def partition_bounds(
    config: Mapping[str, Any], partitions: Sequence[tuple[str, int]], timeout_s: float
) -> dict[tuple[str, int], tuple[int, int]]:
    """``{(topic, partition): (log start, last stable offset)}`` (see the module contract)."""
    if not partitions:
        return {}
    consumer = _read_committed(config)
    await asyncio.wait_for(consumer.start(), timeout_s)
    try:
        tps = [TopicPartition(t, p) for t, p in dict.fromkeys(partitions)]
        starts = await asyncio.wait_for(consumer.beginning_offsets(tps), timeout_s)
        ends = await asyncio.wait_for(consumer.end_offsets(tps), timeout_s)
        return {(tp.topic, tp.partition): (starts[tp], ends[tp]) for tp in tps}
    finally:
        await consumer.stop()


async def _read(consumer: Any, stretch: Stretch, end: int, deadline: float) -> list[FetchedRecord]:
    topic, partition, after, before = stretch
    tp = TopicPartition(topic, partition)
    stop = end if before is None else min(before, end)
    records: list[FetchedRecord] = []
    if after + 1 >= stop:
        return records
    consumer.assign([tp])
    consumer.seek(tp, after + 1)
    while await consumer.position(tp) < stop:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"reading {topic}-{partition} from offset {after + 1} did not finish in time")
        batch = await consumer.getmany(tp, timeout_ms=min(FETCH_TIMEOUT_MS, int(remaining * 1000) + 1))
        records.extend(m for m in batch.get(tp, ()) if after < m.offset < stop)
    return records
