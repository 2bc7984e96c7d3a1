"""Steady test traffic and its observation: a rate-limited producer and a tailing consumer with latency.

Used by the demo (and anything else that needs live records flowing). Contract:
- ``produce_at_rate`` sends keyed records with a header and a CreateTime timestamp at about ``rate``
  records/s in small batches until ``stop`` is set or ``max_records``/``max_seconds`` is reached (the
  loop is always bounded), counting acknowledged records in ``counters.produced``; sequence numbers
  start at ``first``.
- ``tail_and_measure`` follows every partition of a topic from the beginning (retrying until the topic
  exists), counts records in ``counters.consumed`` and records, per record, arrival time minus the
  record's timestamp (ms) into ``counters.latencies_ms`` (bounded window), until ``stop`` is set.
- ``run_application`` and ``run_application_on`` are an application's consumer group reading those
  records, on one cluster and then, after a failover, on another from its committed offsets there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from pyconnect.kafka import aiokafka_seam as seam


@dataclass
class TrafficCounters:
    produced: int = 0
    consumed: int = 0
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=5000))

    def latency_percentile(self, q: float) -> float | None:
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def produce_at_rate(
    bootstrap_servers: str,
    topic: str,
    rate: float,
    stop: asyncio.Event,
    counters: TrafficCounters,
    *,
    max_records: int = 10_000_000,
    max_seconds: float = 3600.0,
    first: int = 0,
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, acks="all", linger_ms=5)
    await producer.start()
    started = time.monotonic()
    batch = max(1, int(rate / 20))
    try:
        n = 0
        while not stop.is_set() and n < max_records and time.monotonic() - started < max_seconds:
            now_ms = int(time.time() * 1000)
            futures = [
                await producer.send(
                    topic,
                    key=f"key-{(first + n + i) % 1000}".encode(),
                    value=f"record {first + n + i} produced at {now_ms}".encode(),
                    headers=[("demo-seq", str(first + n + i).encode())],
                    timestamp_ms=now_ms,
                )
                for i in range(min(batch, max_records - n))
            ]
            await asyncio.gather(*futures)
            n += len(futures)
            counters.produced = n
            target = started + n / rate
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, target - time.monotonic()))
    finally:
        await producer.stop()


async def tail_and_measure(
    bootstrap_servers: str, topic: str, stop: asyncio.Event, counters: TrafficCounters
) -> None:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        partitions: set[int] | None = None
        while not stop.is_set() and not partitions:
            await seam.consumer_client(consumer).force_metadata_update()
            partitions = consumer.partitions_for_topic(topic)
            if not partitions:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        if not partitions:
            return
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=200)
            arrived_ms = time.time() * 1000
            for messages in batch.values():
                counters.consumed += len(messages)
                counters.latencies_ms.extend(arrived_ms - m.timestamp for m in messages)
    finally:
        await consumer.stop()


def demo_sequence(value: bytes | None) -> int | None:
    """The sequence number ``produce_at_rate`` wrote into a record value (``record <n> produced at ..``)."""
    if value is None or not value.startswith(b"record "):
        return None
    number = value[7:].split(b" ", 1)[0]
    return int(number) if number.isdigit() else None


async def run_application(
    bootstrap_servers: str, topic: str, group: str, stop: asyncio.Event, read: set[int]
) -> dict[int, int]:
    """An application reading ``topic`` as consumer group ``group`` from the beginning, committing every
    second and once more when ``stop`` is set; collects the sequence numbers it read into ``read`` and
    returns its committed positions (partition -> offset)."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        committed_at = time.monotonic()
        while not stop.is_set():
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                read.update(s for s in (demo_sequence(m.value) for m in messages) if s is not None)
            if time.monotonic() - committed_at >= 1.0:
                await consumer.commit()
                committed_at = time.monotonic()
        positions = {tp.partition: await consumer.position(tp) for tp in consumer.assignment()}
        await consumer.commit(
            {TopicPartition(topic, p): OffsetAndMetadata(o, "") for p, o in positions.items()}
        )
        return positions
    finally:
        await consumer.stop()


async def run_application_on(
    bootstrap_servers: str, topic: str, group: str, partitions: int, timeout_s: float
) -> list[int]:
    """The application moved to another cluster: group ``group`` reads ``topic`` (``partitions``) from its
    committed offsets there to the end (at most ``timeout_s``); returns the sequence numbers read, in
    order."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    order: list[int] = []
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            positions = {tp: await consumer.position(tp) for tp in tps}
            if all(positions[tp] >= ends[tp] for tp in tps):
                break
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                order.extend(s for s in (demo_sequence(m.value) for m in messages) if s is not None)
        await consumer.commit()
    finally:
        await consumer.stop()
    return order
