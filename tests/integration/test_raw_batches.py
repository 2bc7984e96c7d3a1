"""Raw record batches on real clusters: fetched as bytes from A, produced unchanged to B by an idempotent producer."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.client import AIOKafkaClient
from aiokafka.structs import TopicPartition

from pyconnect.kafka import record_batches as rb
from pyconnect.kafka.raw_batches_io import READ_COMMITTED, RawBatch, fetch_raw
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import ensure_distribution
from tests.integration.fleet import RECENT_MS, create_topic

pytestmark = pytest.mark.kafka

PER_BATCH = 40
BATCHES = 3


@contextlib.asynccontextmanager
async def _leader_of(bootstrap: str, topic: str) -> AsyncIterator[tuple[AIOKafkaClient, int]]:
    """A client of the cluster at ``bootstrap`` tracking ``topic``, and the leader of its partition 0."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        await client.add_topic(topic)
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None and leader >= 0
        yield client, leader
    finally:
        await client.close()


async def _read_all(
    bootstrap: str, topic: str, count: int, isolation_level: str = "read_uncommitted"
) -> list[tuple[Any, ...]]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", isolation_level=isolation_level
    )
    await consumer.start()
    seen: list[tuple[Any, ...]] = []
    try:
        async with asyncio.timeout(30):
            while len(seen) < count:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    seen.extend(
                        (m.offset, m.timestamp, m.timestamp_type, m.key, m.value, list(m.headers))
                        for m in messages
                    )
    finally:
        await consumer.stop()
    return seen


@pytest.mark.parametrize("compression", ["none", "lz4"])
async def test_fetched_batches_reach_the_target_byte_for_byte(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], compression: str
) -> None:
    source, target = unique("raw-src"), unique("raw-dst")
    await create_topic(cluster_a.bootstrap_servers, source)
    await create_topic(cluster_b.bootstrap_servers, target)

    writer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers,
        compression_type=None if compression == "none" else compression,
    )
    await writer.start()
    try:
        for b in range(BATCHES):
            builder = writer.create_batch()
            for i in range(b * PER_BATCH, (b + 1) * PER_BATCH):
                builder.append(
                    timestamp=RECENT_MS + 3 * i,
                    key=None if i % 5 == 0 else f"key-{i}".encode(),
                    value=None if i % 7 == 3 else bytes(range(i % 256)) * 4,
                    headers=[("n", str(i).encode()), ("none", None)] if i % 2 else [],
                )
            await (await writer.send_batch(builder, source, partition=0))
    finally:
        await writer.stop()

    tp = TopicPartition(source, 0)
    async with _leader_of(cluster_a.bootstrap_servers, source) as (client, leader):
        whole = (await fetch_raw(client, leader, [(tp, 0)], max_wait_ms=100))[tp]
        assert whole.error_code == 0 and whole.high_watermark == BATCHES * PER_BATCH
        # A fetch from the middle of a batch gets that whole batch: it starts before the position.
        middle = (await fetch_raw(client, leader, [(tp, PER_BATCH + 5)], max_wait_ms=100))[tp]
        # A fetch cut at a byte limit ends mid-batch: the broker sends the partial batch.
        first_size = rb.split(whole.records).batches[0].size
        cut = (
            await fetch_raw(client, leader, [(tp, 0)], max_wait_ms=100, partition_max_bytes=first_size + 30)
        )[tp]

    fetched = rb.split(whole.records)
    assert fetched.truncated_bytes == 0
    codec = rb.Codec.of(compression)
    assert [(h.base_offset, h.record_count, h.codec) for h in fetched.batches] == [
        (b * PER_BATCH, PER_BATCH, codec) for b in range(BATCHES)
    ]
    assert all(rb.crc_valid(whole.records, h) for h in fetched.batches)
    middle_first = rb.split(middle.records).batches[0]
    assert middle_first.base_offset == PER_BATCH
    assert rb.refusal(middle_first, position=PER_BATCH + 5, codec=codec) is rb.Refusal.BEFORE_POSITION
    cut_split = rb.split(cut.records)
    assert len(cut_split.batches) == 1 and cut_split.truncated_bytes == 30

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_b.bootstrap_servers,
        enable_idempotence=True,
        acks="all",
        compression_type=None if compression == "none" else compression,
    )
    await producer.start()
    try:
        futures = []
        for header in fetched.batches:
            assert rb.refusal(header, position=header.base_offset, codec=codec) is None
            batch = RawBatch.for_producer(producer, whole.records, header)
            futures.append(await producer.send_batch(batch, target, partition=0))
        metadata = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    assert [m.offset for m in metadata] == [b * PER_BATCH for b in range(BATCHES)]

    copied = await _read_all(cluster_b.bootstrap_servers, target, BATCHES * PER_BATCH)
    original = await _read_all(cluster_a.bootstrap_servers, source, BATCHES * PER_BATCH)
    assert len(original) == BATCHES * PER_BATCH
    assert copied == original

    out = TopicPartition(target, 0)
    async with _leader_of(cluster_b.bootstrap_servers, target) as (client, leader):
        stored = rb.split((await fetch_raw(client, leader, [(out, 0)], max_wait_ms=100))[out].records)
    assert [h.codec for h in stored.batches] == [codec] * BATCHES
    producer_ids = {h.producer_id for h in stored.batches}
    assert len(producer_ids) == 1 and producer_ids.pop() >= 0, "the target producer's own identity"
    assert [h.base_sequence for h in stored.batches] == [b * PER_BATCH for b in range(BATCHES)]


