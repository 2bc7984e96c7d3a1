"""What a failback reads to return the groups: their offsets and views on both clusters and both flows'
runs, turned into :class:`~.group_return.GroupReturn` values by :func:`~.group_return.plan_return`.

:func:`read_returns` needs the measured state (the copy ends, A's ends at the reverse start, and the reverse
flow's starts on B: the partitions of B's own topics it copies return on their copies on A; through an
adopted reverse connector, from the oldest of its offset syncs of the partition on). The
forward runs must be readable (:class:`~connectors.mirror.offsets.mirror_client.MirrorClientError`
otherwise); missing reverse syncs (no reverse flow yet: ``plan``) leave every position past the copy's end
at the reverse start. A position between two runs of syncs (:class:`~.positions.Between`) is settled by
counting the records around it on both clusters and planning again. Each cluster call is bounded by
``timeout_s``; failures are
:class:`~connectors.mirror.offsets.failover_calls.FailoverError`, one line.
"""

from __future__ import annotations

import functools

from connectors.mirror.failback.group_return import GroupReturn, PartitionReturn, plan_return
from connectors.mirror.failback.ledger_reads import flow_runs, reverse_of
from connectors.mirror.failback.positions import SourcePosition, settle
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    bounded,
    close_quietly,
    described,
    retrying,
)
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_state import parse_key
from connectors.mirror.offsets.mirror_client import MirrorClientError
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_admin import GroupAdmin
from pyconnect.kafka.group_view import GroupView
from pyconnect.kafka.record_offsets import Stretch, committed_record_offsets

__all__ = ["group_offsets", "read_returns"]

Partition = tuple[str, int]


async def group_offsets(
    config: dict[str, str], cluster: str, groups: list[str], timeout_s: float
) -> tuple[dict[str, GroupView], dict[str, dict[Partition, int]]]:
    """The views and committed offsets of ``groups`` on ``cluster`` (a ``MirrorClientConfig`` map)."""
    admin = GroupAdmin(mirror_client_config(config, "admin"))
    try:
        await bounded(admin.start(), timeout_s, cluster)
        views = await retrying(functools.partial(described, admin, groups), timeout_s, cluster)
        offsets = {}
        for group in groups:
            found = await retrying(functools.partial(admin.committed_offsets, group), timeout_s, cluster)
            offsets[group] = {tp: c.offset for tp, c in found.items()}
        return views, offsets
    finally:
        await close_quietly(admin)


async def read_returns(
    flow: FailoverFlow, state: FailbackState, groups: list[str], timeout_s: float, *, allow_rewind: bool
) -> list[GroupReturn]:
    """Each group's :class:`GroupReturn` from the clusters now (see the module docstring)."""
    target_views, target_offsets = await group_offsets(flow.target_config, flow.target, groups, timeout_s)
    source_views, source_offsets = await group_offsets(flow.source_config, flow.source, groups, timeout_s)
    forward_runs, _, _ = await flow_runs(flow, timeout_s)
    try:
        reverse_runs, _, _ = await flow_runs(reverse_of(flow), timeout_s)
    except MirrorClientError:
        reverse_runs = {}
    policy = flow.policy()
    ends = {
        (policy.format_remote_topic(flow.source, e.topic), e.partition): (e.topic, e)
        for e in state.ends.values()
    }
    starts = {parse_key(k): v for k, v in state.source_ends.items()}
    back = reverse_of(flow).policy()
    own: dict[Partition, tuple[str, int | None]] = {}
    for key, start in state.reverse_starts.items():
        tp = parse_key(key)
        if tp in ends:
            continue
        if state.reverse_adopted:  # copying all along: proved from its oldest sync on
            runs = reverse_runs.get(tp)
            own[tp] = (back.format_remote_topic(flow.target, tp[0]), runs[0][0] if runs else None)
        else:
            own[tp] = (back.format_remote_topic(flow.target, tp[0]), start)

    def plan(settled: dict[str, dict[Partition, SourcePosition]]) -> list[GroupReturn]:
        return [
            plan_return(
                group,
                (target_views[group], target_offsets[group]),
                (source_views[group], source_offsets[group]),
                ends,
                forward_runs,
                reverse_runs,
                starts,
                allow_rewind=allow_rewind,
                own=own,
                settled=settled.get(group),
            )
            for group in groups
        ]

    first = plan({})
    waiting = [(r.group, p) for r in first for p in r.between]
    if not waiting:
        return first
    return plan(await _settle(flow, waiting, timeout_s))


async def _settle(
    flow: FailoverFlow, waiting: list[tuple[str, PartitionReturn]], timeout_s: float
) -> dict[str, dict[Partition, SourcePosition]]:
    """The positions of the partitions left between two runs: the records of B in ``(b_after, committed)``
    counted, the records of A in ``(a_after, a_before)`` listed (:func:`~.positions.settle`); the A side
    is the partition's topic on A (the forward source, or the copy of one of B's own topics)."""
    on_b: list[Stretch] = []
    on_a: list[Stretch] = []
    for _, p in waiting:
        assert p.between is not None
        on_b.append((p.target_topic, p.partition, p.between.b_after, p.between.committed))
        on_a.append((p.source_topic, p.partition, p.between.a_after, p.between.a_before))
    try:
        counted = await committed_record_offsets(
            mirror_client_config(flow.target_config, "consumer"), on_b, timeout_s
        )
        listed = await committed_record_offsets(
            mirror_client_config(flow.source_config, "consumer"), on_a, timeout_s
        )
    except TimeoutError:
        raise FailoverError(
            f"reading the records around the groups' offsets did not finish within {timeout_s:.0f} s"
        ) from None
    settled: dict[str, dict[Partition, SourcePosition]] = {}
    for (group, p), b_stretch, a_stretch in zip(waiting, on_b, on_a, strict=True):
        assert p.between is not None
        position = settle(p.between, len(counted.get(b_stretch, [])), listed.get(a_stretch, []))
        settled.setdefault(group, {})[(p.target_topic, p.partition)] = position
    return settled
