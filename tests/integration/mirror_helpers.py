"""Helpers shared by the MirrorMaker 2 tests: single-broker ``mm2.properties`` pieces, reading partition 0
of a topic, the checkpoints of a group, and a consumer group resuming on the target cluster.

Every read is bounded in time; nothing here starts a process.
"""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, TopicPartition

from connectors.mirror.checkpoint_records import Checkpoint

CHECKPOINTS_TOPIC = "A.checkpoints.internal"
"""The checkpoints topic on B of the flow A -> B under the default replication policy."""

SINGLE_BROKER_MM2: dict[str, object] = {
    "replication.factor": 1,
    "checkpoints.topic.replication.factor": 1,
    "heartbeats.topic.replication.factor": 1,
    "offset-syncs.topic.replication.factor": 1,
    "offset.storage.replication.factor": 1,
    "status.storage.replication.factor": 1,
    "config.storage.replication.factor": 1,
}
"""Every replication factor of an ``mm2.properties`` at 1: the test clusters have one broker each."""


def one_way_mm2(
    src: str, dst: str, source_bootstrap: str, target_bootstrap: str, topic: str
) -> dict[str, object]:
    """An ``mm2.properties`` mirroring ``topic`` from ``src`` to ``dst`` (no heartbeats back), single
    broker, topics refreshed every 2 s."""
    return {
        "clusters": f"{src}, {dst}",
        f"{src}.bootstrap.servers": source_bootstrap,
        f"{dst}.bootstrap.servers": target_bootstrap,
        f"{src}->{dst}.enabled": "true",
        f"{src}->{dst}.topics": topic,
        f"{dst}->{src}.emit.heartbeats.enabled": "false",
        **SINGLE_BROKER_MM2,
        "refresh.topics.interval.seconds": 2,
    }


async def read_partition0(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    """Every ``(key, value)`` of partition 0 of ``topic`` up to its current end ([] without the topic)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    out: list[tuple[bytes | None, bytes | None]] = []
    try:
        tp = TopicPartition(topic, 0)
        if topic not in await consumer.topics():
            return out
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        deadline = time.monotonic() + 15
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for messages in (await consumer.getmany(tp, timeout_ms=500)).values():
                out.extend((m.key, m.value) for m in messages)
    finally:
        await consumer.stop()
    return out


def group_checkpoints(bootstrap: str, group: str, topic: str = CHECKPOINTS_TOPIC) -> list[Checkpoint]:
    """Every checkpoint of ``group`` in the checkpoints ``topic`` (one partition), in topic order."""
    found = []
    for key, value in asyncio.run(read_partition0(bootstrap, topic)):
        checkpoint = Checkpoint.from_record(key, value)
        if checkpoint.consumer_group_id == group:
            found.append(checkpoint)
    return found


def latest_checkpoints(
    bootstrap: str, group: str, topic: str = CHECKPOINTS_TOPIC
) -> dict[tuple[str, int], Checkpoint]:
    """The newest checkpoint of ``group`` per ``(remote topic, partition)`` in the checkpoints ``topic``."""
    return {(c.topic, c.partition): c for c in group_checkpoints(bootstrap, group, topic)}


async def read_as_group(
    bootstrap: str,
    group: str,
    topic: str,
    expected: int,
    *,
    field: str = "offset",
    timeout_s: float = 30.0,
    quiet_polls: int = 2,
) -> dict[int, list[int]]:
    """Join ``group`` (no offset reset: it must have committed offsets) and read ``topic`` until at least
    ``expected`` records arrived and then ``quiet_polls`` polls in a row brought nothing, or
    ``timeout_s`` passed; per partition, the ``field`` (``offset`` or ``timestamp``) of each record."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="none",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )
    await consumer.start()
    seen: dict[int, list[int]] = {}
    try:
        deadline = time.monotonic() + timeout_s
        idle = 0
        while time.monotonic() < deadline and (sum(map(len, seen.values())) < expected or idle < quiet_polls):
            batch = await consumer.getmany(timeout_ms=500)
            idle = 0 if batch else idle + 1
            for tp, messages in batch.items():
                seen.setdefault(tp.partition, []).extend(getattr(m, field) for m in messages)
    finally:
        await consumer.stop()
    return seen
