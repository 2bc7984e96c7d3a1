"""The mirror source task's consumer (pyconnect.kafka.source_consumer.SourceConsumer) on real Kafka.

Its client never moves a position by itself, so these are checked against a real broker:

* partitions without a committed position start where ``auto.offset.reset`` says (``earliest`` by
  default for a mirror, ``latest`` when the user sets it; under ``none`` nothing is read and no error
  raised until every partition is given a position, as Java's consumer), on the first polls, as before;
* positions refused as out of range on many partitions at once surface together in ONE poll (the
  client reports them one partition per call), with each partition's log bounds, while the records of
  healthy partitions polled by the same call are handed over, not dropped;
* the log bounds of many topics the consumer does not track cost one metadata update, not one per topic.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete

from pyconnect.kafka.source_consumer import PositionOutOfRange, SourceConsumer
from pyconnect.testing.backends import ClusterHandle

pytestmark = pytest.mark.kafka

PARTITIONS = 8


async def make_topic(bootstrap: str, topic: str, per_partition: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await admin.close()
    await produce(bootstrap, topic, 0, per_partition)


async def produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for p in range(PARTITIONS):
            for n in range(first, first + count):
                await producer.send(topic, f"{p}:{n}".encode(), partition=p)
        await producer.flush()
    finally:
        await producer.stop()


async def delete_before(bootstrap: str, topic: str, offsets: dict[int, int]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_records({TopicPartition(topic, p): RecordsToDelete(o) for p, o in offsets.items()})
    finally:
        await admin.close()


def consumer(bootstrap: str, **config: str) -> SourceConsumer:
    return SourceConsumer({"bootstrap.servers": bootstrap, "client.id": "positions-test", **config}, "source")


async def poll_until(
    source: SourceConsumer, done: Callable[[dict[int, list[int]]], bool], timeout: float
) -> tuple[dict[int, list[int]], int]:
    """Polls (500 ms each) until ``done(values per partition)``; returns them and the polls made."""
    held: dict[int, list[int]] = {}
    polls = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not done(held):
        polls += 1
        for tp, records in (await source.poll(500)).items():
            held.setdefault(tp.partition, []).extend(int(r.value.split(b":")[1]) for r in records)
    return held, polls


def test_fresh_partitions_start_by_auto_offset_reset(cluster_a: ClusterHandle, unique: Any) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic = unique("fresh")

    async def run() -> None:
        await make_topic(bootstrap, topic, 5)
        everything = {p: list(range(5)) for p in range(PARTITIONS)}

        earliest = consumer(bootstrap, **{"auto.offset.reset": "earliest"})
        await earliest.start()
        try:
            earliest.assign((topic, p) for p in range(PARTITIONS))
            earliest.reset((topic, p) for p in range(PARTITIONS))
            held, polls = await poll_until(earliest, lambda h: h == everything, 20)
            assert held == everything
            assert polls <= 4, f"{polls} polls to read {PARTITIONS} fresh partitions"
        finally:
            await earliest.close()

        latest = consumer(bootstrap, **{"auto.offset.reset": "latest"})
        await latest.start()
        try:
            latest.assign((topic, p) for p in range(PARTITIONS))
            latest.reset((topic, p) for p in range(PARTITIONS))
            assert await latest.poll(1000) == {}
            await produce(bootstrap, topic, 5, 2)
            after = {p: [5, 6] for p in range(PARTITIONS)}
            held, _ = await poll_until(latest, lambda h: h == after, 20)
            assert held == after, "latest: only what was produced after the reset"
        finally:
            await latest.close()

        none = consumer(bootstrap, **{"auto.offset.reset": "none"})
        await none.start()
        try:
            none.assign((topic, p) for p in range(PARTITIONS))
            none.reset((topic, p) for p in range(PARTITIONS))
            started = time.monotonic()
            results = [await none.poll(300) for _ in range(5)]
            assert results == [{}] * 5, "none: nothing read, no exception (Java logs a poll failure)"
            assert time.monotonic() - started >= 5 * 0.1, "none: a failing poll never spins"
            for p in range(PARTITIONS):  # (Java reads nothing while any partition has no position)
                none.seek(topic, p, 4)
            seeked = {p: [4, 5, 6] for p in range(PARTITIONS)}
            held, _ = await poll_until(none, lambda h: h == seeked, 20)
            assert held == seeked, "seeked partitions are read under none"
        finally:
            await none.close()

    asyncio.run(run())


def test_out_of_range_positions_of_all_partitions_surface_in_one_poll(
    cluster_a: ClusterHandle, unique: Any
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic = unique("refused")
    truncated = {p: 3 + p % 3 for p in range(PARTITIONS) if p != 0}  # partition 0 stays healthy

    async def run() -> None:
        await make_topic(bootstrap, topic, 10)
        await delete_before(bootstrap, topic, truncated)
        source = consumer(bootstrap, **{"auto.offset.reset": "earliest"})
        await source.start()
        try:
            source.assign((topic, p) for p in range(PARTITIONS))
            for p in range(PARTITIONS):
                source.seek(topic, p, 1)
            refused: PositionOutOfRange | None = None
            healthy: list[int] = []
            deadline = time.monotonic() + 20
            while refused is None and time.monotonic() < deadline:
                try:
                    batch = await source.poll(1000)
                except PositionOutOfRange as exc:
                    refused = exc
                    batch = exc.batch
                for tp, records in batch.items():
                    assert tp.partition == 0
                    healthy += [r.offset for r in records]
            assert refused is not None, "no poll reported the refused positions"
            found = {p.partition: (p.position, p.log_start, p.log_end) for p in refused.partitions}
            assert found == {p: (1, o, 10) for p, o in truncated.items()}, "all refused in one poll"
            for p in refused.partitions:
                source.seek(p.topic, p.partition, p.log_start)
            rest = {p: list(range(o, 10)) for p, o in truncated.items()}
            held, _ = await poll_until(source, lambda h: all(h.get(p) == v for p, v in rest.items()), 20)
            healthy += [n for n in held.pop(0, [])]
            assert held == rest
            assert healthy == list(range(1, 10)), "partition 0 read once, in order, nothing dropped"
        finally:
            await source.close()

    asyncio.run(run())


def test_log_bounds_of_many_topics_nobody_assigned_take_one_metadata_update(
    cluster_a: ClusterHandle, unique: Any
) -> None:
    """A task's start checks the log bounds of every resumed partition on the target (a probe consumer
    that tracks no topic): the client used to learn the topics one retry (100 ms) at a time, which held
    the copy of a 1,000-topic mirror back for the whole check's bound after each reconfiguration."""
    bootstrap = cluster_a.bootstrap_servers
    topics = [unique("bounds") for _ in range(30)]

    async def run() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(t, 1, 1) for t in topics])
        finally:
            await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for t in topics:
                await producer.send_and_wait(t, b"x", partition=0)
        finally:
            await producer.stop()

        probe = consumer(bootstrap)
        await probe.start()
        try:
            client = probe._consumer._client
            original, updates = client._metadata_update, []

            async def counted(*args: Any, **kwargs: Any) -> Any:
                updates.append(args[1] if len(args) > 1 else None)
                return await original(*args, **kwargs)

            client._metadata_update = counted
            wanted = [(t, 0) for t in topics] + [(topics[0], 5), ("no-such-topic-" + topics[0], 0)]
            bounds = await probe.log_bounds(wanted)
            assert bounds == {(t, 0): (0, 1) for t in topics}, "absent partitions are left out"
            assert len(updates) <= 3, f"{len(updates)} metadata updates for {len(topics)} topics"
        finally:
            await probe.close()

    asyncio.run(run())
