"""The failover plan of consumer groups along one flow: the model and its assembly (pure, no I/O).

What was read (:mod:`connectors.mirror.offsets.failover_reads`) becomes, per group, one
:class:`PartitionPlan` per target partition the group has a checkpoint for, plus a row for each partition
the group committed on the source without a checkpoint (nothing is committed for those):

* ``source_offset``: the group's committed offset on the source (``source_offset_from`` ``source``), or,
  with the source unreachable, its checkpoint's upstream offset (``checkpoint``);
* ``checkpoint_upstream``/``checkpoint_downstream``: the latest checkpoint (what Java's
  ``RemoteClusterUtils.translateOffsets`` answers);
* ``target_offset``, ``expected_reread``, ``expected_skipped``, ``max_reread``, ``basis``:
  :func:`~connectors.mirror.offsets.failover_positions.decide` over the verified position, the offset
  syncs and the checkpoint;
* ``current_offset``: the group's committed offset on the target, and ``action`` (commit, keep, or leave
  a larger offset alone unless rewinding is allowed).

:func:`queries` says what to translate, :func:`stretches` which target records prove it
(:func:`~connectors.mirror.offsets.failover_positions.segment_for`), :func:`plan_group` assembles a group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_positions import (
    Action,
    Basis,
    Segment,
    action_for,
    decide,
    segment_for,
    verified_position,
)
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.policy import ReplicationPolicy
from connectors.mirror.records import TopicPartition
from pyconnect.kafka.group_admin import CommittedOffset

__all__ = [
    "FlowPlan",
    "GroupPlan",
    "PartitionPlan",
    "Query",
    "plan_group",
    "queries",
    "remote_topic",
    "source_topic_guess",
    "stretches",
]

Stretch = tuple[str, int, int, int | None]
SourceFrom = Literal["source", "checkpoint", "synced"]
IDLE_STATES = ("Empty", "Dead")


def remote_topic(policy: ReplicationPolicy, source: str, target: str, topic: str) -> str:
    """The checkpoint task's rename of a source topic to the target-side name (spec §3.3)."""
    if policy.topic_source(topic) == target:
        return policy.original_topic(topic)
    return policy.format_remote_topic(source, topic)


def source_topic_guess(policy: ReplicationPolicy, source: str, target: str, target_topic: str) -> str:
    """The inverse of :func:`remote_topic` when the source's topic list is unknown (source down)."""
    if policy.topic_source(target_topic) == source:
        upstream = policy.upstream_topic(target_topic)
        if upstream is not None:
            return upstream
    return policy.format_remote_topic(target, target_topic)


@dataclass(frozen=True)
class Query:
    """One partition to translate: where the group is on the source, and its checkpoint (if any)."""

    topic: str
    partition: int
    target_topic: str
    source_offset: int
    source_offset_from: SourceFrom
    checkpoint: Checkpoint | None
    metadata: str


@dataclass(frozen=True)
class PartitionPlan:
    """One partition of a group's plan (see the module docstring for each value)."""

    topic: str
    partition: int
    target_topic: str
    source_offset: int | None
    source_offset_from: SourceFrom
    checkpoint_upstream: int | None
    checkpoint_downstream: int | None
    target_offset: int | None
    current_offset: int | None
    expected_reread: int | None
    expected_skipped: int | None
    max_reread: int | None
    basis: Basis
    action: Action
    metadata: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "target_topic": self.target_topic,
            "source_offset": self.source_offset,
            "source_offset_from": self.source_offset_from,
            "checkpoint": None
            if self.checkpoint_upstream is None
            else {"upstream": self.checkpoint_upstream, "downstream": self.checkpoint_downstream},
            "target_offset": self.target_offset,
            "current_target_offset": self.current_offset,
            "expected_reread": self.expected_reread,
            "expected_skipped": self.expected_skipped,
            "max_reread": self.max_reread,
            "basis": self.basis,
            "action": self.action,
            "metadata": self.metadata,
        }


