"""``end_offsets`` on a real cluster: right answers, read_committed, and no wait behind a parked fetch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaTimeoutError

from pyconnect.kafka.end_offsets import end_offsets
from pyconnect.testing.backends import ClusterHandle
from tests.integration.test_kafka_log import create_topic

pytestmark = pytest.mark.kafka

PARKED_FETCH_MS = 20_000


async def test_end_offsets_answer_while_a_long_poll_fetch_is_parked(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """A consumer tailing a quiet topic holds a fetch on the broker for fetch.max.wait.ms; asking
    the end offsets must not queue behind it (the broker answers one connection in order)."""
    topic = unique("eo")
    await create_topic(cluster_a.bootstrap_servers, topic, partitions=3, compacted=False)
    producer = AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for i in range(10):
            await producer.send_and_wait(topic, b"v", partition=i % 3)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=cluster_a.bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=PARKED_FETCH_MS,
    )
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(tps)
        got = await consumer.getmany(*tps, timeout_ms=5000)
        while sum(len(v) for v in got.values()) < 10:
            more = await consumer.getmany(*tps, timeout_ms=5000)
            assert more, "the ten records are read"
            for tp, records in more.items():
                got.setdefault(tp, []).extend(records)
        await asyncio.sleep(0.5)  # the next fetch is now parked on the broker
        started = time.monotonic()
        ends = await end_offsets(consumer._client, tps)
        took = time.monotonic() - started
        assert ends == {TopicPartition(topic, 0): 4, TopicPartition(topic, 1): 3, TopicPartition(topic, 2): 3}
        assert took < PARKED_FETCH_MS / 1000 / 4, f"answered in {took:.1f}s, not behind the parked fetch"
    finally:
        await consumer.stop()


async def test_read_committed_end_is_the_last_stable_offset(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("eo-txn")
    await create_topic(cluster_a.bootstrap_servers, topic, partitions=1, compacted=False)
    plain = AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all")
    txn = AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, transactional_id=unique("txn"))
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster_a.bootstrap_servers)
    await plain.start()
    await txn.start()
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        for _ in range(3):
            await plain.send_and_wait(topic, b"v", partition=0)
        await txn.begin_transaction()
        await txn.send_and_wait(topic, b"open", partition=0)
        assert await end_offsets(consumer._client, [tp]) == {tp: 4}
        assert await end_offsets(consumer._client, [tp], read_committed=True) == {tp: 3}
        await txn.commit_transaction()
        # The coordinator writes the commit marker (which takes an offset too) after the commit returns.
        deadline = time.monotonic() + 30
        while (stable := await end_offsets(consumer._client, [tp], read_committed=True)) != {tp: 5}:
            assert time.monotonic() < deadline, f"the last stable offset stays at {stable}"
            await asyncio.sleep(0.05)
    finally:
        await consumer.stop()
        await txn.stop()
        await plain.stop()


async def test_a_partition_that_does_not_exist_times_out_naming_it(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("eo-missing")
    await create_topic(cluster_a.bootstrap_servers, topic, partitions=1, compacted=False)
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster_a.bootstrap_servers)
    await consumer.start()
    try:
        with pytest.raises(KafkaTimeoutError, match=f"{topic}.*7"):
            await end_offsets(
                consumer._client, [TopicPartition(topic, 0), TopicPartition(topic, 7)], timeout_s=1.5
            )
    finally:
        await consumer.stop()
