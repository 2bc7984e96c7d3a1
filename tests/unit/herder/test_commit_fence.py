"""The stale-membership fence of source offset commits (beyond Java), and the member state it reads.

The fence alone with a fake member; the real ``ConnectGroupMember`` with a manual clock and scripted
Heartbeat answers (no Kafka: the member's requests go to a stub), for ``in_session`` and ``lapses``; and
``GroupMembership`` over the real ``WorkerCoordinator`` in an in-memory group, for a zombie's rounds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyconnect.herder.commit_fence import OffsetCommitFence
from pyconnect.herder.membership import GroupMembership
from pyconnect.herder.worker_coordinator import WorkerCoordinator
from pyconnect.kafka.group_member import (
    ILLEGAL_GENERATION,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID_ERROR,
    ConnectGroupMember,
    MemberState,
)
from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.task_id import ConnectorTaskId
from tests.unit.herder.test_worker_coordinator import FakeGroup, FakeMember, ManualClock

T0, T1 = ConnectorTaskId("mirror", 0), ConnectorTaskId("mirror", 1)


@dataclass
class Standing:
    in_session: bool = True
    lapses: int = 0

    def lapse(self) -> None:
        self.lapses += 1
        self.in_session = False


def joined(standing: Standing, *held: ConnectorTaskId) -> OffsetCommitFence:
    fence = OffsetCommitFence(standing)
    fence.round_starting()
    fence.round_completed(held)
    return fence


def test_a_current_member_commits_the_tasks_it_holds_only() -> None:
    fence = joined(Standing(), T0)
    assert (fence.fenced, fence.may_commit(T0), fence.may_commit(T1)) == (False, True, False)


def test_a_member_out_of_session_commits_nothing_until_it_hears_the_coordinator_again() -> None:
    standing = Standing()
    fence = joined(standing, T0)
    standing.in_session = False  # paused past the session timeout; the heartbeat loop has not run yet
    assert fence.fenced and not fence.may_commit(T0)
    standing.in_session = True  # a heartbeat sent after the pause succeeded: no lapse happened
    assert fence.may_commit(T0)


def test_after_a_lapse_only_a_round_started_after_it_clears_the_fence() -> None:
    standing = Standing()
    fence = joined(standing, T0, T1)
    standing.lapse()
    standing.in_session = True  # rejoining: JoinGroup gave it a new generation, SyncGroup pending
    assert fence.fenced and not fence.may_commit(T0)
    fence.round_starting()
    # the round revokes T0 (another worker runs it now): its stop must not commit
    assert not fence.may_commit(T0)
    fence.round_completed([T1])
    assert (fence.fenced, fence.may_commit(T0), fence.may_commit(T1)) == (False, False, True)


def test_a_lapse_during_a_round_needs_one_more_round() -> None:
    standing = Standing()
    fence = joined(standing, T0)
    fence.round_starting()
    standing.lapse()
    standing.in_session = True
    fence.round_completed([T0])
    assert fence.fenced and not fence.may_commit(T0)
    fence.round_starting()
    fence.round_completed([T0])
    assert fence.may_commit(T0)


def test_a_round_that_failed_keeps_the_fence() -> None:
    standing = Standing()
    fence = joined(standing, T0)
    standing.lapse()
    standing.in_session = True
    fence.round_starting()  # the join raised: round_completed never came
    assert not fence.may_commit(T0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Answer:
    error_code: int


def member_in_generation(clock: Clock) -> ConnectGroupMember:
    member = ConnectGroupMember(
        {"bootstrap.servers": "127.0.0.1:9"},
        "connect-cluster",
        session_timeout_ms=10_000,
        heartbeat_interval_ms=3_000,
        clock=clock,
    )
    member._generation, member._member_id, member._coordinator = 7, "m-1", 1
    member._state = MemberState.STABLE
    member._last_heartbeat_ok = clock()
    return member


def answer_after(member: ConnectGroupMember, clock: Clock, code: int, delay_s: float) -> None:
    """Heartbeats reach the broker at once; the answer is read ``delay_s`` later (a paused process)."""

    async def send(node: int, request: Any, *, timeout_s: float | None) -> Answer:
        clock.now += delay_s
        return Answer(code)

    member._send = send  # type: ignore[method-assign]


async def test_member_in_session_follows_the_clock_and_counts_heartbeats_from_their_send() -> None:
    clock = Clock()
    member = member_in_generation(clock)
    assert member.in_session and member.lapses == 0
    clock.now += 10.5  # paused past session.timeout.ms: out at once, before any heartbeat
    assert not member.in_session
    clock.now -= 10.5
    clock.now += 9.0
    answer_after(member, clock, NONE, delay_s=30.0)  # sent at 9 s, answered after a 30 s pause
    assert await member._heartbeat_once()
    assert not member.in_session, "an answer read after a pause proves only the send time"
    answer_after(member, clock, REBALANCE_IN_PROGRESS, delay_s=0.1)
    assert await member._heartbeat_once() and member.in_session and member.lapses == 0


async def test_member_lapses_when_fenced_or_timed_out_and_is_in_session_while_rejoining() -> None:
    clock = Clock()
    for code in (UNKNOWN_MEMBER_ID_ERROR, ILLEGAL_GENERATION):
        member = member_in_generation(clock)
        answer_after(member, clock, code, delay_s=0.1)
        assert not await member._heartbeat_once()
        assert (member.lapses, member.in_session, member.rejoin_needed.is_set()) == (1, False, True)
        member._generation, member._state = (
            8,
            MemberState.REBALANCING,
        )  # JoinGroup answered, SyncGroup pending
        assert member.in_session and member.lapses == 1
    member = member_in_generation(clock)
    clock.now += 11.0
    await member._heartbeats()  # the loop notices the expired session and leaves
    assert (member.lapses, member.in_session, member.generation) == (1, False, -1)


# -- the fence in a group: GroupMembership over WorkerCoordinator and an in-memory group --------------


@dataclass
class LapsingMember(FakeMember):
    """A fake group member with the standing the fence reads."""

    in_session: bool = True
    lapses: int = 0


@dataclass
class FencedWorker:
    member: LapsingMember
    membership: GroupMembership
    permits_at_revocation: dict[ConnectorTaskId, bool]

    def held(self) -> set[ConnectorTaskId]:
        holding = self.membership.coordinator.holding
        return set() if holding is None else set(holding.tasks)


def fenced_worker(
    group: FakeGroup, member_id: str, snapshot: ConfigSnapshot, clock: ManualClock
) -> FencedWorker:
    member = LapsingMember(group, member_id)
    permits: dict[ConnectorTaskId, bool] = {}
    box: list[GroupMembership] = []

    async def on_revoked(
        leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
    ) -> None:
        for task in tasks:  # what a revoked task's final offset commit would be told
            permits[task] = box[0].may_commit(task)

    coordinator = WorkerCoordinator(
        member,
        mode="sessioned",
        rest_url=f"http://{member_id}:8083/",
        config_snapshot=lambda: snapshot,
        max_delay_ms=0,
        clock=clock,
        on_revoked=on_revoked,
    )
    box.append(GroupMembership(member, coordinator))
    return FencedWorker(member, box[0], permits)


async def rounds(*workers: FencedWorker) -> None:
    """Rebalance until nobody needs to rejoin (at most three rounds)."""
    for _ in range(3):
        await asyncio.wait_for(asyncio.gather(*(w.membership.rebalance() for w in workers)), 5)
        if not any(w.membership.rejoin_needed() for w in workers):
            return


async def test_a_zombie_commits_none_of_the_tasks_it_lost_and_the_new_owner_commits_them() -> None:
    group, clock = FakeGroup(), ManualClock()
    snapshot = ConfigSnapshot(5, {"mirror": 2})
    w1, w2 = fenced_worker(group, "w1", snapshot, clock), fenced_worker(group, "w2", snapshot, clock)
    await rounds(w1, w2)
    lost = w2.held()
    assert lost and not lost & w1.held() and all(w2.membership.may_commit(t) for t in lost)

    w2.member.in_session, w2.member.lapses = False, 1  # frozen past the session timeout
    await group.remove(w2.member.member_id)  # the broker evicts it
    await rounds(w1)
    assert lost <= w1.held() and all(w1.membership.may_commit(t) for t in lost)
    assert not any(w2.membership.may_commit(t) for t in lost), "the zombie wakes fenced"

    w2.member.in_session = True  # it heard the coordinator again while rejoining
    assert not any(w2.membership.may_commit(t) for t in lost), "a lapse needs a completed round"
    await rounds(w1, w2)
    assert set(w2.permits_at_revocation) >= lost and not any(w2.permits_at_revocation[t] for t in lost)
    for task in w1.held() | w2.held():
        owner = w1 if task in w1.held() else w2
        assert owner.membership.may_commit(task), f"{task}: its owner after the rounds may commit"
    assert not (w1.held() & w2.held())