def _total(values: Iterable[int | None]) -> int | None:
    found = list(values)
    return None if any(v is None for v in found) else sum(v for v in found if v is not None)


@dataclass(frozen=True)
class GroupPlan:
    """One group: its state on the target (``holders``: its members there) and its partitions."""

    group: str
    state: str
    protocol: str
    holders: tuple[str, ...]
    partitions: tuple[PartitionPlan, ...]
    notes: tuple[str, ...] = ()

    @property
    def idle(self) -> bool:
        return self.state in IDLE_STATES

    @property
    def to_commit(self) -> dict[tuple[str, int], CommittedOffset]:
        """Target partition -> the offset and metadata executing commits."""
        return {
            (p.target_topic, p.partition): CommittedOffset(p.target_offset, p.metadata)
            for p in self.partitions
            if p.action in ("commit", "rewind") and p.target_offset is not None
        }

    @property
    def targets(self) -> dict[tuple[str, int], int]:
        """Target partition -> the offset the group has once the plan is executed (kept ones included)."""
        return {
            (p.target_topic, p.partition): p.target_offset
            for p in self.partitions
            if p.target_offset is not None and p.action in ("commit", "rewind", "keep")
        }

    @property
    def expected_reread(self) -> int | None:
        return _total(p.expected_reread for p in self.partitions if p.target_offset is not None)

    @property
    def expected_skipped(self) -> int | None:
        return _total(p.expected_skipped for p in self.partitions if p.target_offset is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "target_state": self.state,
            "target_protocol": self.protocol,
            "target_members": list(self.holders),
            "expected_reread": self.expected_reread,
            "expected_skipped": self.expected_skipped,
            "notes": list(self.notes),
            "partitions": [p.to_json() for p in self.partitions],
        }


