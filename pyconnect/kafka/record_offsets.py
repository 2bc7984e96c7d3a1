"""The offsets of the committed data records of short stretches of partitions (for failover proofs).

Contract: :func:`committed_record_offsets` reads, ``read_committed``, each requested stretch
``(topic, partition, after, before)`` and returns the offsets of its data records strictly between
``after`` and ``before`` (``before`` ``None``: up to the partition's last stable offset when the read
started). Transaction markers, aborted records and offsets removed by compaction never appear. One
consumer (Java client keys in ``config``: SASL, TLS, OAUTHBEARER as for every client) serves all
stretches; the whole read is bounded by ``timeout_s`` (``TimeoutError``); other client errors propagate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import TopicPartition

from pyconnect.kafka.clients import create_consumer

Stretch = tuple[str, int, int, int | None]
FETCH_TIMEOUT_MS = 500


async def committed_record_offsets(
    config: Mapping[str, Any], stretches: Sequence[Stretch], timeout_s: float
) -> dict[Stretch, list[int]]:
    """``{stretch: ascending offsets}`` for every stretch (see the module contract)."""
    if not stretches:
        return {}
    consumer = create_consumer(
        config, enable_auto_commit=False, isolation_level="read_committed", group_id=None
    )
    deadline = time.monotonic() + timeout_s
    await asyncio.wait_for(consumer.start(), timeout_s)
    try:
        found: dict[Stretch, list[int]] = {}
        for stretch in dict.fromkeys(stretches):
            found[stretch] = await _read(consumer, stretch, deadline)
        return found
    finally:
        await consumer.stop()


async def _read(consumer: Any, stretch: Stretch, deadline: float) -> list[int]:
    topic, partition, after, before = stretch
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    remaining = deadline - time.monotonic()
    end = (await asyncio.wait_for(consumer.end_offsets([tp]), max(remaining, 0.001)))[tp]
    stop = end if before is None else min(before, end)
    offsets: list[int] = []
    if after + 1 >= stop:
        return offsets
    consumer.seek(tp, after + 1)
    while await consumer.position(tp) < stop:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"reading {topic}-{partition} from offset {after + 1} did not finish in time")
        batch = await consumer.getmany(tp, timeout_ms=min(FETCH_TIMEOUT_MS, int(remaining * 1000) + 1))
        offsets.extend(m.offset for m in batch.get(tp, ()) if after < m.offset < stop)
    return offsets
