"""The Java reference implementation runs from the pinned jars against the test clusters.

A Java Connect worker answers ``GET /`` with its version and the Kafka cluster id; Java MirrorMaker 2
in dedicated mode mirrors records from A to B. Each test stops the Java process it started.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import KAFKA_VERSION
from pyconnect.testing.java_reference import JavaConnectWorker, JavaMirrorMaker
from tests.integration.fleet import RECENT_MS
from tests.integration.mirror_helpers import one_way_mm2

pytestmark = [pytest.mark.kafka, pytest.mark.java]


async def cluster_id(bootstrap: str) -> str:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return (await admin.describe_cluster())["cluster_id"]
    finally:
        await admin.close()


def test_java_connect_worker_answers_root(
    cluster_a: ClusterHandle, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    worker = JavaConnectWorker(
        cluster_a.bootstrap_servers, tmp_path / "worker", group_id=unique("connect"), die_with_parent=True
    )
    try:
        worker.start()
        root = worker.wait_ready(timeout=90)
        assert root["version"] == KAFKA_VERSION == "4.3.1"
        assert root["kafka_cluster_id"] == asyncio.run(cluster_id(cluster_a.bootstrap_servers))
        assert set(root) == {"version", "commit", "kafka_cluster_id"}
        status, plugins = worker.rest("GET", "/connector-plugins")
        assert status == 200
        assert "org.apache.kafka.connect.mirror.MirrorSourceConnector" in {p["class"] for p in plugins}
        status, body = worker.rest("GET", "/connectors/no-such-connector")
        assert status == 404 and body["error_code"] == 404
    finally:
        worker.stop()
    assert not worker.running


async def produce(bootstrap: str, topic: str, count: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(count):
            await producer.send_and_wait(
                topic, key=f"k{i}".encode(), value=f"v{i}".encode(), timestamp_ms=RECENT_MS + i
            )
    finally:
        await producer.stop()


async def read_partition0(bootstrap: str, topic: str) -> list:
    """Every record of partition 0 of ``topic`` up to its current end; [] while the topic does not exist."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        # An all-topics metadata request: asking for the missing topic by name could auto-create it.
        cluster = await consumer._client.fetch_all_metadata()
        if not cluster.partitions_for_topic(topic):
            return []
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        out: list = []
        while await consumer.position(tp) < end:
            batch = await consumer.getmany(tp, timeout_ms=1000)
            out.extend(r for r in batch.get(tp, []) if r.offset < end)
        return out
    finally:
        await consumer.stop()


def wait_mirrored(bootstrap: str, topic: str, count: int, mm2: JavaMirrorMaker, limit_s: float) -> list:
    """Poll until ``topic`` holds ``count`` records; fails fast (with the log tail) if MirrorMaker exits."""
    deadline = time.monotonic() + limit_s
    while True:
        mm2.check_alive()
        records = asyncio.run(asyncio.wait_for(read_partition0(bootstrap, topic), 20))
        if len(records) >= count:
            return records
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"{topic} has {len(records)} of {count} records after {limit_s:.0f}s:\n{mm2.log_tail()}"
            )
        time.sleep(1)


def test_java_mirror_maker_mirrors_a_to_b(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    # Fresh aliases keep every MM2 topic name (remote topic, internal topics, group) unique per run.
    src, dst = f"S{uuid.uuid4().hex[:6]}", f"T{uuid.uuid4().hex[:6]}"
    topic = unique("orders")
    asyncio.run(produce(cluster_a.bootstrap_servers, topic, 5))
    props = one_way_mm2(src, dst, cluster_a.bootstrap_servers, cluster_b.bootstrap_servers, topic)
    mm2 = JavaMirrorMaker(props, tmp_path / "mm2", die_with_parent=True)
    try:
        mm2.start()
        mirrored = wait_mirrored(cluster_b.bootstrap_servers, f"{src}.{topic}", 5, mm2, limit_s=75)
    finally:
        mm2.stop()
    assert not mm2.running
    assert [(r.key, r.value, r.timestamp) for r in mirrored] == [
        (f"k{i}".encode(), f"v{i}".encode(), RECENT_MS + i) for i in range(5)
    ]
