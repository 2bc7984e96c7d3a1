"""The conditions the mirror status view derives from progress rather than from a task (pure).

- ``REPLICATION_STALLED``: records wait on the source (record lag above 0) and none was copied for the
  flow's target latency (since the last acknowledgement, or since the task started).
- ``HEARTBEATS_MISSING``: the flow replicates a heartbeats topic (``heartbeats`` under any source prefix,
  as Java's ``ReplicationPolicy.isHeartbeatsTopic``) and the newest heartbeat copied is older than the
  bound (``pyconnect.mirror.heartbeats.max.age.ms``, default the target latency), or none was copied in
  that time since the task started. Heartbeats are written on the source every second by a
  MirrorHeartbeatConnector (in dedicated mode, the reverse pair's), so their age measures the flow end to
  end even when every other topic is idle. A flow without a heartbeats topic has no such condition, and
  neither has one without evidence of a heartbeat emitter: a heartbeats topic is replicated whatever the
  topic filter says (as in Java), so one left by an emitter that was removed is history, not a fault.
  The evidence is a MirrorHeartbeatConnector in the fleet writing to the flow's source cluster (its
  ``target.cluster.alias`` is the flow's source; any state, so pausing it raises the condition), or a
  heartbeat copied since the task started (an emitter elsewhere, e.g. another Connect cluster). Without
  it the heartbeat age is still shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyconnect.conditions import Condition
from pyconnect.mirror_status.progress import PartitionProgress


def stalled_partitions(
    partitions: Sequence[PartitionProgress], target_ms: int, now_ms: int
) -> list[PartitionProgress]:
    """The partitions whose records wait (record lag above 0) while none has been copied for
    ``target_ms``: since the last acknowledgement, or since the task started when nothing was."""
    out = []
    for p in partitions:
        lag = p.record_lag
        if not lag:
            continue
        since = p.last_replicated_ms if p.last_replicated_ms is not None else p.task_start_ms
        if since is not None and now_ms - since >= target_ms:
            out.append(p)
    return out


def is_heartbeats_topic(remote: str, separator: str) -> bool:
    """Whether ``remote`` is a replicated heartbeats topic (``heartbeats`` under any source prefix, as
    Java's ``ReplicationPolicy.isHeartbeatsTopic`` reads it; ``heartbeats`` itself under identity)."""
    return remote == "heartbeats" or remote.endswith(f"{separator}heartbeats")


def heartbeat_state(
    partitions: Sequence[PartitionProgress], bound_ms: int, now_ms: int, emitter_known: bool = True
) -> tuple[int | None, bool]:
    """(age of the newest heartbeat copied, whether heartbeats are missing) over the heartbeats topic's
    partitions of a flow: missing when that age exceeds ``bound_ms``, or none was copied in the
    ``bound_ms`` since the task started; never missing without evidence of an emitter (``emitter_known``,
    or a heartbeat copied since the task started). No partitions: ``(None, False)``."""
    if not partitions:
        return None, False
    newest = [p.newest_timestamp_ms for p in partitions if p.newest_timestamp_ms is not None]
    starts = [p.task_start_ms for p in partitions if p.task_start_ms is not None]
    emitting = emitter_known or bool(newest and starts and max(newest) >= min(starts))
    if newest:
        age = max(0, now_ms - max(newest))
        return age, emitting and age > bound_ms
    return None, emitting and bool(starts) and now_ms - max(starts) > bound_ms


def stalled_conditions(
    by_topic: Mapping[str, Sequence[PartitionProgress]], source: str, target_ms: int, now_ms: int
) -> list[Condition]:
    """``REPLICATION_STALLED`` for each topic with partitions whose records wait and none was copied
    for the target latency (:func:`stalled_partitions`)."""
    out = []
    for topic, parts in sorted(by_topic.items()):
        stalled = stalled_partitions(parts, target_ms, now_ms)
        if not stalled:
            continue
        waiting = sum(p.record_lag or 0 for p in stalled)
        shown = ", ".join(str(p.partition) for p in sorted(stalled, key=lambda p: p.partition)[:8])
        since = min(
            (p.last_replicated_ms if p.last_replicated_ms is not None else p.task_start_ms or now_ms)
            for p in stalled
        )
        out.append(
            Condition(
                "REPLICATION_STALLED",
                f"{waiting} records of {topic} wait (partitions {shown}) and none was copied for "
                f"{(now_ms - since) / 1000:.0f} s (target latency {target_ms / 1000:g} s)",
                since,
                cluster=source,
                subject=topic,
            )
        )
    return out


def heartbeat_condition(
    partitions: Sequence[PartitionProgress], source: str, bound_ms: int, now_ms: int, emitter_known: bool
) -> tuple[int | None, Condition | None]:
    """(age of the newest heartbeat copied, ``HEARTBEATS_MISSING`` or ``None``) for a flow whose
    replicated heartbeats topic has these partitions (:func:`heartbeat_state`)."""
    age, missing = heartbeat_state(partitions, bound_ms, now_ms, emitter_known)
    if not missing:
        return age, None
    shown = f"{age / 1000:.0f} s old" if age is not None else "not there"
    return age, Condition(
        "HEARTBEATS_MISSING",
        f"the newest heartbeat copied from {source} is {shown} (bound {bound_ms / 1000:g} s)",
        now_ms if age is None else now_ms - age + bound_ms,
        cluster=source,
        subject=partitions[0].topic,
    )
