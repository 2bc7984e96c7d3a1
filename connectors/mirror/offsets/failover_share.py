"""Share groups (KIP-932) in ``pyconnect failover``: their start offsets, read, planned and set on the target.

A share group has no committed offsets and no checkpoints: per partition it keeps a *start offset*
(every record before it has completed delivery). The checkpoint connector's continuous sync
(:mod:`connectors.mirror.share_group_sync`) sets the target's start offsets from the source's as they
move; the failover command finishes that move:

* **Reads** (:func:`read_share_groups`): which of the requested groups (or, with ``--all-groups``, which
  groups on the target) are share groups on the target (ListGroups type ``share``), or, asked for by
  name, on the source (the target creates them when their start offsets are set; a target without share
  groups, before Kafka 4.2, leaves them behind with a note saying so, and the others move); their view there
  (ShareGroupDescribe: state and members) and where they stand per partition, on the target and, when it
  can be reached, on the source (DescribeShareGroupOffsets, with the lag read as
  :func:`~connectors.mirror.share_group_sync.effective_starts` reads it: a caught-up group stands at the
  partition's end). A cluster without share groups (before Kafka 4.2) is a note, and the other groups are
  still moved.
* **Plan** (:func:`plan_share_group`, pure): with the source read, one row per source partition the flow
  copies (the offset syncs know it): the source's start offset translated exactly
  (:class:`~connectors.mirror.offsets.translation.OffsetSyncStore`, basis ``offset syncs``; the re-read
  is proven where the syncs prove the copy), compared with the target's (commit, keep, skip-rewind or,
  allowed, rewind; ``no-translation`` where the syncs cannot place it). With the source down (the
  disaster), the target's start offsets are those the continuous sync last set: the rows keep them
  (basis ``share sync``), re-read unknown; a share group with none there is a :class:`UnknownGroup`.
* **Execute** (:func:`move_share_group`): AlterShareGroupOffsets of the offsets that differ (the
  coordinator refuses it while the group has members: a :class:`FailoverRefused`), then the start offsets
  are read back; each must be at least the planned one (``verified``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    FailoverRefused,
    UnknownGroup,
    bounded,
    close_quietly,
    one_line,
    retrying,
)
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_plan import GroupPlan, PartitionPlan, remote_topic, source_topic_guess
from connectors.mirror.offsets.failover_positions import Action, Basis, action_for
from connectors.mirror.offsets.failover_state import FailoverState
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.share_group_sync import SHARE_PROTOCOL_TYPE, effective_starts
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_offsets import ShareGroupsUnsupported, SyncAdmin
from pyconnect.kafka.group_view import GroupView
from pyconnect.protocol.share_group_offsets import NON_EMPTY_GROUP

__all__ = [
    "ShareReads",
    "move_share_group",
    "plan_share_group",
    "read_share_groups",
    "read_source_starts",
    "share_outcome",
]

TP = tuple[str, int]


@dataclass
class ShareReads:
    """What :func:`read_share_groups` found: the share groups among those asked, their views and start
    offsets on the target, and on the source (``None`` when the source was not read)."""

    groups: list[str] = field(default_factory=list)
    left: dict[str, str] = field(default_factory=dict)
    """Share groups of the source asked for that cannot be moved, with why (a note; the others move)."""
    views: dict[str, GroupView] = field(default_factory=dict)
    target_starts: dict[str, dict[TP, int]] = field(default_factory=dict)
    source_starts: dict[str, dict[TP, int]] | None = None


async def _starts(
    admin: SyncAdmin, groups: Sequence[str], timeout_s: float, cluster: str
) -> dict[str, dict[TP, int]]:
    """Where each share group stands per partition (the lag read against the end read just before)."""
    first = await retrying(functools.partial(admin.share_offsets, groups), timeout_s, cluster)
    partitions = {tp for starts in first.offsets.values() for tp in starts}
    ends = await retrying(functools.partial(admin.log_ends, partitions, refresh=True), timeout_s, cluster)
    answer = await retrying(functools.partial(admin.share_offsets, groups), timeout_s, cluster)
    return {
        g: effective_starts(answer.offsets.get(g, {}), answer.lags.get(g, {}), ends)
        for g in groups
        if g not in answer.errors
    }


async def read_share_groups(
    flow: FailoverFlow, candidates: Sequence[str] | None, timeout_s: float, notes: list[str]
) -> ShareReads:
    """The share groups among ``candidates`` (``None``: every share group on the target), their views and
    start offsets on the target (see the module docstring); :func:`read_source_starts` adds the source's."""
    reads = ShareReads()
    admin = SyncAdmin(mirror_client_config(flow.target_config, "admin"), flow.target)
    try:
        await bounded(admin.start(), timeout_s, flow.target)
        kinds = await retrying(admin.group_types, timeout_s, flow.target)
        shares = sorted(g for g, kind in kinds.items() if kind == SHARE_PROTOCOL_TYPE)
        reads.groups = shares if candidates is None else [g for g in candidates if g in set(shares)]
        absent = [g for g in candidates or () if g not in set(shares)]
        if absent:
            await _left_behind(reads, admin, flow, absent, timeout_s)
        if not reads.groups:
            return reads
        reads.views = await retrying(
            functools.partial(admin.describe_share, reads.groups), timeout_s, flow.target
        )
        reads.target_starts = await _starts(admin, reads.groups, timeout_s, flow.target)
    except ShareGroupsUnsupported as exc:
        if candidates:
            notes.append(f"share groups not moved: {exc}")
        reads.groups = []
        return reads
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(
            f"cannot read the share groups on cluster {flow.target}: {one_line(exc)}"
        ) from None
    finally:
        await close_quietly(admin)
    return reads


