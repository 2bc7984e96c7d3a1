"""Produce requests written as frames (pyconnect.kafka.produce_writes) on real clusters: records and
fetched batches in pieces reach the broker intact, idempotent, transactional and with acks=0."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

from pyconnect.kafka import produce_writes
from pyconnect.kafka import record_batches as rb
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.raw_batches_io import READ_COMMITTED, READ_UNCOMMITTED, RawBatch, fetch_raw
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import RECENT_MS, create_topic
from tests.integration.test_raw_batches import _leader_of

pytestmark = pytest.mark.kafka

RECORDS = 120


async def _read(
    bootstrap: str, topic: str, count: int, isolation_level: str = "read_uncommitted"
) -> list[Any]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", isolation_level=isolation_level
    )
    await consumer.start()
    seen: list[tuple[Any, ...]] = []
    try:
        async with asyncio.timeout(30):
            while len(seen) < count:
                for tp, messages in (await consumer.getmany(timeout_ms=500)).items():
                    seen.extend(
                        (tp.partition, m.offset, m.timestamp, m.key, m.value, list(m.headers))
                        for m in messages
                    )
    finally:
        await consumer.stop()
    return sorted(seen)


async def _source_batches(cluster: ClusterHandle, topic: str) -> bytes:
    """Three batches of records in ``topic`` partition 0, fetched back as the broker stores them."""
    writer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    await writer.start()
    try:
        for b in range(3):
            builder = writer.create_batch()
            for i in range(b * 40, (b + 1) * 40):
                builder.append(
                    timestamp=RECENT_MS + i,
                    key=f"k{i}".encode(),
                    value=bytes(range(i % 256)),
                    headers=[("n", str(i).encode())],
                )
            await (await writer.send_batch(builder, topic, partition=0))
    finally:
        await writer.stop()
    return await _stored(cluster, topic)


async def _stored(cluster: ClusterHandle, topic: str, isolation_level: int = READ_UNCOMMITTED) -> bytes:
    """Partition 0 of ``topic`` as the broker stores it (one fetch from offset 0)."""
    tp = TopicPartition(topic, 0)
    async with _leader_of(cluster.bootstrap_servers, topic) as (client, leader):
        fetched = await fetch_raw(client, leader, [(tp, 0)], isolation_level=isolation_level, max_wait_ms=100)
    return bytes(fetched[tp].records)


@pytest.fixture
def frames_written(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many produce requests went out as frames (each call's version)."""
    versions: list[int] = []
    encode = produce_writes.produce_frames

    def counting(version: int, *args: Any) -> Any:
        versions.append(version)
        return encode(version, *args)

    monkeypatch.setattr(produce_writes, "produce_frames", counting)
    return versions


@pytest.mark.parametrize("idempotent", [True, False])
async def test_records_and_fetched_batches_in_pieces_arrive_intact(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    frames_written: list[int],
    idempotent: bool,
) -> None:
    source, target = unique("frames-src"), unique("frames-dst")
    await create_topic(cluster_a.bootstrap_servers, source)
    await create_topic(cluster_b.bootstrap_servers, target, partitions=3)
    fetched = await _source_batches(cluster_a, source)

    producer = create_producer(
        {"bootstrap.servers": cluster_b.bootstrap_servers, "enable.idempotence": str(idempotent).lower()}
    )
    assert produce_writes.writes_frames(producer)
    await producer.start()
    try:
        records = [
            await producer.send(
                target, key=f"r{i}".encode(), value=b"v" * i, partition=i % 2, timestamp_ms=RECENT_MS
            )
            for i in range(RECORDS)
        ]
        raw = []
        for header in rb.split(fetched).batches:
            batch = RawBatch.for_producer(producer, fetched, header)
            assert type(batch._build()) is tuple  # the records go out as a view of the fetched bytes
            raw.append(await producer.send_batch(batch, target, partition=2))
        record_meta = await asyncio.gather(*records)
        raw_meta = await asyncio.gather(*raw)
    finally:
        await producer.stop()
    assert frames_written and set(frames_written) == {7}
    assert sorted(m.offset for m in record_meta if m.partition == 0) == list(range(RECORDS // 2))
    assert [m.offset for m in raw_meta] == [0, 40, 80]

    copied = await _read(cluster_b.bootstrap_servers, target, RECORDS + 120)
    original = await _read(cluster_a.bootstrap_servers, source, 120)
    assert [row[1:] for row in copied if row[0] == 2] == [row[1:] for row in original]
    assert [row for row in copied if row[0] < 2] == sorted(
        (i % 2, i // 2, RECENT_MS, f"r{i}".encode(), b"v" * i, []) for i in range(RECORDS)
    )


async def test_a_transactional_producer_commits_and_aborts_batches_written_as_frames(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    frames_written: list[int],
) -> None:
    source, target = unique("frames-txn-src"), unique("frames-txn-dst")
    await create_topic(cluster_a.bootstrap_servers, source)
    await create_topic(cluster_b.bootstrap_servers, target)
    fetched = await _source_batches(cluster_a, source)
    headers = rb.split(fetched).batches

    producer = create_producer(
        {"bootstrap.servers": cluster_b.bootstrap_servers, "transactional.id": unique("frames-txn")}
    )
    await producer.start()
    try:
        async with producer.transaction():
            await (
                await producer.send_batch(
                    RawBatch.for_producer(producer, fetched, headers[0]), target, partition=0
                )
            )
        await producer.begin_transaction()
        await (
            await producer.send_batch(
                RawBatch.for_producer(producer, fetched, headers[1]), target, partition=0
            )
        )
        await producer.abort_transaction()
        async with producer.transaction():
            await (
                await producer.send_batch(
                    RawBatch.for_producer(producer, fetched, headers[2]), target, partition=0
                )
            )
    finally:
        await producer.stop()
    assert len(frames_written) >= 3

    committed = await _read(cluster_b.bootstrap_servers, target, 80, isolation_level="read_committed")
    original = await _read(cluster_a.bootstrap_servers, source, 120)
    assert [row[2:] for row in committed] == [row[2:] for row in original[:40] + original[80:]]
    stored = await _stored(cluster_b, target, READ_COMMITTED)
    transactional = [h for h in rb.split(stored).batches if not h.control]
    assert len(transactional) == 3 and all(h.transactional and rb.crc_valid(stored, h) for h in transactional)


async def test_acks_zero_requests_are_written_without_waiting_for_an_answer(
    cluster_b: ClusterHandle, unique: Callable[[str], str], frames_written: list[int]
) -> None:
    target = unique("frames-acks0")
    await create_topic(cluster_b.bootstrap_servers, target)
    producer = create_producer(
        {"bootstrap.servers": cluster_b.bootstrap_servers, "acks": "0", "enable.idempotence": "false"}
    )
    await producer.start()
    try:
        sent = [await producer.send(target, value=str(i).encode(), partition=0) for i in range(50)]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()
    assert frames_written
    values = [row[4] for row in await _read(cluster_b.bootstrap_servers, target, 50)]
    assert values == [str(i).encode() for i in range(50)]
