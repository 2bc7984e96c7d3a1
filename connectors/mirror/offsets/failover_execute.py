"""``pyconnect failover execute``: commit the planned offsets of each group on the target, as a state machine.

Contract (:func:`execute`):

1. Every group still to do (not ``verified`` in the state) is described on the target first. If any has
   members there, :class:`~connectors.mirror.offsets.failover_calls.FailoverRefused` names each such group
   with its state and members (``client-id@host (member id)``) and nothing is committed.
2. The groups' targets are recorded (``planned``) and, with a state file, written before any commit.
3. Group by group: an admin commit (no member id) of the offsets to move; the coordinator rejects it when
   members joined meanwhile (a refusal naming the group; groups before it stay done in the state). Then
   the group's committed offsets are read back: equal to the targets makes it ``verified``; anything else
   is a :class:`~connectors.mirror.offsets.failover_calls.FailoverError`. The state file is written after
   each group.

Share groups (``protocol == "share"`` in the plan) are described with ShareGroupDescribe and moved by
:func:`connectors.mirror.offsets.failover_share.move_share_group` (start offsets, AlterShareGroupOffsets).

Idempotent: a group whose offsets already equal its targets is committed nothing and still verified.
Resumable: with the state file of an interrupted run, the groups it holds are committed with its offsets.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from connectors.mirror.offsets.failover_calls import (
    FailoverError,
    FailoverRefused,
    bounded,
    close_quietly,
    commit_offsets,
    described,
    one_line,
    retrying,
)
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_plan import FlowPlan
from connectors.mirror.offsets.failover_share import move_share_group
from connectors.mirror.offsets.failover_state import FailoverState, partition_key
from pyconnect.config.client_configs import mirror_client_config
from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.kafka.group_offsets import SyncAdmin
from pyconnect.kafka.group_view import ACTIVE_GROUP_REJECTIONS, GroupView

__all__ = ["GroupOutcome", "execute", "move_group", "refusal"]


@dataclass(frozen=True)
class GroupOutcome:
    """What executing did for one group: offsets committed now, offsets already in place, its status."""

    group: str
    committed: int
    unchanged: int
    status: str
    resumed: bool


def refusal(views: dict[str, GroupView], cluster: str) -> str:
    """The one-line refusal naming every active group, its state and its members."""
    parts = []
    for group, view in views.items():
        members = f": {', '.join(view.holders)}" if view.holders else ""
        parts.append(f"group {group} is {view.describe()} on cluster {cluster}{members}")
    return f"refusing to commit: {'; '.join(parts)}; stop its consumers there and run again (nothing was committed)"


async def _commit_group(
    admin: GroupAdmin,
    flow: FailoverFlow,
    group: str,
    to_commit: dict[tuple[str, int], CommittedOffset],
    timeout_s: float,
) -> None:
    if not to_commit:
        return
    errors = await retrying(
        functools.partial(commit_offsets, admin, group, to_commit), timeout_s, flow.target
    )
    if not errors:
        return
    codes = sorted(set(errors.values()))
    names = ", ".join(ACTIVE_GROUP_REJECTIONS.get(c, f"error code {c}") for c in codes)
    if any(c in ACTIVE_GROUP_REJECTIONS for c in codes):
        raise FailoverRefused(
            f"refusing to commit: the coordinator rejected the commit of group {group} on cluster {flow.target} "
            f"({names}): members joined; stop them and run again"
        )
    raise FailoverError(
        f"committing {len(errors)} offsets of group {group} on cluster {flow.target} failed ({names})"
    )


async def move_group(
    admin: GroupAdmin,
    flow: FailoverFlow,
    group: str,
    state: FailoverState,
    timeout_s: float,
    *,
    resumed: bool,
) -> GroupOutcome:
    """Commit one group's planned offsets (``state``) that differ on ``flow.target``, read them back, and
    advance its status (also the last step of a failback, along the reverse flow)."""
    progress = state.groups[group]
    wanted = progress.offsets()
    current = await retrying(functools.partial(admin.committed_offsets, group), timeout_s, flow.target)
    to_commit = {
        tp: CommittedOffset(offset, progress.metadata.get(partition_key(*tp), ""))
        for tp, offset in wanted.items()
        if current.get(tp) is None or current[tp].offset != offset
    }
    await _commit_group(admin, flow, group, to_commit, timeout_s)
    state.advance(group, "committed")
    current = await retrying(functools.partial(admin.committed_offsets, group), timeout_s, flow.target)
    for (topic, partition), offset in wanted.items():
        found = current.get((topic, partition))
        if found is None or found.offset < offset:
            raise FailoverError(
                f"group {group} on cluster {flow.target} holds {None if found is None else found.offset} for "
                f"{topic}-{partition} after the commit of {offset}: run again to retry"
            )
    state.advance(group, "verified")
    return GroupOutcome(group, len(to_commit), len(wanted) - len(to_commit), "verified", resumed)


async def _views(
    admin: SyncAdmin, flow: FailoverFlow, groups: list[str], shares: list[str], timeout_s: float
) -> dict[str, GroupView]:
    """The target's views of the consumer groups ``groups`` and the share groups ``shares``."""
    views = (
        await retrying(functools.partial(described, admin, groups), timeout_s, flow.target) if groups else {}
    )
    if shares:
        views.update(await retrying(functools.partial(admin.describe_share, shares), timeout_s, flow.target))
    return views


async def execute(
    flow: FailoverFlow,
    plan: FlowPlan,
    state: FailoverState,
    timeout_s: float,
    save: Callable[[FailoverState], None] | None = None,
) -> list[GroupOutcome]:
    """Run the state machine over the plan's groups (see the module contract); ``save`` persists the state."""
    resumed = {g for g in state.groups}
    for group_plan in plan.groups:
        state.plan(
            group_plan.group,
            group_plan.targets,
            {(p.target_topic, p.partition): p.metadata for p in group_plan.partitions},
        )
    todo = state.pending()
    shares = {g.group for g in plan.groups if g.protocol == "share"}
    admin = SyncAdmin(mirror_client_config(flow.target_config, "admin"), flow.target)
    try:
        await bounded(admin.start(), timeout_s, flow.target)
        if todo:
            views = await _views(
                admin, flow, [g for g in todo if g not in shares], [g for g in todo if g in shares], timeout_s
            )
            busy = {g: v for g, v in views.items() if not v.idle}
            if busy:
                raise FailoverRefused(refusal(busy, flow.target))
        if save is not None:
            save(state)
        outcomes = []
        for group, progress in state.groups.items():
            if group not in todo:
                outcomes.append(GroupOutcome(group, 0, len(progress.targets), "verified", True))
                continue
            if group in shares:
                done, kept = await move_share_group(admin, flow, group, state, timeout_s)
                outcomes.append(GroupOutcome(group, done, kept, "verified", group in resumed))
            else:
                outcomes.append(
                    await move_group(admin, flow, group, state, timeout_s, resumed=group in resumed)
                )
            if save is not None:
                save(state)
        return outcomes
    except FailoverError:
        raise
    except Exception as exc:
        raise FailoverError(f"committing on cluster {flow.target} failed: {one_line(exc)}") from None
    finally:
        await close_quietly(admin)