async def _left_behind(
    reads: ShareReads, admin: SyncAdmin, flow: FailoverFlow, absent: Sequence[str], timeout_s: float
) -> None:
    """Of ``absent`` (asked for, not share groups on the target), those that are share groups on the
    source: moved (``reads.groups``: the target creates them with their first start offsets), or, when
    the target has no share groups (before Kafka 4.2), left in ``reads.left`` with why. Nothing when the
    source cannot be asked."""
    on_source = await _source_share_groups(flow, absent, timeout_s)
    if not on_source:
        return
    try:
        await admin.share_offsets(on_source)
    except ShareGroupsUnsupported as exc:
        why = f"a share group on cluster {flow.source}, but {exc}: share groups move between Kafka 4.2 or later clusters"
        reads.left.update(dict.fromkeys(on_source, why))
        return
    reads.groups += [g for g in on_source if g not in reads.groups]


async def _source_share_groups(flow: FailoverFlow, names: Sequence[str], timeout_s: float) -> list[str]:
    """Which of ``names`` are share groups on the source (none when it is not configured or not reached)."""
    if not flow.source_config.get("bootstrap.servers"):
        return []
    admin = SyncAdmin(mirror_client_config(flow.source_config, "admin"), flow.source)
    try:
        await bounded(admin.start(), min(timeout_s, 10.0), flow.source)
        kinds = await bounded(admin.group_types(), min(timeout_s, 10.0), flow.source)
    except Exception:
        return []
    finally:
        await close_quietly(admin)
    return [g for g in names if kinds.get(g) == SHARE_PROTOCOL_TYPE]


async def read_source_starts(
    reads: ShareReads, flow: FailoverFlow, timeout_s: float, notes: list[str]
) -> None:
    """The share groups' start offsets on the source into ``reads.source_starts`` (left ``None``, with a
    note, when the source cannot answer)."""
    if not reads.groups or not flow.source_config.get("bootstrap.servers"):
        return
    admin = SyncAdmin(mirror_client_config(flow.source_config, "admin"), flow.source)
    try:
        await bounded(admin.start(), timeout_s, flow.source)
        reads.source_starts = await _starts(admin, reads.groups, timeout_s, flow.source)
    except Exception as exc:
        notes.append(
            f"share group start offsets on cluster {flow.source} not read ({one_line(exc)}): "
            f"share groups keep the start offsets the continuous sync set on {flow.target}"
        )
    finally:
        await close_quietly(admin)


def _flow_topics(
    flow: FailoverFlow, target_starts: Mapping[TP, int], store: OffsetSyncStore | None
) -> set[str]:
    """The target topics of ``target_starts`` that are copies of the flow's source topics: named so by the
    policy, or known to the offset syncs; all of them when neither tells (an identity policy with the
    syncs unreadable)."""
    policy = flow.policy()
    copied = {t for t, _ in store.partitions()} if store is not None else set()
    topics = {t for t, _ in target_starts}
    ours = {
        t
        for t in topics
        if policy.topic_source(t) == flow.source
        or source_topic_guess(policy, flow.source, flow.target, t) in copied
    }
    return ours or topics


def _row(
    topic: str,
    partition: int,
    target_topic: str,
    source: int | None,
    target: int | None,
    current: int | None,
    *,
    basis: Basis,
    action: Action,
    reread: int | None = None,
    bound: int | None = None,
) -> PartitionPlan:
    """One partition of a share group's plan: no checkpoint; skipped 0 where the re-read is proven."""
    return PartitionPlan(
        topic,
        partition,
        target_topic,
        source,
        "synced" if source is None else "source",
        None,
        None,
        target,
        current,
        reread,
        0 if reread is not None else None,
        bound,
        basis,
        action,
    )


