"""Smoke tests of aiokafka against the real test clusters (Kafka 4.x brokers by default).

They prove the fixtures work and that the client features the runtime relies on behave on the
pinned broker: batched produce/fetch with keys, headers and CreateTime timestamps, topic configs,
consumer-group offsets, transactions with both isolation levels, and two distinct clusters.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.structs import OffsetAndMetadata

from pyconnect.testing.backends import ClusterHandle

pytestmark = pytest.mark.kafka

DEADLINE_S = 60.0
CREATE_TIME = 0  # timestamp_type of a record whose timestamp the producer chose
DYNAMIC_TOPIC_CONFIG = 1  # DescribeConfigs config_source of a per-topic override


@contextlib.asynccontextmanager
async def admin_client(cluster: ClusterHandle) -> AsyncIterator[AIOKafkaAdminClient]:
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=30000)
    await admin.start()
    try:
        yield admin
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def started(client: AIOKafkaProducer | AIOKafkaConsumer) -> AsyncIterator[Any]:
    await client.start()
    try:
        yield client
    finally:
        await client.stop()


async def create_topic(
    cluster: ClusterHandle, name: str, partitions: int, configs: dict[str, str] | None = None
) -> None:
    async with admin_client(cluster) as admin:
        response = await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs or {})])
    errors = [(t[0], t[1], t[2] if len(t) > 2 else None) for t in response.topic_errors]
    assert errors and all(code == 0 for _, code, _ in errors), f"CreateTopics failed: {errors}"


def consumer(cluster: ClusterHandle, **config: Any) -> AIOKafkaConsumer:
    config.setdefault("enable_auto_commit", False)
    config.setdefault("auto_offset_reset", "earliest")
    return AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, **config)


async def read_until(
    client: AIOKafkaConsumer, end: dict[TopicPartition, int], *, within: float = DEADLINE_S
) -> dict[TopicPartition, list[ConsumerRecord]]:
    """Fetch until ``end``'s partitions are all assigned and every position reaches ``end`` (bounded)."""
    got: dict[TopicPartition, list[ConsumerRecord]] = {tp: [] for tp in end}
    deadline = time.monotonic() + within
    for _ in range(10_000):
        assigned = client.assignment()
        positions = {tp: await client.position(tp) for tp in end if tp in assigned}
        if len(positions) == len(end) and all(positions[tp] >= offset for tp, offset in end.items()):
            return got
        assert time.monotonic() < deadline, f"positions {positions} did not reach {end} in {within:.0f}s"
        batches = await client.getmany(timeout_ms=500, max_records=5000)
        for tp, records in batches.items():
            got[tp].extend(records)
    raise AssertionError("read_until: too many fetch rounds")


def values(records: Iterable[ConsumerRecord]) -> list[bytes | None]:
    return [r.value for r in records]


async def test_ten_thousand_records_round_trip_intact_and_in_order(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic, partitions, per_partition = unique("bulk"), 4, 2500
    await create_topic(cluster_a, topic, partitions)
    base_ms = (int(time.time()) - 600) * 1000  # explicit, in the past: within message.timestamp.*.max.ms

    expected: dict[int, list[tuple[Any, ...]]] = {}
    for p in range(partitions):
        rows = []
        for i in range(per_partition):
            key = f"key-{p}-{i}".encode()
            value = None if i % 997 == 0 else f"value-{p}-{i}-".encode() + b"x" * (i % 50)
            headers = () if i % 3 == 0 else (("seq", str(i).encode()), ("dup", b"a"), ("dup", b""))
            rows.append((key, value, headers, base_ms + p * 100_000 + i))
        expected[p] = rows

    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers, acks="all", max_batch_size=64 * 1024, linger_ms=5
    )
    async with started(producer):
        futures = []
        for p, rows in expected.items():
            batch = producer.create_batch()
            for key, value, headers, ts in rows:
                if batch.append(key=key, value=value, timestamp=ts, headers=list(headers)) is None:
                    futures.append((p, await producer.send_batch(batch, topic, partition=p)))
                    batch = producer.create_batch()
                    assert batch.append(key=key, value=value, timestamp=ts, headers=list(headers)) is not None
            futures.append((p, await producer.send_batch(batch, topic, partition=p)))
        assert len(futures) > partitions, "records should span several batches per partition"
        base_offsets: dict[int, list[int]] = {p: [] for p in expected}
        for p, future in futures:
            base_offsets[p].append((await future).offset)
    for p, offsets in base_offsets.items():
        assert offsets == sorted(offsets) and offsets[0] == 0, (
            f"partition {p} batches out of order: {offsets}"
        )

    tps = {TopicPartition(topic, p): per_partition for p in expected}
    async with started(consumer(cluster_a, max_partition_fetch_bytes=1024 * 1024)) as c:
        c.assign(list(tps))
        got = await read_until(c, tps)

    assert sum(len(v) for v in got.values()) == partitions * per_partition
    for tp, records in got.items():
        assert [r.offset for r in records] == list(range(per_partition)), f"{tp}: offsets not contiguous"
        actual = [(r.key, r.value, tuple(r.headers), r.timestamp) for r in records]
        assert actual == expected[tp.partition], f"{tp}: records differ from what was produced"
        assert {r.timestamp_type for r in records} == {CREATE_TIME}


