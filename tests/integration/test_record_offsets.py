"""The bounded reads of :mod:`pyconnect.kafka.record_offsets` on real Kafka: stretches of several partitions
(empty, bounded, repeated, past the end) answer exactly their records, every end offset read before the
first fetch; the reader never long-polls past ``FETCH_WAIT_MS`` (a broker answers one connection's
requests in order, so an idle long poll would hold the next stretch's requests)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka import record_offsets
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.log import TopicPartition
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import create_topic

pytestmark = pytest.mark.kafka


async def _write(bootstrap: str, topic: str, counts: list[int]) -> None:
    producer = create_producer({"bootstrap.servers": bootstrap}, acks="all")
    await producer.start()
    try:
        for partition, count in enumerate(counts):
            for n in range(count):
                await producer.send_and_wait(topic, b"%d" % n, partition=partition)
    finally:
        await producer.stop()


def test_stretches_of_several_partitions_answer_exactly_their_records(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    bootstrap, topic = cluster_a.bootstrap_servers, unique("stretches")
    asyncio.run(create_topic(bootstrap, topic, 3))
    asyncio.run(_write(bootstrap, topic, [10, 0, 5]))
    config = {"bootstrap.servers": bootstrap}
    stretches = [
        (topic, 0, -1, None),
        (topic, 0, 3, 7),
        (topic, 1, -1, None),
        (topic, 2, 4, None),
        (topic, 2, 1, None),
        (topic, 2, 1, None),
        (topic, 2, 3, 99),
    ]
    found = asyncio.run(record_offsets.committed_record_offsets(config, stretches, 30))
    assert found == {
        (topic, 0, -1, None): list(range(10)),
        (topic, 0, 3, 7): [4, 5, 6],
        (topic, 1, -1, None): [],
        (topic, 2, 4, None): [],
        (topic, 2, 1, None): [2, 3, 4],
        (topic, 2, 3, 99): [4],
    }
    bounds = asyncio.run(record_offsets.partition_bounds(config, [(topic, p) for p in range(3)], 30))
    assert bounds == {(topic, 0): (0, 10), (topic, 1): (0, 0), (topic, 2): (0, 5)}


def test_the_reader_fetches_without_a_long_poll(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    bootstrap, topic = cluster_a.bootstrap_servers, unique("reader")
    asyncio.run(create_topic(bootstrap, topic, 1))

    async def wait_ms() -> int:
        consumer = record_offsets._read_committed({"bootstrap.servers": bootstrap})
        await consumer.start()
        try:
            assert await consumer.end_offsets([TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): 0}
            return int(seam.fetcher_settings(seam.consumer_fetcher(consumer))[1])
        finally:
            await consumer.stop()

    assert asyncio.run(wait_ms()) == record_offsets.FETCH_WAIT_MS <= 100
