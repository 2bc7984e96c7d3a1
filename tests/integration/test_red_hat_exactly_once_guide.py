"""The Red Hat disaster-recovery guide, as written, with exactly-once on (issue: the worker file with
``exactly.once.source.support=enabled`` must run).

Two pyconnect workers read the guide's worker file verbatim (only ``<TARGET>`` filled in, and the
test harness's REST listener). Through REST they get the guide's MirrorSourceConnector JSON
(``consumer.isolation.level: read_committed``, offset syncs on the target, IdentityReplicationPolicy,
``tasks.max: 30``) and MirrorCheckpointConnector JSON (``sync.group.offsets.enabled: true``). Records
keep arriving on A while the group's leader is bounced (SIGTERM, restart: a rolling restart). Afterwards B,
read ``read_committed``, holds every committed record of A exactly once and in order (A's producer
writes transactions, a third of them aborted), and the consumer group committed on A, moved to B,
continues from its synced offsets with nothing lost or read twice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import group_leader_url
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import fleet, read_topic, status, wait_for
from tests.integration.test_mirror_checkpoint import COMMITTED, commit_group, group_offsets
from tests.integration.test_mirror_source import create_and_fill

pytestmark = pytest.mark.kafka

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
PARTITIONS, FIRST, LIVE = 3, 300, 900


def guide_worker_file(target: str) -> dict[str, object]:
    """The guide's worker properties, key for key."""
    return {
        "bootstrap.servers": target,
        "group.id": "connect-mirrormaker-A-to-B",
        "plugin.discovery": "service_load",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "offset.storage.topic": "__connect-mirrormaker-A-to-B-offsets",
        "offset.storage.replication.factor": -1,
        "config.storage.topic": "__connect-mirrormaker-A-to-B-configs",
        "config.storage.replication.factor": -1,
        "status.storage.topic": "__connect-mirrormaker-A-to-B-status",
        "status.storage.replication.factor": -1,
        "exactly.once.source.support": "enabled",
    }


def guide_connectors(source: str, target: str, topic: str, group: str) -> dict[str, dict[str, object]]:
    common: dict[str, object] = {
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "replication.policy.class": IDENTITY,
        "offset-syncs.topic.location": "target",
        "key.converter": BYTES,
        "value.converter": BYTES,
    }
    return {
        "mm2-source": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "tasks.max": 30,
            "topics": topic,
            "consumer.isolation.level": "read_committed",
            "replication.factor": -1,
            "offset-syncs.topic.replication.factor": -1,
            "sync.topic.acls.enabled": False,
            "refresh.topics.interval.seconds": 5,
        },
        "mm2-checkpoint": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "tasks.max": 1,
            "groups": group,
            "sync.group.offsets.enabled": True,
            "sync.group.offsets.interval.seconds": 1,
            "emit.checkpoints.interval.seconds": 1,
            "refresh.groups.interval.seconds": 2,
            "checkpoints.topic.replication.factor": -1,
        },
    }


async def produce_steadily(bootstrap: str, topic: str, first: int, count: int) -> int:
    """Records ``first..first+count-1`` round-robin over the partitions at about 200 per second, in
    transactions of 20: every third transaction is aborted. Returns how many records were aborted."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, transactional_id=f"{topic}-writer")
    await producer.start()
    aborted = 0
    try:
        for n, start in enumerate(range(first, first + count, 20)):
            await producer.begin_transaction()
            for i in range(start, min(start + 20, first + count)):
                await producer.send(topic, f"v{i}".encode(), key=f"k{i}".encode(), partition=i % PARTITIONS)
            if n % 3 == 2:
                await producer.abort_transaction()
                aborted += min(20, first + count - start)
            else:
                await producer.commit_transaction()
            await asyncio.sleep(0.1)
    finally:
        await producer.stop()
    return aborted


async def resume_on(
    bootstrap: str, topic: str, group: str, ends: dict[int, int]
) -> dict[int, list[bytes | None]]:
    """The group, moved to ``bootstrap``: read_committed from its committed offsets up to ``ends``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    await consumer.start()
    read: dict[int, list[bytes | None]] = {}
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            positions = [await consumer.position(tp) for tp in tps]
            if all(position >= ends[tp.partition] for tp, position in zip(tps, positions, strict=True)):
                break
            for tp, messages in (await consumer.getmany(timeout_ms=500)).items():
                read.setdefault(tp.partition, []).extend(m.value for m in messages)
    finally:
        await consumer.stop()
    return read