async def test_topic_created_with_configs_describes_them(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("cfg")
    configs = {"cleanup.policy": "compact", "retention.ms": "3600000", "segment.bytes": "1048576"}
    await create_topic(cluster_a, topic, 3, configs)

    async with admin_client(cluster_a) as admin:
        described = await admin.describe_topics([topic])
        (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])

    (meta,) = described
    assert meta["error_code"] == 0 and meta["topic"] == topic
    assert sorted(p["partition"] for p in meta["partitions"]) == [0, 1, 2]
    (resource,) = response.resources
    error_code, _message, _type, name, entries = resource[:5]
    assert (error_code, name) == (0, topic)
    by_name = {e[0]: (e[1], e[3]) for e in entries}  # name -> (value, config_source)
    for key, value in configs.items():
        assert by_name[key] == (value, DYNAMIC_TOPIC_CONFIG), f"{key}: {by_name.get(key)}"
    assert by_name["min.insync.replicas"][1] != DYNAMIC_TOPIC_CONFIG


async def test_group_offsets_commit_fetch_and_resume(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic, group = unique("grp"), unique("group")
    await create_topic(cluster_a, topic, 2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with started(
        AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all")
    ) as producer:
        for i in range(10):
            await producer.send(topic, f"p0-{i}".encode(), partition=0)
            await producer.send(topic, f"p1-{i}".encode(), partition=1)
        await producer.flush()

    async with started(consumer(cluster_a, group_id=group)) as c:
        c.subscribe([topic])
        await read_until(c, {tp0: 10, tp1: 10})
        await c.commit({tp0: OffsetAndMetadata(3, "three"), tp1: OffsetAndMetadata(7, "")})

    async with started(consumer(cluster_a, group_id=group)) as fresh:
        assert await fresh.committed(tp0) == 3
        assert await fresh.committed(tp1) == 7
    async with admin_client(cluster_a) as admin:
        offsets = await admin.list_consumer_group_offsets(group)
    assert offsets == {tp0: OffsetAndMetadata(3, "three"), tp1: OffsetAndMetadata(7, "")}

    async with started(consumer(cluster_a, group_id=group)) as resumed:
        resumed.subscribe([topic])
        got = await read_until(resumed, {tp0: 10, tp1: 10})
    assert values(got[tp0]) == [f"p0-{i}".encode() for i in range(3, 10)]
    assert values(got[tp1]) == [f"p1-{i}".encode() for i in range(7, 10)]


async def test_transactions_visible_per_isolation_level(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("txn")
    await create_topic(cluster_a, topic, 2)
    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers, transactional_id=unique("txid"), acks="all"
    )
    async with started(producer):
        async with producer.transaction():
            for i in range(3):
                await producer.send(topic, f"committed-{i}".encode(), partition=i % 2)
        await producer.begin_transaction()
        for i in range(2):
            await producer.send(topic, f"aborted-{i}".encode(), partition=i % 2)
        await producer.flush()
        await producer.abort_transaction()

    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    seen: dict[str, set[bytes | None]] = {}
    for isolation in ("read_committed", "read_uncommitted"):
        async with started(consumer(cluster_a, isolation_level=isolation)) as c:
            c.assign(tps)
            # 3 + 2 data records and one commit/abort marker per partition per transaction. The
            # transaction coordinator writes the markers after EndTxn has answered, so the last
            # stable offset (read_committed's end) can lag for a moment: wait for it, bounded.
            deadline = asyncio.get_running_loop().time() + 10
            end = await c.end_offsets(tps)
            while sum(end.values()) < 3 + 2 + 4 and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
                end = await c.end_offsets(tps)
            assert sum(end.values()) == 3 + 2 + 4, end
            got = await read_until(c, end)
        seen[isolation] = {v for records in got.values() for v in values(records)}
    committed = {f"committed-{i}".encode() for i in range(3)}
    aborted = {f"aborted-{i}".encode() for i in range(2)}
    assert seen["read_committed"] == committed
    assert seen["read_uncommitted"] == committed | aborted


async def test_clusters_a_and_b_are_distinct(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("only-a")
    await create_topic(cluster_a, topic, 1)
    async with started(
        AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all")
    ) as producer:
        await producer.send_and_wait(topic, b"on-a")

    async with admin_client(cluster_a) as admin_a, admin_client(cluster_b) as admin_b:
        topics_a, topics_b = await admin_a.list_topics(), await admin_b.list_topics()
        id_a = (await admin_a.describe_cluster())["cluster_id"]
        id_b = (await admin_b.describe_cluster())["cluster_id"]
    assert topic in topics_a
    assert topic not in topics_b
    assert id_a and id_b and id_a != id_b
    assert set(cluster_a.bootstrap_servers.split(",")).isdisjoint(cluster_b.bootstrap_servers.split(","))
