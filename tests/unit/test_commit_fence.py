"""The stale-membership fence of source offset commits (beyond Java), and the member state it reads.

The fence alone with a fake member; the real ``ConnectGroupMember`` with a manual clock and scripted
Heartbeat answers (no Kafka: the member's requests go to a stub), for ``in_session`` and ``lapses``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyconnect.herder.commit_fence import OffsetCommitFence
from pyconnect.kafka.group_member import (
    ILLEGAL_GENERATION,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID_ERROR,
    ConnectGroupMember,
    MemberState,
)
from pyconnect.protocol.task_id import ConnectorTaskId

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
