"""What a failback reads to fix the forward flow's ledger: per source partition the copy's end, the
orphans, and both clusters' bounds (see :mod:`.ledger` for the rules).

:func:`read_ledger`, each step bounded by ``timeout_s``:

1. the forward flow's offset syncs (:func:`connectors.mirror.offsets.failover_reads.read_flow_syncs`) on
   the cluster of ``offset-syncs.topic.location``: the newest sync and the exact runs per partition (a
   topic that cannot be read leaves every partition to the connector offsets, unverified);
2. the partitions: those of the syncs and of the forward connector's committed offsets that the source
   cluster has (heartbeat topics left out; syncs of topics it no longer has are named in a note);
3. the log start and last stable offset of each partition on the source and of its copy on the target;
4. the orphans: the source's committed records past each partition's last copied record, read to the
   last stable offset (records kept only when ``keep_records``: the quarantine copies them).

:func:`read_reverse_plan` fixes what the reverse flow copies: the partitions of B that a
MirrorSourceConnector with the reverse config copies (:func:`~.reverse_flow.copied_topics`), the first
offset of each (:func:`~.reverse_flow.reverse_starts`: the forward copy's end, or B's end at the
failover for B's own topics) and A's end of each copy (``0`` for a copy topic A does not have yet: the
reverse flow creates it).

Errors: :class:`~connectors.mirror.offsets.failover_calls.FailoverError` when a cluster cannot be read
(one line naming it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from connectors.mirror.failback.ledger import MirrorEnd, OrphanRange, mirror_end
from connectors.mirror.failback.positions import Run
from connectors.mirror.failback.reverse_flow import copied_topics, reverse_starts
from connectors.mirror.offsets.failover_calls import FailoverError, cluster_bounds, cluster_topics, one_line
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_reads import read_flow_syncs
from connectors.mirror.offsets.failover_state import parse_key
from connectors.mirror.offsets.mirror_client import MirrorClientError
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.record_offsets import FetchedRecord, committed_records

__all__ = [
    "Ledger",
    "PartitionLedger",
    "ReversePlan",
    "flow_runs",
    "read_ledger",
    "read_reverse_plan",
    "reverse_of",
]

Partition = tuple[str, int]
ALL_RUNS = 1 << 30


@dataclass(frozen=True)
class PartitionLedger:
    """One source partition: where its copy ended, its copy's topic on the target, the orphans, and the
    bounds ``(log start, last stable offset)`` of the partition on the source and of its copy."""

    end: MirrorEnd
    target_topic: str
    orphans: OrphanRange
    source_bounds: tuple[int, int]
    target_bounds: tuple[int, int]


@dataclass
class Ledger:
    """Every partition's :class:`PartitionLedger`, the forward runs (by source partition), the orphan
    records when kept, and notes for the report."""

    partitions: list[PartitionLedger]
    runs: dict[Partition, list[Run]]
    records: dict[Partition, list[FetchedRecord]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def reverse_of(flow: FailoverFlow) -> FailoverFlow:
    """The flow ``target -> source`` with the same policy and offset-syncs location (see
    :mod:`.reverse_flow` for why the location stays)."""
    return FailoverFlow(
        flow.target,
        flow.source,
        flow.target_config,
        flow.source_config,
        flow.policy_config,
        flow.offset_syncs_location,
        flow.offset_lag_max,
        f"the reverse of {flow.origin}",
    )


async def flow_runs(
    flow: FailoverFlow, timeout_s: float
) -> tuple[dict[Partition, list[Run]], dict[Partition, tuple[int, int]], int]:
    """The flow's exact runs (every one the topic still holds: a one-off read, unlike the checkpoint task's
    bounded index) and newest sync per partition, and the count of undecodable syncs skipped;
    :class:`MirrorClientError` when the offset-syncs topic cannot be read."""
    store, by_partition, skipped = await read_flow_syncs(flow, timeout_s, max_runs=ALL_RUNS)
    runs = {tp: store.runs(tp) for tp in by_partition}
    newest = {tp: pairs[-1] for tp, pairs in by_partition.items()}
    return runs, newest, skipped


async def read_ledger(
    flow: FailoverFlow, committed: Mapping[Partition, int], timeout_s: float, *, keep_records: bool
) -> Ledger:
    """The forward flow's :class:`Ledger` (see the module docstring); ``committed`` holds the forward
    connector's committed Connect offsets by source partition."""
    notes: list[str] = []
    try:
        runs, newest, skipped = await flow_runs(flow, timeout_s)
        if skipped:
            notes.append(f"skipped {skipped} undecodable records in {flow.offset_syncs_topic}")
    except MirrorClientError as exc:
        runs, newest = {}, {}
        notes.append(f"offset syncs not read ({exc}): every copy's end rests on the connector offsets alone")
    policy = flow.policy()
    on_source = await cluster_topics(flow.source_config, flow.source, timeout_s)
    candidates = {tp for tp in {*newest, *committed} if not policy.is_heartbeats_topic(tp[0])}
    gone = sorted({t for t, p in candidates if p not in on_source.get(t, ())})
    if gone:
        notes.append(
            f"offset syncs of topics cluster {flow.source} no longer has, left out: {', '.join(gone)}"
        )
    partitions = sorted(tp for tp in candidates if tp[1] in on_source.get(tp[0], ()))
    targets = {tp: (policy.format_remote_topic(flow.source, tp[0]), tp[1]) for tp in partitions}
    source_bounds = await cluster_bounds(flow.source_config, flow.source, partitions, timeout_s)
    target_bounds = await cluster_bounds(flow.target_config, flow.target, list(targets.values()), timeout_s)
    ends = {
        tp: mirror_end(tp[0], tp[1], newest.get(tp), committed.get(tp), target_bounds[targets[tp]][0])
        for tp in partitions
    }
    stretches = [
        (t, p, max(ends[(t, p)].last_copied, source_bounds[(t, p)][0] - 1), None) for t, p in partitions
    ]
    try:
        read = await committed_records(
            mirror_client_config(flow.source_config, "consumer"), stretches, timeout_s
        )
    except TimeoutError:
        raise FailoverError(
            f"reading the orphans on cluster {flow.source} did not finish within {timeout_s:.0f} s"
        ) from None
    except Exception as exc:
        raise FailoverError(f"cannot read the orphans on cluster {flow.source}: {one_line(exc)}") from None
    ledger = Ledger([], runs, notes=notes)
    for stretch in stretches:
        topic, partition = stretch[0], stretch[1]
        records = read[stretch]
        size = sum(len(r.key or b"") + len(r.value or b"") for r in records)
        orphans = OrphanRange(
            topic,
            partition,
            records[0].offset if records else None,
            records[-1].offset if records else None,
            len(records),
            size,
        )
        ledger.partitions.append(
            PartitionLedger(
                ends[(topic, partition)],
                targets[(topic, partition)][0],
                orphans,
                source_bounds[(topic, partition)],
                target_bounds[targets[(topic, partition)]],
            )
        )
        if keep_records:
            ledger.records[(topic, partition)] = records
    return ledger