@dataclass(frozen=True)
class FlowPlan:
    """Every group's plan along one flow, and what could be read."""

    flow: FailoverFlow
    source_reachable: bool
    offset_syncs_read: bool
    groups: tuple[GroupPlan, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def group(self, name: str) -> GroupPlan:
        return next(g for g in self.groups if g.group == name)


def queries(
    flow: FailoverFlow,
    checkpoints: Mapping[TopicPartition, Checkpoint],
    source_offsets: Mapping[tuple[str, int], CommittedOffset] | None,
) -> tuple[list[Query], list[tuple[str, int, str, CommittedOffset]]]:
    """``(queries, uncheckpointed)``: a :class:`Query` per checkpointed target partition, and the
    source partitions the group committed without a checkpoint ``(topic, partition, target topic, offset)``."""
    policy = flow.policy()
    source_of: dict[str, str] = {}
    for topic, _ in source_offsets or {}:
        source_of.setdefault(remote_topic(policy, flow.source, flow.target, topic), topic)
    found: list[Query] = []
    covered: set[tuple[str, int]] = set()
    for tp, checkpoint in checkpoints.items():
        topic = source_of.get(tp.topic) or source_topic_guess(policy, flow.source, flow.target, tp.topic)
        covered.add((topic, tp.partition))
        committed = (source_offsets or {}).get((topic, tp.partition))
        if committed is not None:
            found.append(
                Query(
                    topic, tp.partition, tp.topic, committed.offset, "source", checkpoint, committed.metadata
                )
            )
        else:
            found.append(
                Query(
                    topic,
                    tp.partition,
                    tp.topic,
                    checkpoint.upstream_offset,
                    "checkpoint",
                    checkpoint,
                    checkpoint.metadata,
                )
            )
    missing = [
        (topic, partition, remote_topic(policy, flow.source, flow.target, topic), committed)
        for (topic, partition), committed in (source_offsets or {}).items()
        if (topic, partition) not in covered
    ]
    found.sort(key=lambda q: (q.topic, q.partition))
    return found, sorted(missing, key=lambda m: (m[0], m[1]))


def _needs_proof(store: OffsetSyncStore | None, query: Query) -> bool:
    if store is None:
        return False
    translation = store.translate((query.topic, query.partition), query.source_offset)
    return translation is not None and translation.downstream_offset >= 0 and not translation.exact


def stretches(
    flow: FailoverFlow,
    found: Sequence[Query],
    store: OffsetSyncStore | None,
    syncs: Mapping[tuple[str, int], Sequence[tuple[int, int]]],
) -> dict[tuple[str, int, int], tuple[Segment, Stretch]]:
    """The target stretches whose records prove the queries the syncs alone do not place exactly, by
    ``(source topic, partition, source offset)``."""
    wanted: dict[tuple[str, int, int], tuple[Segment, Stretch]] = {}
    for query in found:
        if not _needs_proof(store, query):
            continue
        segment = segment_for(
            syncs.get((query.topic, query.partition), ()), query.source_offset, flow.offset_lag_max
        )
        if segment is None:
            continue
        stretch = (query.target_topic, query.partition, segment.read_from, segment.read_to)
        wanted[(query.topic, query.partition, query.source_offset)] = (segment, stretch)
    return wanted


def plan_group(
    flow: FailoverFlow,
    group: str,
    view: tuple[str, str, tuple[str, ...]],
    found: Sequence[Query],
    uncheckpointed: Sequence[tuple[str, int, str, CommittedOffset]],
    current: Mapping[tuple[str, int], CommittedOffset],
    store: OffsetSyncStore | None,
    proofs: Mapping[tuple[str, int, int], tuple[Segment, Sequence[int] | None]],
    *,
    allow_rewind: bool = False,
) -> GroupPlan:
    """One group's plan. ``view`` is ``(state, protocol, holders)`` on the target; ``current`` its committed
    offsets there; ``proofs`` the segments of :func:`stretches` with the record offsets read (``None``
    when they could not be read)."""
    rows: list[PartitionPlan] = []
    for query in found:
        translation = store.translate((query.topic, query.partition), query.source_offset) if store else None
        verified = None
        proof = proofs.get((query.topic, query.partition, query.source_offset))
        if proof is not None and proof[1] is not None:
            verified = verified_position(proof[0], query.source_offset, proof[1])
        checkpoint = query.checkpoint
        pair = None if checkpoint is None else (checkpoint.upstream_offset, checkpoint.downstream_offset)
        position = decide(query.source_offset, pair, translation, verified)
        on_target = current.get((query.target_topic, query.partition))
        current_offset = None if on_target is None else on_target.offset
        rows.append(
            PartitionPlan(
                query.topic,
                query.partition,
                query.target_topic,
                query.source_offset,
                query.source_offset_from,
                None if checkpoint is None else checkpoint.upstream_offset,
                None if checkpoint is None else checkpoint.downstream_offset,
                position.target_offset,
                current_offset,
                position.reread,
                position.skipped,
                position.max_reread,
                position.basis,
                action_for(position.target_offset, current_offset, allow_rewind),
                query.metadata,
            )
        )
    for topic, partition, target_topic, committed in uncheckpointed:
        on_target = current.get((target_topic, partition))
        rows.append(
            PartitionPlan(
                topic,
                partition,
                target_topic,
                committed.offset,
                "source",
                None,
                None,
                None,
                None if on_target is None else on_target.offset,
                None,
                None,
                None,
                "none",
                "no-checkpoint",
                committed.metadata,
            )
        )
    rows.sort(key=lambda r: (r.topic, r.partition))
    notes = []
    if any(r.action == "no-checkpoint" for r in rows):
        notes.append("partitions without a checkpoint are not committed")
    if any(r.action == "skip-rewind" for r in rows):
        notes.append("partitions already ahead on the target are left alone (--allow-rewind moves them)")
    state, protocol, holders = view
    return GroupPlan(group, state, protocol, holders, tuple(rows), tuple(notes))
