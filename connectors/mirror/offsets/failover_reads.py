"""What a failover reads from the two clusters of a flow, for many groups at once.

:func:`read_flow` reads, each step bounded by ``timeout_s``:

1. on the target (required): the checkpoints topic once, the latest checkpoint per group and target
   partition; each requested group's view (state, protocol, members) and committed offsets. With
   ``all_groups`` the groups are every group with a checkpoint. A requested group without checkpoints
   that is a share group on the target, and with ``all_groups`` every share group there, is read by
   :mod:`connectors.mirror.offsets.failover_share` (``FlowReads.share``);
2. on the source, when configured and reachable: each group's committed offsets (a source that is down
   is the disaster being handled: a note, not an error);
3. the offset-syncs topic on the cluster of ``offset-syncs.topic.location`` when it can be read (a note
   otherwise), in topic order per source partition, and an exact-mode
   :class:`~connectors.mirror.offsets.translation.OffsetSyncStore` of them.

:func:`read_stretches` then reads the target records the plan needs
(:func:`connectors.mirror.offsets.failover_plan.stretches`); a stretch that cannot be read gives ``None``
(the plan falls back to the offset syncs) and a note.

Errors: :class:`NoCheckpoints` when the checkpoints topic is missing or empty (and no share group is
asked for), :class:`UnknownGroup` for a requested group without checkpoints that is no share group (naming its offsets on the source when it has some there),
:class:`FailoverError` when the target cannot be read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from connectors.mirror.checkpoint_records import Checkpoint, RecordFormatError
from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    NoCheckpoints,
    UnknownGroup,
    bounded,
    close_quietly,
    described,
    one_line,
    retrying,
)
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_share import ShareReads, read_share_groups, read_source_starts
from connectors.mirror.offsets.mirror_client import MirrorClient, MirrorClientError, read_offset_syncs
from connectors.mirror.offsets.translation import DEFAULT_MAX_RUNS, OffsetSyncStore
from connectors.mirror.records import TopicPartition
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_view import GroupView
from pyconnect.kafka.record_offsets import Stretch, committed_record_offsets

Offsets = dict[tuple[str, int], CommittedOffset]


@dataclass
class FlowReads:
    """Everything :func:`read_flow` found; ``source_offsets`` is ``None`` when the source was not read,
    ``store`` and ``syncs`` when the offset syncs were not."""

    groups: list[str]
    checkpoints: dict[str, dict[TopicPartition, Checkpoint]]
    views: dict[str, GroupView]
    target_offsets: dict[str, Offsets]
    source_offsets: dict[str, Offsets] | None
    store: OffsetSyncStore | None
    syncs: dict[tuple[str, int], list[tuple[int, int]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    share: ShareReads = field(default_factory=ShareReads)


async def _checkpoints(
    flow: FailoverFlow, timeout_s: float
) -> tuple[dict[str, dict[TopicPartition, Checkpoint]], int]:
    client = MirrorClient(flow.target_config, alias=flow.target, timeout_s=timeout_s, policy=flow.policy())
    topic = flow.checkpoints_topic
    try:
        if topic not in await client.list_topics():
            raise NoCheckpoints(
                f"flow {flow.name} has no checkpoints yet: no topic {topic} on cluster {flow.target} "
                f"(is its MirrorCheckpointConnector running?)"
            )
        read = await client.checkpoint_records(flow.source)
    except MirrorClientError as exc:
        raise FailoverError(str(exc)) from None
    finally:
        await client.close()
    latest: dict[str, dict[TopicPartition, Checkpoint]] = {}
    skipped = 0
    for key, value in read.records:
        try:
            checkpoint = Checkpoint.from_record(key, value)
        except RecordFormatError:
            skipped += 1
            continue
        latest.setdefault(checkpoint.consumer_group_id, {})[checkpoint.topic_partition] = checkpoint
    if not latest:
        raise NoCheckpoints(
            f"flow {flow.name} has no checkpoints yet: {topic} on cluster {flow.target} holds none"
        )
    return latest, skipped


async def _group_offsets(
    config: Mapping[str, str], cluster: str, groups: Sequence[str], timeout_s: float, *, views: bool
) -> tuple[dict[str, GroupView], dict[str, Offsets]]:
    admin = GroupAdmin(mirror_client_config(config, "admin"))
    try:
        await bounded(admin.start(), timeout_s, cluster)
        found_views = (
            await retrying(lambda: described(admin, list(groups)), timeout_s, cluster) if views else {}
        )
        offsets: dict[str, Offsets] = {}
        for group in groups:
            offsets[group] = await retrying(
                functools.partial(admin.committed_offsets, group), timeout_s, cluster
            )
        return found_views, offsets
    finally:
        await close_quietly(admin)


async def _source_offsets(
    flow: FailoverFlow, groups: Sequence[str], timeout_s: float, notes: list[str]
) -> dict[str, Offsets] | None:
    if not flow.source_config.get("bootstrap.servers"):
        notes.append(f"cluster {flow.source} is not configured: source offsets are the checkpointed ones")
        return None
    try:
        _, offsets = await _group_offsets(flow.source_config, flow.source, groups, timeout_s, views=False)
    except Exception as exc:
        notes.append(
            f"cluster {flow.source} is unreachable ({one_line(exc)}): source offsets are the checkpointed ones"
        )
        return None
    return offsets


async def _offset_syncs(
    flow: FailoverFlow, timeout_s: float, source_reachable: bool, notes: list[str]
) -> tuple[OffsetSyncStore | None, dict[tuple[str, int], list[tuple[int, int]]]]:
    topic = flow.offset_syncs_topic
    if flow.offset_syncs_location == "source" and (not flow.source_config or not source_reachable):
        notes.append(
            f"offset syncs {topic} live on cluster {flow.source}, which cannot be read: "
            "target offsets come from the checkpoints alone"
        )
        return None, {}
    try:
        store, by_partition, skipped = await read_flow_syncs(flow, timeout_s)
    except MirrorClientError as exc:
        notes.append(f"offset syncs not read ({exc}): target offsets come from the checkpoints alone")
        return None, {}
    if skipped:
        notes.append(f"skipped {skipped} undecodable records in {topic}")
    return store, by_partition


async def read_flow_syncs(
    flow: FailoverFlow, timeout_s: float, max_runs: int = DEFAULT_MAX_RUNS
) -> tuple[OffsetSyncStore, dict[tuple[str, int], list[tuple[int, int]]], int]:
    """The flow's offset syncs, read from the cluster of its ``offset-syncs.topic.location``: an exact-mode
    store of them (keeping the newest ``max_runs`` runs per partition), each partition's ``(upstream,
    downstream)`` pairs in topic order, and the count of undecodable records skipped.
    :class:`MirrorClientError` when the topic cannot be read."""
    alias, config = (
        (flow.source, flow.source_config)
        if flow.offset_syncs_location == "source"
        else (flow.target, flow.target_config)
    )
    syncs, skipped = await read_offset_syncs(
        mirror_client_config(config, "consumer"),
        flow.offset_syncs_topic,
        timeout_s,
        cluster=f"cluster {alias}",
    )
    store = OffsetSyncStore("exact", max_runs=max_runs, max_offset_lag=flow.offset_lag_max)
    store.start(must_read_to_end=False)
    by_partition: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for sync in syncs:
        store.handle_sync(sync)
        by_partition.setdefault((sync.topic, sync.partition), []).append(
            (sync.upstream_offset, sync.downstream_offset)
        )
    store.mark_read_to_end()
    return store, by_partition, skipped


def _unknown(flow: FailoverFlow, group: str, source_offsets: Mapping[str, Offsets] | None) -> UnknownGroup:
    known = bool(source_offsets and source_offsets.get(group))
    hint = (
        f" (it has committed offsets on {flow.source}: do the checkpoint connector's groups include it?)"
        if known
        else ""
    )
    return UnknownGroup(
        f"unknown group {group}: no checkpoint of it in {flow.checkpoints_topic} on cluster {flow.target}{hint}"
    )


async def read_flow(
    flow: FailoverFlow, groups: Sequence[str], timeout_s: float, *, all_groups: bool = False
) -> FlowReads:
    """Read what the plans of ``groups`` (or of every checkpointed group and every share group on the
    target) need; see the module docstring."""
    notes: list[str] = []
    no_checkpoints: NoCheckpoints | None = None
    try:
        checkpoints, skipped = await _checkpoints(flow, timeout_s)
    except NoCheckpoints as exc:
        no_checkpoints, checkpoints, skipped = exc, {}, 0
    if skipped:
        notes.append(f"skipped {skipped} undecodable checkpoint records")
    requested = list(dict.fromkeys(groups))
    missing = [g for g in requested if g not in checkpoints]
    share = (
        await read_share_groups(flow, None if all_groups else missing, timeout_s, notes)
        if (all_groups or missing)
        else ShareReads()
    )
    wanted = sorted(checkpoints) if all_groups else [g for g in requested if g in checkpoints]
    asked = wanted + [g for g in missing if g not in share.groups and g not in share.left]
    source_offsets = await _source_offsets(flow, asked, timeout_s, notes) if asked or share.groups else None
    unknown = [g for g in missing if g not in share.groups and g not in share.left]
    notes += [f"share group {g} not moved: {why}" for g, why in share.left.items()]
    if no_checkpoints is not None and (unknown or not (share.groups or share.left)):
        raise no_checkpoints
    if unknown:
        raise _unknown(flow, unknown[0], source_offsets)
    if source_offsets is not None:
        await read_source_starts(share, flow, timeout_s, notes)
    try:
        views, target_offsets = (
            await _group_offsets(flow.target_config, flow.target, wanted, timeout_s, views=True)
            if wanted
            else ({}, {})
        )
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(f"cannot read the groups on cluster {flow.target}: {one_line(exc)}") from None
    store, syncs = await _offset_syncs(flow, timeout_s, source_offsets is not None, notes)
    return FlowReads(
        wanted,
        {g: checkpoints[g] for g in wanted},
        views,
        target_offsets,
        source_offsets,
        store,
        syncs,
        notes,
        share,
    )


async def read_stretches(
    flow: FailoverFlow, wanted: Sequence[Stretch], timeout_s: float, notes: list[str]
) -> dict[Stretch, list[int] | None]:
    """The committed record offsets of each stretch on the target (``None`` for all when unreadable)."""
    if not wanted:
        return {}
    try:
        found = await committed_record_offsets(
            mirror_client_config(flow.target_config, "consumer"), wanted, timeout_s
        )
    except Exception as exc:
        notes.append(f"target records not read ({one_line(exc)}): target offsets come from the offset syncs")
        return dict.fromkeys(wanted)
    return {stretch: found.get(stretch) for stretch in wanted}