def source_tasks_running(worker: PyconnectWorker) -> bool:
    """Every task of the source connector RUNNING: one per partition of the topic, and one per
    partition of a heartbeats topic on A (MirrorSourceConnector replicates those whatever the filter,
    as Java's does; other tests of the session may have made one)."""
    body = status(worker, "mm2-source")
    return bool(
        body
        and len(body["tasks"]) >= PARTITIONS
        and all(task["state"] == "RUNNING" for task in body["tasks"])
    )


def by_partition(records: list[tuple[int, int, bytes | None, bytes | None]]) -> dict[int, list[bytes | None]]:
    out: dict[int, list[bytes | None]] = {}
    for partition, _offset, _key, value in records:
        out.setdefault(partition, []).append(value)
    return out


def test_the_guides_exactly_once_worker_file_mirrors_every_record_once_through_a_bounce(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic, group = unique("dr-eos"), unique("dr-app")
    asyncio.run(create_and_fill(a, topic, PARTITIONS, FIRST))
    asyncio.run(commit_group(a, group, topic))
    properties = guide_worker_file(b)
    workers = [
        PyconnectWorker(
            b,
            tmp_path / f"py-{i}",
            group_id=str(properties["group.id"]),
            extra=properties,
            die_with_parent=True,
        )
        for i in range(2)
    ]
    with fleet(workers):
        for name, config in guide_connectors(a, b, topic, group).items():
            code, body = workers[1].rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, (name, code, body)
        wait_for("the source tasks RUNNING", lambda: source_tasks_running(workers[0]), 90)

        aborted: list[int] = []
        live = threading.Thread(
            target=lambda: aborted.append(asyncio.run(produce_steadily(a, topic, FIRST, LIVE)))
        )
        # The leader is bounced: a follower's tasks would wait for it scheduled.rebalance.max.delay.ms
        # (the file keeps Java's 5 minutes; Java holds them the same way), a new leader reassigns
        # them at once.
        leader_url = wait_for("a leader", lambda: group_leader_url(b, str(properties["group.id"])), 30)
        leader = next(w for w in workers if w.rest_url == leader_url)
        follower = next(w for w in workers if w is not leader)
        live.start()
        time.sleep(1.5)
        leader.stop(timeout=30)  # a rolling restart, mid-stream
        leader.start()
        leader.wait_ready()
        live.join(timeout=60)
        assert not live.is_alive()
        wait_for("the source tasks RUNNING after the bounce", lambda: source_tasks_running(follower), 90)

        source = by_partition(asyncio.run(read_topic(a, topic)))  # read_committed: no aborted record
        total = FIRST + LIVE - aborted[0]
        assert aborted[0] > 0 and sum(map(len, source.values())) == total

        def mirrored() -> dict[int, list[bytes | None]] | None:
            got = by_partition(asyncio.run(read_topic(b, topic, "read_committed", max_s=20)))
            return got if sum(map(len, got.values())) >= total else None

        target = wait_for(f"{total} records committed on B", mirrored, 120, interval=2.0)
        assert target == source  # every record exactly once, in order, per partition
        # ... and written in transactions: commit markers take offsets between the records on B
        offsets: dict[int, list[int]] = {}
        for partition, offset, _key, _value in asyncio.run(read_topic(b, topic, "read_committed")):
            offsets.setdefault(partition, []).append(offset)
        assert all(max(o) + 1 > len(o) for o in offsets.values()), {
            p: (len(o), max(o)) for p, o in offsets.items()
        }
        print(
            f"\nthe guide with exactly-once, through a bounce: B equals A record for record ({total} records)"
        )

        def synced() -> dict[tuple[str, int], tuple[int, str]] | None:
            offsets = asyncio.run(group_offsets(b, group))
            wanted = {(topic, p): n for p, n in COMMITTED.items()}
            return offsets if {k: v[0] for k, v in offsets.items() if k in wanted} == wanted else None

        wait_for("the group's offsets synced to B", synced, 60, interval=1.0)

    # The application moves to B: from its synced offsets it reads the rest, nothing lost or repeated.
    b_records = asyncio.run(read_topic(b, topic, "read_committed"))
    ends = {p: max(o for q, o, _k, _v in b_records if q == p) + 1 for p in range(PARTITIONS)}
    resumed = asyncio.run(resume_on(b, topic, group, ends))
    for p in range(PARTITIONS):
        assert resumed.get(p, []) == source[p][COMMITTED.get(p, 0) :], p
