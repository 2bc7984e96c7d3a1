"""The demo's failover act: an application's consumer group reads on A, A fails, the group moves to B.

Contract (every wait bounded; nothing here starts or stops a process):
- :func:`checkpoint_connector_json` is the MirrorCheckpointConnector beside the demo's mirror: it
  checkpoints the application's group ``GROUP`` every second and, with ``sync.group.offsets.enabled``,
  commits the translated offsets to the same group on B (the group is not active there).
- The application (:func:`pyconnect.kafka.traffic.run_application`, and ``run_application_on`` once
  it moved) is consumer group ``GROUP``.
- :func:`wait_for_synced_group` waits until B holds, for every partition the application committed,
  a checkpoint of exactly that upstream position and the group's offset on B at its translation.
- :func:`verdict` says what the move cost: records read twice and records never read by either side.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.mirror_client import MirrorClient
from pyconnect.kafka.mirror_admin import GroupAdmin

GROUP = "orders-app"
CHECKPOINT_CONNECTOR = "mm2-checkpoint"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


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
            "replication.policy.class": IDENTITY_POLICY,
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


async def _latest_checkpoints(bootstrap: str) -> dict[int, Checkpoint]:
    client = MirrorClient(
        {"bootstrap.servers": bootstrap, "replication.policy.class": IDENTITY_POLICY}, alias="B"
    )
    async with client:
        latest, _skipped = await client.latest_checkpoints(GROUP, "A")
    return {tp.partition: checkpoint for tp, checkpoint in latest.items()}


async def _group_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        committed = await admin.committed_offsets(GROUP)
    finally:
        await admin.close()
    return {partition: c.offset for (t, partition), c in committed.items() if t == topic}


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