@pytest.mark.java
async def test_a_batch_of_javas_producer_is_copied_byte_for_byte(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """Golden: a zstd batch written by Java's producer (ConsoleProducer of the fetched jars)."""
    source, target = unique("raw-java-src"), unique("raw-java-dst")
    await create_topic(cluster_a.bootstrap_servers, source)
    await create_topic(cluster_b.bootstrap_servers, target)
    lines = "".join(
        f"trace:{i},empty:\tkey-{i}\tvalue-{i}-{'x' * (i % 30)}\n"
        if i % 3
        else f"only:{i}\tkey-{i}\tvalue-{i}\n"
        for i in range(60)
    )
    command = ensure_distribution().java_command(
        "org.apache.kafka.tools.ConsoleProducer",
        "--bootstrap-server",
        cluster_a.bootstrap_servers,
        "--topic",
        source,
        "--compression-codec",
        "zstd",
        "--producer-property",
        "linger.ms=2000",
        "--reader-property",
        "parse.key=true",
        "--reader-property",
        "parse.headers=true",
        heap="256m",
    )
    done = await asyncio.to_thread(
        subprocess.run, command, input=lines.encode(), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]

    tp = TopicPartition(source, 0)
    async with _leader_of(cluster_a.bootstrap_servers, source) as (client, leader):
        whole = (await fetch_raw(client, leader, [(tp, 0)], max_wait_ms=100))[tp]
    fetched = rb.split(whole.records)
    assert sum(h.record_count for h in fetched.batches) == 60
    java_header = fetched.batches[0]
    assert java_header.codec == rb.Codec.ZSTD and java_header.producer_id >= 0, "Java's idempotent default"

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_b.bootstrap_servers, enable_idempotence=True, compression_type="zstd"
    )
    await producer.start()
    try:
        futures = []
        for header in fetched.batches:
            assert rb.refusal(header, position=header.base_offset, codec=rb.Codec.ZSTD) is None
            futures.append(
                await producer.send_batch(
                    RawBatch.for_producer(producer, whole.records, header), target, partition=0
                )
            )
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    original = await _read_all(cluster_a.bootstrap_servers, source, 60)
    assert original[1][3:] == (b"key-1", b"value-1-x", [("trace", b"1"), ("empty", b"")])
    assert await _read_all(cluster_b.bootstrap_servers, target, 60) == original


async def test_read_committed_by_batch_and_a_transactional_target(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """Aborted batches found from the fetch's aborted list and markers; the rest copied in a transaction."""
    source, target = unique("raw-txn-src"), unique("raw-txn-dst")
    await create_topic(cluster_a.bootstrap_servers, source)
    await create_topic(cluster_b.bootstrap_servers, target)
    writer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers, transactional_id=unique("raw-txn-w")
    )
    await writer.start()
    try:
        for n, commit in enumerate((True, False, True, False, True)):
            async with writer.transaction() if commit else _aborting(writer):
                builder = writer.create_batch()
                for i in range(10):
                    builder.append(
                        timestamp=RECENT_MS + i, key=f"{n}-{i}".encode(), value=f"txn-{n}".encode()
                    )
                await (await writer.send_batch(builder, source, partition=0))
    finally:
        await writer.stop()

    tp = TopicPartition(source, 0)
    async with _leader_of(cluster_a.bootstrap_servers, source) as (client, leader):
        raw = (await fetch_raw(client, leader, [(tp, 0)], max_wait_ms=100, isolation_level=READ_COMMITTED))[
            tp
        ]
    batches = rb.split(raw.records).batches
    assert [h.control for h in batches] == [False, True] * 5
    assert sorted(pid for pid, _ in raw.aborted_transactions) == [batches[0].producer_id] * 2
    aborted = rb.aborted_batches(raw.records, batches, raw.aborted_transactions)
    assert aborted == {2, 6}
    kept = [
        h
        for index, h in enumerate(batches)
        if index not in aborted and rb.refusal(h, position=h.base_offset, codec=rb.Codec.NONE) is None
    ]
    assert [h.base_offset for h in kept] == [0, 22, 44]

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_b.bootstrap_servers, transactional_id=unique("raw-txn-p")
    )
    await producer.start()
    try:
        async with producer.transaction():
            for header in kept:
                await producer.send_batch(
                    RawBatch.for_producer(producer, raw.records, header), target, partition=0
                )
    finally:
        await producer.stop()
    committed = await _read_all(cluster_a.bootstrap_servers, source, 30, "read_committed")
    copied = await _read_all(cluster_b.bootstrap_servers, target, 30, "read_committed")
    assert [m[3:] for m in copied] == [m[3:] for m in committed]
    assert [m[4] for m in committed] == [b"txn-0"] * 10 + [b"txn-2"] * 10 + [b"txn-4"] * 10


class _aborting:
    """A transaction that aborts at its end (aiokafka's ``transaction()`` commits)."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self._producer = producer

    async def __aenter__(self) -> None:
        await self._producer.begin_transaction()

    async def __aexit__(self, *_exc: object) -> None:
        await self._producer.abort_transaction()
