"""KafkaLog on a real cluster: initial read, tailing, read-to-end barrier, tombstones, bad callbacks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.kafka.log import KafkaLog, LogRecord
from pyconnect.testing.backends import ClusterHandle

pytestmark = pytest.mark.kafka


async def create_topic(bootstrap: str, name: str, partitions: int, compacted: bool = True) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        configs = {"cleanup.policy": "compact"} if compacted else {}
        await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])
    finally:
        await admin.close()


async def test_start_reads_existing_records_then_tails_and_barriers(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("log")
    await create_topic(cluster_a.bootstrap_servers, topic, partitions=3)
    producer = AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for i in range(30):
            await producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % 3)
        await producer.send(topic, key=b"gone", value=None, partition=0)
        await producer.flush()
    finally:
        await producer.stop()

    seen: list[LogRecord] = []
    klog = KafkaLog(topic, {"bootstrap.servers": cluster_a.bootstrap_servers}, seen.extend)
    await klog.start()
    try:
        assert len(seen) == 31, "start() returns only after the first read to the end"
        assert sorted(klog.partitions) == [0, 1, 2]
        tombstones = [r for r in seen if r.value is None]
        assert [(r.key, r.partition) for r in tombstones] == [(b"gone", 0)]
        for p in range(3):
            offsets = [r.offset for r in seen if r.partition == p]
            assert offsets == sorted(offsets) and offsets[0] == 0

        acks = [await klog.send(f"n{i}".encode(), b"x", partition=i % 3) for i in range(12)]
        await asyncio.gather(*acks)
        await asyncio.wait_for(klog.read_to_end(), 30)
        assert {r.key for r in seen if r.key and r.key.startswith(b"n")} == {
            f"n{i}".encode() for i in range(12)
        }
        assert len(seen) == 43
    finally:
        await klog.stop()
        await klog.stop()


async def test_a_failing_callback_does_not_stop_the_tail(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("log")
    await create_topic(cluster_a.bootstrap_servers, topic, partitions=1)
    good: list[bytes | None] = []

    def on_records(records: Sequence[LogRecord]) -> None:
        for r in records:
            if r.value == b"poison":
                raise ValueError("cannot decode")
        good.extend(r.value for r in records)

    klog = KafkaLog(topic, {"bootstrap.servers": cluster_a.bootstrap_servers}, on_records)
    await klog.start()
    try:
        await (await klog.send(b"a", b"poison"))
        await asyncio.wait_for(klog.read_to_end(), 30)
        await (await klog.send(b"b", b"fine"))
        await asyncio.wait_for(klog.read_to_end(), 30)
        assert good == [b"fine"]
    finally:
        await klog.stop()


async def test_start_on_a_missing_topic_fails_clearly(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    klog = KafkaLog(
        unique("absent"),
        {"bootstrap.servers": cluster_a.bootstrap_servers},
        lambda _r: None,
        consumer_config={"allow.auto.create.topics": "false"},
        topic_wait_s=0,
    )
    with pytest.raises(LookupError, match="does not exist"):
        await klog.start()
    waiting = KafkaLog(
        unique("absent"),
        {"bootstrap.servers": cluster_a.bootstrap_servers},
        lambda _r: None,
        consumer_config={"allow.auto.create.topics": "false"},
        topic_wait_s=1.0,
    )
    started = asyncio.get_running_loop().time()
    with pytest.raises(
        LookupError, match=r"Could not look up partition metadata for topic .* allotted period"
    ):
        await waiting.start()
    assert asyncio.get_running_loop().time() - started >= 1.0


async def test_ensure_topic_creates_once_and_resolves_broker_defaults(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    from pyconnect.kafka.topics import TopicAdminError, TopicSpec, ensure_topic, partition_counts

    admin = AIOKafkaAdminClient(bootstrap_servers=cluster_a.bootstrap_servers)
    await admin.start()
    try:
        compacted = TopicSpec(unique("cfg"), 1, -1, {"cleanup.policy": "compact"})
        assert await ensure_topic(admin, compacted) == 1
        assert await ensure_topic(admin, TopicSpec(compacted.name, 7, 1)) == 1, (
            "an existing topic is never altered"
        )
        defaulted = TopicSpec(unique("dflt"), -1, -1)
        assert await ensure_topic(admin, defaulted) == 1, (
            "num.partitions of the test brokers is Kafka's default, 1"
        )
        assert await partition_counts(admin, [compacted.name, defaulted.name, unique("none")]) == {
            compacted.name: 1,
            defaulted.name: 1,
        }
        with pytest.raises(TopicAdminError, match="replication factor"):
            await ensure_topic(admin, TopicSpec(unique("rf"), 1, 3))
    finally:
        await admin.close()