def _kept_rows(
    flow: FailoverFlow, target_starts: Mapping[TP, int], store: OffsetSyncStore | None
) -> list[PartitionPlan]:
    """With the source down: the target's start offsets along the flow, kept as the sync set them."""
    policy, ours = flow.policy(), _flow_topics(flow, target_starts, store)
    return [
        _row(
            source_topic_guess(policy, flow.source, flow.target, topic),
            partition,
            topic,
            None,
            offset,
            offset,
            basis="share sync",
            action="keep",
        )
        for (topic, partition), offset in sorted(target_starts.items())
        if topic in ours
    ]


def _translated_rows(
    flow: FailoverFlow,
    source_starts: Mapping[TP, int],
    target_starts: Mapping[TP, int],
    store: OffsetSyncStore | None,
    allow_rewind: bool,
) -> list[PartitionPlan]:
    """With the source read: each start offset there translated exactly and compared with the target's."""
    policy = flow.policy()
    copied = set(store.partitions()) if store is not None else set()
    rows = []
    for (topic, partition), start in sorted(source_starts.items()):
        target_topic = remote_topic(policy, flow.source, flow.target, topic)
        have = target_starts.get((target_topic, partition))
        translation = None if store is None else store.translate((topic, partition), start)
        if translation is None or translation.downstream_offset < 0:
            if store is not None and (topic, partition) not in copied:
                continue  # a partition the flow does not copy
            rows.append(
                _row(topic, partition, target_topic, start, None, have, basis="none", action="no-translation")
            )
            continue
        target = translation.downstream_offset
        action = action_for(target, have, allow_rewind)
        rows.append(
            _row(
                topic,
                partition,
                target_topic,
                start,
                target,
                have,
                basis="offset syncs",
                action=action,
                reread=translation.reread,
                bound=translation.reread_bound,
            )
        )
    return rows


def plan_share_group(
    flow: FailoverFlow,
    group: str,
    view: GroupView,
    source_starts: Mapping[TP, int] | None,
    target_starts: Mapping[TP, int],
    store: OffsetSyncStore | None,
    *,
    allow_rewind: bool,
) -> GroupPlan:
    """The plan of one share group (see the module docstring); pure."""
    notes: tuple[str, ...] = ()
    if source_starts is None:
        rows = _kept_rows(flow, target_starts, store)
        if not rows:
            raise UnknownGroup(
                f"share group {group} has no start offsets on cluster {flow.target} for flow {flow.name} and "
                f"cluster {flow.source} cannot be read: the continuous group offset sync never set them"
            )
        notes = (f"start offsets as the continuous sync last set them on {flow.target}",)
    else:
        rows = _translated_rows(flow, source_starts, target_starts, store, allow_rewind)
    return GroupPlan(group, view.state, "share", view.holders, tuple(rows), notes)


def share_outcome(errors: Mapping[TP, int], group: str, cluster: str) -> None:
    """Raise for a refused or failed AlterShareGroupOffsets (``errors``: the group-level code under
    ``("", -1)`` and each partition's)."""
    if not errors:
        return
    if errors.get(("", -1)) == NON_EMPTY_GROUP:
        raise FailoverRefused(
            f"refusing to commit: share group {group} has members on cluster {cluster} (NON_EMPTY_GROUP): "
            "stop its share consumers there and run again"
        )
    raise FailoverError(
        f"setting {len(errors)} start offsets of share group {group} on cluster {cluster} failed "
        f"(error codes {sorted(set(errors.values()))})"
    )


async def move_share_group(
    admin: SyncAdmin, flow: FailoverFlow, group: str, state: FailoverState, timeout_s: float
) -> tuple[int, int]:
    """Set the share group's planned start offsets that differ, read them back and advance its status;
    ``(set now, already in place)``."""
    wanted = state.groups[group].offsets()
    current = (await _starts(admin, [group], timeout_s, flow.target)).get(group, {})
    changes = {tp: offset for tp, offset in wanted.items() if current.get(tp) != offset}
    if changes:
        answer = await retrying(
            functools.partial(admin.alter_share_offsets, group, changes), timeout_s, flow.target
        )
        errors = {(p.topic, p.partition): p.error_code for p in answer.partitions if p.error_code}
        if answer.error_code:
            errors[("", -1)] = answer.error_code
        share_outcome(errors, group, flow.target)
    state.advance(group, "committed")
    after = (await _starts(admin, [group], timeout_s, flow.target)).get(group, {})
    for (topic, partition), offset in wanted.items():
        found = after.get((topic, partition))
        if found is None or found < offset:
            raise FailoverError(
                f"share group {group} on cluster {flow.target} starts at {found} for {topic}-{partition} after "
                f"setting {offset}: run again to retry"
            )
    state.advance(group, "verified")
    return len(changes), len(wanted) - len(changes)
