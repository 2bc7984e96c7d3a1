"""BatchSender on a real cluster: placement, order, offsets per batch, compression, headers."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord, RecordTooLargeError, java_partition
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import RECENT_MS

pytestmark = pytest.mark.kafka


async def test_batches_land_where_and_as_promised(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("batch")
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster_a.bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 4, 1)])
    await admin.close()

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers,
        acks="all",
        enable_idempotence=True,
        compression_type="zstd",
        max_batch_size=16384,
    )
    await producer.start()
    records: list[OutgoingRecord] = []
    for i in range(3000):
        kind = i % 3
        records.append(
            OutgoingRecord(
                topic,
                key=None if kind == 2 else f"key-{i % 50}".encode(),
                value=f"value-{i}".encode() * 3,
                partition=i % 4 if kind == 0 else None,
                timestamp_ms=RECENT_MS + i,
                headers=[("i", str(i).encode())],
            )
        )
    try:
        sent = await BatchSender(producer, rng=random.Random(7)).send(records)
        metadata = await asyncio.gather(*(b.future for b in sent))
    finally:
        await producer.stop()
    assert sorted(i for b in sent for i in b.indices) == list(range(3000))
    assert len(sent) < 100, "records travel in batches, not one by one"

    expected_at: dict[tuple[int, int], int] = {}
    for batch, meta in zip(sent, metadata, strict=True):
        assert (meta.topic, meta.partition) == (batch.topic, batch.partition)
        for position, index in enumerate(batch.indices):
            expected_at[(batch.partition, meta.offset + position)] = index

    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=cluster_a.bootstrap_servers, auto_offset_reset="earliest"
    )
    await consumer.start()
    seen = 0
    try:
        async with asyncio.timeout(60):
            while seen < 3000:
                for tp, messages in (await consumer.getmany(timeout_ms=1000)).items():
                    for m in messages:
                        index = expected_at[(tp.partition, m.offset)]
                        record = records[index]
                        assert (m.key, m.value, m.timestamp) == (
                            record.key,
                            record.value,
                            record.timestamp_ms,
                        )
                        assert list(m.headers) == [("i", str(index).encode())]
                        if record.partition is not None:
                            assert tp.partition == record.partition
                        elif record.key is not None:
                            assert tp.partition == java_partition(record.key, 4)
                        seen += 1
    finally:
        await consumer.stop()
    unkeyed_partitions = {
        b.partition
        for b in sent
        for i in b.indices
        if records[i].key is None and records[i].partition is None
    }
    assert len(unkeyed_partitions) == 1, "unkeyed records of one call stick to one partition"


async def test_a_record_larger_than_a_request_is_refused_before_sending(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers, max_batch_size=1024, max_request_size=4096
    )
    await producer.start()
    try:
        with pytest.raises(RecordTooLargeError):
            await BatchSender(producer).send(
                [
                    OutgoingRecord(unique("big"), None, b"x", partition=0),
                    OutgoingRecord(unique("big"), None, b"x" * 5000, partition=0),
                ]
            )
    finally:
        await producer.stop()
