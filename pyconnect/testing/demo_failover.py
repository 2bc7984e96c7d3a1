"""The demo's failover act: an application's consumer group reads on A, A fails, the group moves to B.

Contract (every wait bounded; nothing here starts or stops a process):
- :func:`checkpoint_connector_json` is the MirrorCheckpointConnector beside the demo's mirror: it
  checkpoints the application's group ``GROUP`` every second and, with ``sync.group.offsets.enabled``,
  commits the translated offsets to the same group on B (the group is not active there).
- The application (:func:`pyconnect.kafka.traffic.run_application`, and ``run_application_on`` once
  it moved) is consumer group ``GROUP``.
- :func:`group_sync_gap` measures the group-sync staleness: how far the group's offsets on B are behind
  the position its commits on A prove on B (``pyconnect failover``'s plan of the demo's flow), in records
  a consumer resuming on B now would read again.
- :func:`wait_for_synced_group` waits until the group's offsets on B are that proven position for every
  partition the application committed: a checkpoint of the final position alone is not enough, since
  until the offset syncs past it arrive, a checkpoint can only translate to the record after the last
  sync (Java's rule), short of the position.
- :func:`verdict` says what the move cost: records read twice and records never read by either side.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connectors.mirror.offsets.failover_calls import FailoverError
from connectors.mirror.offsets.failover_command import build_plan
from connectors.mirror.offsets.failover_flow import FailoverFlow, flow_from_connector_config
from pyconnect.kafka.group_admin import GroupAdmin

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


async def _group_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        committed = await admin.committed_offsets(GROUP)
    finally:
        await admin.close()
    return {partition: c.offset for (t, partition), c in committed.items() if t == topic}


def demo_flow(source: str, target: str) -> FailoverFlow:
    """The flow of the demo's checkpoint connector, as ``pyconnect failover`` reads it."""
    body = checkpoint_connector_json(source, target)
    return flow_from_connector_config(body["config"], origin=f"connector {body['name']}")


@dataclass(frozen=True)
class SyncGap:
    """The group-sync staleness of ``GROUP`` on B: at least ``behind`` records to re-read if it resumed on B
    now (``None`` before anything is checkpointed), exactly that many when ``proven`` (every position on B
    proven by the offset syncs); ``at``: the positions on B per partition."""

    behind: int | None
    proven: bool
    at: dict[int, int]


async def group_sync_gap(flow: FailoverFlow, topic: str, timeout_s: float = 10.0) -> SyncGap:
    """The gap between the group's offsets on B and the positions its commits on A have there."""
    try:
        plan = await build_plan(flow, (GROUP,), all_groups=False, timeout_s=timeout_s, allow_rewind=False)
    except FailoverError:
        return SyncGap(None, False, {})
    rows = [
        r
        for r in plan.group(GROUP).partitions
        if r.target_topic == topic and r.source_offset_from == "source" and r.target_offset is not None
    ]
    if not rows:
        return SyncGap(None, False, {})
    at = {r.partition: r.target_offset for r in rows if r.target_offset is not None}
    behind = sum(max(0, at[r.partition] - (r.current_offset or 0)) for r in rows)
    return SyncGap(behind, all(r.expected_reread == 0 for r in rows), at)


async def wait_for_synced_group(
    flow: FailoverFlow, topic: str, committed: dict[int, int], timeout_s: float, report: Callable[[str], None]
) -> dict[int, int]:
    """partition -> the group's offset on B, once it is the proven position on B of ``committed`` for
    every partition (see the module docstring); ``report`` gets a line each second; TimeoutError naming
    what was missing after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    missing = "no checkpoint yet"
    while time.monotonic() < deadline:
        gap = await group_sync_gap(flow, topic)
        synced = await _group_offsets(flow.target_config["bootstrap.servers"], topic)
        if gap.behind is None:
            missing = "waiting for the first checkpoints of the application's position"
        elif gap.proven and gap.behind == 0 and all(synced.get(p) == gap.at.get(p) for p in committed):
            return synced
        elif gap.proven:
            missing = f"the group's offsets on B are {gap.behind} records behind its position on A"
        else:
            missing = (
                f"the group's offsets on B are at least {gap.behind} records behind its position on A "
                "(waiting for the offset syncs that prove it)"
            )
        report(missing)
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