@dataclass(frozen=True)
class ReversePlan:
    """What the reverse flow copies: the first offset of each partition of B it copies, and A's last
    stable offset of each copy (by partition of A)."""

    starts: dict[Partition, int]
    copy_ends: dict[Partition, int]


async def read_reverse_plan(
    flow: FailoverFlow,
    reverse_config: Mapping[str, str],
    ends: list[MirrorEnd],
    own_ends: Mapping[str, int] | None,
    timeout_s: float,
) -> ReversePlan:
    """The :class:`ReversePlan` of the failback of ``flow`` (see the module docstring): ``reverse_config``
    is the reverse MirrorSourceConnector's (its topic filter decides what it copies), ``ends`` the forward
    copy's ends, ``own_ends`` what the failover recorded (``topic:partition`` of B -> end; ``None``:
    nothing)."""
    back = reverse_of(flow)
    policy, back_policy = flow.policy(), back.policy()
    on_target = await cluster_topics(flow.target_config, flow.target, timeout_s)
    copied = copied_topics(reverse_config, back_policy, flow.source, on_target)
    partitions = [(t, p) for t in copied for p in on_target[t]]
    bounds = await cluster_bounds(flow.target_config, flow.target, partitions, timeout_s)
    mirror_ends = {
        (policy.format_remote_topic(flow.source, e.topic), e.partition): e.target_end for e in ends
    }
    own = None if own_ends is None else {parse_key(k): v for k, v in own_ends.items()}
    starts = reverse_starts(partitions, mirror_ends, own, bounds)
    copies = [(back_policy.format_remote_topic(flow.target, t), p) for t, p in partitions]
    on_source = await cluster_topics(flow.source_config, flow.source, timeout_s)
    present = [(t, p) for t, p in copies if p in on_source.get(t, ())]
    found = await cluster_bounds(flow.source_config, flow.source, present, timeout_s)
    return ReversePlan(starts, {tp: found[tp][1] if tp in found else 0 for tp in copies})
