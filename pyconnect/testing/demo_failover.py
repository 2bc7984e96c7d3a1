"""The demo's failover act: an application's consumer group reads on A, A fails, the group moves to B.

Contract (every wait bounded; nothing here starts or stops a process):
- :func:`checkpoint_connector_json` is the MirrorCheckpointConnector beside the demo's mirror: it
  checkpoints the application's group ``GROUP`` every second and, with ``sync.group.offsets.enabled``,
  commits the translated offsets to the same group on B (the group is not active there).
- :func:`run_application` is the application on A: group ``GROUP`` reading the topic from the
  beginning, committing every second and once more when ``stop`` is set; it collects the demo sequence
  numbers (from the record values) it read and returns its committed positions.
- :func:`wait_for_synced_group` waits until B holds, for every partition the application committed,
  a checkpoint of exactly that upstream position and the group's offset on B at its translation.
- :func:`run_application_on` reads the topic on B as the same group, from its committed (translated)
  offsets to the end, and :func:`verdict` says what the move cost: records read twice and records
  never read by either side.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from connectors.mirror.checkpoint_records import Checkpoint
from pyconnect.kafka.clients import create_admin

GROUP = "orders-app"
CHECKPOINT_CONNECTOR = "mm2-checkpoint"
CHECKPOINTS_TOPIC = "A.checkpoints.internal"
"""The flow A -> B's checkpoints topic on B (the checkpoints topic keeps the source alias under the
IdentityReplicationPolicy too)."""


def checkpoint_connector_json(source: str, target: str) -> dict[str, Any]:
    """The MirrorCheckpointConnector of the Red Hat DR guide (group offsets synced), for ``GROUP``."""
    return {
        "name": CHECKPOINT_CONNECTOR,
        "config": {
            "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "tasks.max": "1",
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": source,
            "target.cluster.bootstrap.servers": target,
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "offset-syncs.topic.location": "target",
            "groups": GROUP,
            "sync.group.offsets.enabled": "true",
            "sync.group.offsets.interval.seconds": "1",
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "2",
            "checkpoints.topic.replication.factor": "1",
            "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        },
    }


def _sequence(value: bytes | None) -> int | None:
    """The demo's sequence number from a record value (``record <n> produced at <ms>``)."""
    if value is None or not value.startswith(b"record "):
        return None
    number = value[7:].split(b" ", 1)[0]
    return int(number) if number.isdigit() else None


async def run_application(bootstrap: str, topic: str, stop: asyncio.Event, read: set[int]) -> dict[int, int]:
    """The application on A (see the module docstring); returns partition -> committed position."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        committed_at = time.monotonic()
        while not stop.is_set():
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                read.update(s for s in (_sequence(m.value) for m in messages) if s is not None)
            if time.monotonic() - committed_at >= 1.0:
                await consumer.commit()
                committed_at = time.monotonic()
        positions = {tp.partition: await consumer.position(tp) for tp in consumer.assignment()}
        await consumer.commit(
            {TopicPartition(topic, p): OffsetAndMetadata(o, "") for p, o in positions.items()}
        )
        return positions
    finally:
        await consumer.stop()


async def _latest_checkpoints(bootstrap: str) -> dict[int, Checkpoint]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    latest: dict[int, Checkpoint] = {}
    try:
        tp = TopicPartition(CHECKPOINTS_TOPIC, 0)
        if CHECKPOINTS_TOPIC not in await consumer.topics():
            return latest
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        deadline = time.monotonic() + 10
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for messages in (await consumer.getmany(tp, timeout_ms=500)).values():
                for m in messages:
                    if m.key is None or m.value is None:
                        continue
                    checkpoint = Checkpoint.from_record(m.key, m.value)
                    if checkpoint.consumer_group_id == GROUP:
                        latest[checkpoint.partition] = checkpoint
    finally:
        await consumer.stop()
    return latest


async def _group_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    admin = create_admin({"bootstrap.servers": bootstrap})
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(GROUP)
    finally:
        await admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}


async def wait_for_synced_group(
    target: str, topic: str, committed: dict[int, int], timeout_s: float
) -> dict[int, int]:
    """partition -> the group's offset on B, once it is the translation of ``committed`` (see the module
    docstring); TimeoutError naming what was missing after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    missing = "no checkpoint yet"
    while time.monotonic() < deadline:
        checkpoints = await _latest_checkpoints(target)
        behind = [
            p for p, o in committed.items() if p not in checkpoints or checkpoints[p].upstream_offset != o
        ]
        if not behind:
            synced = await _group_offsets(target, topic)
            unsynced = [p for p in committed if synced.get(p) != checkpoints[p].downstream_offset]
            if not unsynced:
                return synced
            missing = f"the group's offsets on B not yet synced for partitions {unsynced}"
        else:
            missing = f"no checkpoint of the final position yet for partitions {behind}"
        await asyncio.sleep(1.0)
    raise TimeoutError(f"after {timeout_s:.0f} s: {missing}")


async def run_application_on(
    bootstrap: str, topic: str, partitions: int, read: set[int], timeout_s: float
) -> list[int]:
    """The application, moved to ``bootstrap``: group ``GROUP`` from its committed offsets to the end of
    the topic's ``partitions``; returns the sequence numbers in the order read (``read`` collects them
    too)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    order: list[int] = []
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            positions = {tp: await consumer.position(tp) for tp in tps}
            if all(positions[tp] >= ends[tp] for tp in tps):
                break
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    seq = _sequence(m.value)
                    if seq is not None:
                        order.append(seq)
                        read.add(seq)
        with contextlib.suppress(Exception):
            await consumer.commit()
    finally:
        await consumer.stop()
    return order


@dataclass(frozen=True)
class Verdict:
    """What moving the application cost: ``reread`` records it read on both clusters, ``lost`` records
    produced that it never read on either."""

    read_on_a: int
    read_on_b: int
    reread: int
    lost: int


def verdict(produced: int, on_a: set[int], on_b_in_order: list[int]) -> Verdict:
    on_b = set(on_b_in_order)
    return Verdict(
        read_on_a=len(on_a),
        read_on_b=len(on_b_in_order),
        reread=len(on_a & on_b) + (len(on_b_in_order) - len(on_b)),
        lost=len(set(range(produced)) - on_a - on_b),
    )
