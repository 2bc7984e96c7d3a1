"""Bounded memory under back-pressure: a worker whose target is unreachable holds only a bounded
window of the source, however much piles up there, and mirrors the backlog once the target returns.

One worker (its internal topics on the shared cluster A, so it stays in its group) mirrors a topic of
A to a single-node cluster of the test's own. The node is killed; while it is down, ``BACKLOG_MB`` of
records are written to the source. The worker's RSS is sampled throughout. The bound, from its settings
(docs/operator-guide.md, "Memory, and a target that goes away"): the consumer holds at most one fetch per partition
(``max.partition.fetch.bytes`` = 1 MiB each; the raw path two, as bytes: the rest of one answer held
for the next polls and the next fetched ahead), a task at most one poll of converted records in flight
(``max.poll.records`` = 500), the producer at most one pending batch per partition (``batch.size``);
with Python's per-object overhead counted three times, plus a fixed allowance:

    growth <= 3 x (partitions x 1 MiB + 500 x record size) + 32 MiB

and no growth between the middle and the end of the outage (no leak proportional to the backlog).
Afterwards every record arrives (at-least-once) and the task is RUNNING.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import fleet, own_cluster, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_resume import create_topic

pytestmark = pytest.mark.kafka

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
PARTITIONS = 4
RECORD_BYTES = 4096
BACKLOG_RECORDS = 20_000
BACKLOG_MB = BACKLOG_RECORDS * RECORD_BYTES / 2**20
MIB = 2**20
GROWTH_BOUND_MB = (3 * (PARTITIONS * MIB + 500 * RECORD_BYTES)) / MIB + 32


@pytest.fixture(scope="module")
def target_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with own_cluster(tmp_path_factory.mktemp("slow-target"), "T", brokers=1) as cluster:
        yield cluster


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


async def produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    """Records ``first .. first+count-1``, round-robin over the partitions; the value starts with the
    record's number."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=262144)
    await producer.start()
    try:
        pad = b"x" * RECORD_BYTES
        acks = []
        for n in range(first, first + count):
            value = (str(n).encode() + b":" + pad)[:RECORD_BYTES]
            acks.append(await producer.send(topic, value, partition=n % PARTITIONS))
        await asyncio.gather(*acks)
    finally:
        await producer.stop()


async def numbers_on(bootstrap: str, topic: str, expected: int, timeout_s: float) -> set[int]:
    """The distinct record numbers in ``topic``, read until ``expected`` of them or ``timeout_s`` (the
    topic may appear meanwhile: the mirror creates it)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + timeout_s
        partitions = None
        while not partitions and time.monotonic() < deadline:
            await consumer._client.force_metadata_update()
            partitions = consumer._client.cluster.partitions_for_topic(topic)
            if not partitions:
                await asyncio.sleep(0.5)
        if not partitions:
            return seen
        consumer.assign([TopicPartition(topic, p) for p in sorted(partitions)])
        while len(seen) < expected and time.monotonic() < deadline:
            for batch in (await consumer.getmany(timeout_ms=500, max_records=5000)).values():
                seen.update(int(r.value.split(b":", 1)[0]) for r in batch if r.value)
    finally:
        await consumer.stop()
    return seen


@pytest.mark.long  # an 80 MB backlog (~60 s); test_producer_outage.py is the short unreachable-target run
def test_an_unreachable_target_holds_memory_to_a_bound_and_the_backlog_arrives_after(
    cluster_a: ClusterHandle, target_node: KafkaCluster, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, t = cluster_a.bootstrap_servers, target_node.bootstrap_servers
    topic = unique("pressure")
    asyncio.run(create_topic(a, topic, PARTITIONS))
    (worker,) = python_workers(a, tmp_path, unique("pressure"), 1)
    config = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "A",
        "target.cluster.alias": "T",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": t,
        # As in Java, a MirrorSourceConnector's records go to the worker's own cluster unless its
        # producer is pointed elsewhere; here the worker lives on A and the target is T.
        "producer.override.bootstrap.servers": t,
        "topics": topic,
        "replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "emit.offset-syncs.enabled": "false",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }
    warmup = 2_000
    with fleet([worker]):
        asyncio.run(produce(a, topic, 0, warmup))
        code, body = worker.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        wait_for("the task RUNNING", lambda: running_tasks(worker, "mirror", 1), 60)
        copied = asyncio.run(numbers_on(t, f"A.{topic}", warmup, 60))
        assert len(copied) == warmup, f"the flow is live before the outage:\n{worker.log_tail(60)}"
        assert worker.pid is not None
        baseline = rss_mb(worker.pid)

        (node,) = target_node.nodes
        node.kill()
        samples: list[float] = []
        started = time.monotonic()
        asyncio.run(produce(a, topic, warmup, BACKLOG_RECORDS))
        while time.monotonic() - started < 30:
            samples.append(rss_mb(worker.pid))
            time.sleep(0.5)
        middle = max(samples[: len(samples) // 2])
        peak = max(samples)
        node.start()
        target_node.wait_ready()

        total = warmup + BACKLOG_RECORDS
        arrived = asyncio.run(numbers_on(t, f"A.{topic}", total, 180))
        worker.check_alive()
        assert running_tasks(worker, "mirror", 1), "the task runs again"
        after = rss_mb(worker.pid)

    growth = peak - baseline
    print(
        f"\nRSS baseline {baseline:.0f} MB, peak {peak:.0f} MB during a {BACKLOG_MB:.0f} MB backlog "
        f"(growth {growth:.0f} MB, bound {GROWTH_BOUND_MB:.0f} MB), {after:.0f} MB after; "
        f"{len(arrived)} of {total} records arrived"
    )
    assert arrived == set(range(total)), f"{total - len(arrived)} records lost"
    assert growth <= GROWTH_BOUND_MB, (
        f"RSS grew {growth:.0f} MB under back-pressure (bound {GROWTH_BOUND_MB:.0f})"
    )
    assert peak - middle <= 16, f"RSS kept growing during the outage: {middle:.0f} -> {peak:.0f} MB"
