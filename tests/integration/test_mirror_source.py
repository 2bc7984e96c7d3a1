"""MirrorSourceConnector on a pyconnect worker of cluster B replicates cluster A, record for record.

One worker process whose Connect group lives on B runs the connector with ByteArrayConverter. Checked:
remote topic naming (default and identity policies), partition/order/key/value/header/timestamp
equality, creation-time and periodic topic config sync, partition growth, discovery of a topic created
after start, the offset syncs on A (decoded with our codec, against the replicated offsets) and the
Connect source offsets under Java's key bytes. The disaster-recovery connector JSON of Red Hat's
MirrorMaker 2 guide (identity policy, offset syncs on the target, ``replication.factor: -1``, heartbeats
off, JSON numbers and booleans as values) is POSTed as written and must work.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from connectors.mirror.records import OffsetSync
from pyconnect.protocol.internal_records import encode_offset_key
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import RECENT_MS, fleet, python_workers, running_tasks, wait_for

pytestmark = pytest.mark.kafka

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
OFFSET_SYNCS_TOPIC = "mm2-offset-syncs.B.internal"
Row = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes], ...], int]


def mirror_config(a: ClusterHandle, b: ClusterHandle, topics: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "2",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a.bootstrap_servers,
        "target.cluster.bootstrap.servers": b.bootstrap_servers,
        "topics": topics,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.configs.interval.seconds": "2",
        "sync.topic.acls.enabled": "false",
        "offset.lag.max": "10",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        **extra,
    }


async def _admin(bootstrap: str) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    return admin


async def create_and_fill(
    bootstrap: str, topic: str, partitions: int, count: int, configs: dict[str, str] | None = None
) -> None:
    """Create ``topic`` and produce ``count`` keyed records with headers and explicit timestamps."""
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
    finally:
        await admin.close()
    await produce(bootstrap, topic, partitions, count)


async def produce(bootstrap: str, topic: str, partitions: int, count: int, first: int = 0) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for i in range(first, first + count):
            key = None if i % 7 == 3 else f"k{i}".encode()
            value = None if i % 11 == 5 and key is not None else f"v{i}".encode() * (1 + i % 3)
            headers = [("h", f"x{i}".encode()), ("h", b"\x00\xff"), ("n", str(i).encode())][: i % 4]
            await producer.send(
                topic,
                value,
                key=key,
                partition=i % partitions,
                timestamp_ms=RECENT_MS + i,
                headers=headers,
            )
        await producer.flush()
    finally:
        await producer.stop()


async def produce_transactions(bootstrap: str, topic: str) -> None:
    """One partition: committed c0-c4 (offsets 0-4), aborted a5-a9 (6-10), committed c10-c14 (12-16)."""
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{topic}-producer")
    await producer.start()
    try:
        for values, commit in ((range(5), True), (range(5, 10), False), (range(10, 15), True)):
            await producer.begin_transaction()
            for i in values:
                await producer.send(topic, f"{'c' if commit else 'a'}{i}".encode(), key=b"k", partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await producer.stop()


async def read_all(bootstrap: str, topic: str, timeout: float) -> dict[int, list[Row]]:
    """Every record of ``topic`` up to its current end offsets, by partition (``{}`` if it is missing)."""
    count, _ = await topic_state(bootstrap, topic, None)
    if not count:
        return {}
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    rows: dict[int, list[Row]] = {}
    try:
        partitions = [TopicPartition(topic, p) for p in range(count)]
        consumer.assign(partitions)
        ends = await consumer.end_offsets(partitions)
        positions = {tp: 0 for tp in partitions}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(positions[tp] < ends[tp] for tp in partitions):
            batch = await consumer.getmany(timeout_ms=500)
            for tp, messages in batch.items():
                for m in messages:
                    rows.setdefault(tp.partition, []).append(
                        (m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp)
                    )
                    positions[tp] = m.offset + 1
    finally:
        await consumer.stop()
    return rows


async def read_offset_syncs(
    bootstrap: str, topics: set[str], timeout: float = 5.0, syncs_topic: str = OFFSET_SYNCS_TOPIC
) -> list[OffsetSync]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    found = []
    try:
        consumer.assign([TopicPartition(syncs_topic, 0)])
        end = (await consumer.end_offsets([TopicPartition(syncs_topic, 0)]))[TopicPartition(syncs_topic, 0)]
        deadline = time.monotonic() + timeout
        position = 0
        while position < end and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    position = m.offset + 1
                    sync = OffsetSync.deserialize_record(m.key, m.value)
                    if sync.topic in topics:
                        found.append(sync)
    finally:
        await consumer.stop()
    return found


async def read_connect_offsets(bootstrap: str, topic: str) -> dict[bytes, Any]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    latest: dict[bytes, Any] = {}
    try:
        idle = 0
        while idle < 2:
            batch = await consumer.getmany(timeout_ms=500)
            idle = 0 if batch else idle + 1
            for messages in batch.values():
                for m in messages:
                    latest[m.key] = None if m.value is None else json.loads(m.value)
    finally:
        await consumer.stop()
    return latest


async def topic_state(bootstrap: str, topic: str, config: str | None) -> tuple[int, str | None]:
    """Partition count of ``topic`` (0 when missing) and the value of its ``config``."""
    admin = await _admin(bootstrap)
    try:
        if topic not in await admin.list_topics():
            return 0, None
        described = await admin.describe_topics([topic])
        partitions = len(described[0]["partitions"]) if described and described[0]["error_code"] == 0 else 0
        value = None
        if partitions and config is not None:
            for response in await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)]):
                for resource in response.to_object()["resources"]:
                    for entry in resource["config_entries"]:
                        if entry["config_names"] == config:
                            value = entry["config_value"]
        return partitions, value
    finally:
        await admin.close()


async def alter_and_grow(bootstrap: str, topic: str, config: str, value: str, partitions: int) -> None:
    admin = await _admin(bootstrap)
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, {config: value})])
        await admin.create_partitions({topic: NewPartitions(partitions)})
    finally:
        await admin.close()


def source_rows(bootstrap: str, topic: str, expected: int) -> dict[int, list[Row]]:
    rows = asyncio.run(read_all(bootstrap, topic, 30))
    assert sum(map(len, rows.values())) == expected
    return rows


def wait_mirrored(bootstrap: str, topic: str, expected: dict[int, list[Row]], timeout: float) -> float:
    """Wait until ``topic`` on the target equals ``expected`` record for record; seconds it took."""
    started = time.monotonic()
    want = sum(map(len, expected.values()))
    got: dict[int, list[Row]] = {}
    while time.monotonic() - started < timeout:
        got = asyncio.run(read_all(bootstrap, topic, 10))
        if sum(map(len, got.values())) >= want:
            break
        time.sleep(1)
    assert {p: len(r) for p, r in got.items()} == {p: len(r) for p, r in expected.items()}, topic
    assert got == expected, topic
    return time.monotonic() - started


def test_default_policy_mirrors_records_configs_partitions_and_new_topics(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("mm")
    topic, late = f"{prefix}-t", f"{prefix}-late"
    asyncio.run(create_and_fill(a, topic, 3, 600, {"retention.ms": "86400001"}))
    expected = source_rows(a, topic, 600)
    workers = python_workers(b, tmp_path, unique("mm-group"), 1)
    with fleet(workers) as (worker,):
        started = time.monotonic()
        code, body = worker.rest(
            "POST",
            "/connectors",
            {"name": "mirror", "config": mirror_config(cluster_a, cluster_b, f"{prefix}-.*")},
        )
        assert code == 201, body
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "mirror", 2), 60)
        took = wait_mirrored(b, f"A.{topic}", expected, 60)
        print(
            f"\n600 records over 3 partitions mirrored {time.monotonic() - started:.1f} s after POST "
            f"({took:.1f} s after the tasks ran)"
        )
        assert asyncio.run(topic_state(b, f"A.{topic}", "retention.ms")) == (3, "86400001")

        # Offset syncs: decodable, on partition 0 of the offset-syncs topic on A, one-to-one offsets
        # (fresh remote topic, no gaps), and each partition's latest sync reaches its last record once
        # delayed syncs are promoted at an offset commit. (The very first sync of a partition may never
        # be sent: with all permits in flight a newer triggered sync replaces it, as in Java.)
        last = {p: rows[-1][1] for p, rows in expected.items()}

        def synced_to_end() -> list[OffsetSync] | None:
            syncs = asyncio.run(read_offset_syncs(a, {topic}))
            newest = {s.partition: s.upstream_offset for s in syncs}
            return syncs if newest == last else None

        syncs = wait_for("offset syncs up to the last records", synced_to_end, 30)
        assert all(s.upstream_offset == s.downstream_offset for s in syncs)
        assert {s.partition for s in syncs} == {0, 1, 2}
        assert len(syncs) < 600, "offset.lag.max=10 must thin the syncs out"

        # Connect source offsets under Java's key bytes, holding the last replicated offset.
        def committed() -> dict[bytes, Any] | None:
            stored = asyncio.run(read_connect_offsets(b, str(worker.offset_topic)))
            keys = {
                encode_offset_key("mirror", {"cluster": "A", "partition": p, "topic": topic}): {"offset": o}
                for p, o in last.items()
            }
            return stored if all(stored.get(k) == v for k, v in keys.items()) else None

        wait_for("Java-keyed source offsets", committed, 30)

        # Periodic config sync, partition growth and a topic created after start.
        asyncio.run(alter_and_grow(a, topic, "retention.ms", "86400002", 4))
        asyncio.run(create_and_fill(a, late, 2, 40))
        late_expected = source_rows(a, late, 40)
        changed_at = time.monotonic()
        wait_for(
            "config and partition count synced",
            lambda: asyncio.run(topic_state(b, f"A.{topic}", "retention.ms")) == (4, "86400002"),
            30,
        )
        wait_mirrored(b, f"A.{late}", late_expected, 45)
        print(f"late topic mirrored {time.monotonic() - changed_at:.1f} s after its creation")

        asyncio.run(produce(a, topic, 4, 8, first=600))
        grown = source_rows(a, topic, 608)
        wait_mirrored(b, f"A.{topic}", grown, 45)
        code, status = worker.rest("GET", "/connectors/mirror/status")
        assert code == 200 and status["connector"]["state"] == "RUNNING", status


def test_identity_policy_keeps_topic_names(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("ident")
    transactional = f"{topic}-tx"
    asyncio.run(create_and_fill(a, topic, 3, 90))
    asyncio.run(produce_transactions(a, transactional))
    expected = source_rows(a, topic, 90)
    workers = python_workers(b, tmp_path, unique("mm-group"), 1)
    with fleet(workers) as (worker,):
        config = mirror_config(
            cluster_a,
            cluster_b,
            f"{topic}.*",
            **{"replication.policy.class": IDENTITY, "consumer.isolation.level": "read_committed"},
        )
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-identity", "config": config})
        assert code == 201, body
        wait_mirrored(b, topic, expected, 60)
        assert asyncio.run(topic_state(b, f"A.{topic}", "retention.ms"))[0] == 0
        syncs = wait_for(
            "offset syncs of the identity flow",
            lambda: asyncio.run(read_offset_syncs(a, {topic})) or None,
            30,
        )
        assert {s.partition for s in syncs} == {0, 1, 2}

        # read_committed: the aborted transaction is not replicated, and the upstream gap it leaves
        # (aborted records and markers) forces an offset sync mapping upstream 12 to downstream 5.
        def replicated_transactions() -> list[Row] | None:
            rows = asyncio.run(read_all(b, transactional, 10)).get(0, [])
            return rows if len(rows) >= 10 else None

        def gap_synced() -> list[OffsetSync] | None:
            found = asyncio.run(read_offset_syncs(a, {transactional}))
            return found if OffsetSync(transactional, 0, 12, 5) in found else None

        committed = wait_for("the committed transactions on B", replicated_transactions, 60)
        assert [row[3] for row in committed] == [f"c{i}".encode() for i in (*range(5), *range(10, 15))]
        tx_syncs = wait_for("the offset sync after the aborted transaction", gap_synced, 30)
        assert all(s.upstream_offset not in range(5, 12) for s in tx_syncs)

        # A graceful restart resumes from the committed source offsets (seek to offset + 1): the
        # target ends up equal to the source, so nothing was skipped and nothing re-replicated.
        worker.stop(timeout=20)
        asyncio.run(produce(a, topic, 3, 30, first=90))
        worker.start()
        worker.wait_ready()
        wait_mirrored(b, topic, source_rows(a, topic, 120), 60)


async def replication_factors(bootstrap: str, topics: list[str]) -> dict[str, int]:
    """Replicas of partition 0 of each topic that exists; the cluster's ``default.replication.factor``
    under the key ``"<broker default>"``."""
    admin = await _admin(bootstrap)
    try:
        existing = set(await admin.list_topics())
        found = {
            d["topic"]: len(d["partitions"][0]["replicas"])
            for d in await admin.describe_topics([t for t in topics if t in existing])
            if d["error_code"] == 0 and d["partitions"]
        }
        broker = str((await admin.describe_cluster())["brokers"][0]["node_id"])
        for response in await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, broker)]):
            for resource in response.to_object()["resources"]:
                for entry in resource["config_entries"]:
                    if entry["config_names"] == "default.replication.factor":
                        found["<broker default>"] = int(entry["config_value"])
        return found
    finally:
        await admin.close()


def test_red_hat_disaster_recovery_connector_json(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """The MirrorSourceConnector of Red Hat's "Disaster recovery using MirrorMaker 2" guide, through REST.

    JSON numbers and booleans are kept as the guide writes them (Java's REST layer binds them to
    strings); keys only the heartbeat connector knows are accepted and ignored, as in Java.
    """
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("redhat")
    syncs_topic = "mm2-offset-syncs.A.internal"
    asyncio.run(create_and_fill(a, topic, 3, 120))
    expected = source_rows(a, topic, 120)
    workers = python_workers(b, tmp_path, unique("mm-group"), 1)
    with fleet(workers) as (worker,):
        request = {
            "name": "dr-source",
            "config": {
                "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
                "tasks.max": 2,
                "source.cluster.alias": "A",
                "target.cluster.alias": "B",
                "source.cluster.bootstrap.servers": a,
                "target.cluster.bootstrap.servers": b,
                "topics": topic,
                "replication.policy.class": IDENTITY,
                "offset-syncs.topic.location": "target",
                "offset-syncs.topic.replication.factor": -1,
                "replication.factor": -1,
                "heartbeats.replication.enabled": False,
                "emit.heartbeats.enabled": False,
                "key.converter": BYTES,
                "value.converter": BYTES,
                "header.converter": BYTES,
            },
        }
        code, body = worker.rest("POST", "/connectors", request)
        assert code == 201, body
        stored = body["config"]
        assert (stored["tasks.max"], stored["replication.factor"], stored["emit.heartbeats.enabled"]) == (
            "2",
            "-1",
            "false",
        )
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "dr-source", 2), 60)

        # Target topics keep their names; nothing carries the alias.
        wait_mirrored(b, topic, expected, 60)
        assert asyncio.run(topic_state(b, f"A.{topic}", None))[0] == 0

        # The tasks replicate exactly the topic's partitions: heartbeats topics do not bypass the filter.
        code, tasks = worker.rest("GET", "/connectors/dr-source/tasks")
        assert code == 200, tasks
        assigned = {p for t in tasks for p in t["config"]["task.assigned.partitions"].split(",")}
        assert assigned == {f"{topic}-{p}" for p in range(3)}

        # replication.factor -1: the remote topic and the offset-syncs topic get B's broker default.
        factors = asyncio.run(replication_factors(b, [topic, syncs_topic]))
        assert factors[topic] == factors[syncs_topic] == factors["<broker default>"], factors

        # Offset syncs live on the target (B), named after the source alias; none on A.
        syncs = wait_for(
            "offset syncs on B",
            lambda: asyncio.run(read_offset_syncs(b, {topic}, syncs_topic=syncs_topic)) or None,
            30,
        )
        assert {s.partition for s in syncs} <= {0, 1, 2}
        assert all(s.upstream_offset == s.downstream_offset for s in syncs), "fresh identity copy"
        assert asyncio.run(topic_state(a, syncs_topic, "cleanup.policy"))[0] == 0
        assert asyncio.run(topic_state(b, syncs_topic, "cleanup.policy")) == (1, "compact")
