"""The heartbeat loop of ``ConnectGroupMember`` keeps its checks on time when the client hangs.

A member cut off from its coordinator must say so after ``heartbeat.interval.ms`` (coordinator lost)
and leave the group after ``session.timeout.ms``, whatever its client does meanwhile: here a fake client
whose coordinator lookup and metadata refresh never answer (a connection that neither answers nor
closes), and one whose lookup leaks a cancellation nobody asked for.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pyconnect.kafka.group_member import ConnectGroupMember, MemberState

SESSION_MS, HEARTBEAT_MS = 600, 200


class HangingClient:
    """Every call waits forever (until cancelled); counts the lookups."""

    def __init__(self) -> None:
        self.lookups = 0

    async def coordinator_lookup(self, *args: Any) -> int:
        self.lookups += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def force_metadata_update(self) -> bool:
        await asyncio.Event().wait()
        return True


class LeakingClient(HangingClient):
    """The lookup raises CancelledError although nobody cancelled the caller."""

    async def coordinator_lookup(self, *args: Any) -> int:
        self.lookups += 1
        raise asyncio.CancelledError


def cut_off_member(client: Any) -> ConnectGroupMember:
    """A member in generation 7 whose coordinator just became unknown (the default 40 s request
    timeout stays: the loop must not wait on it)."""
    member = ConnectGroupMember(
        {"bootstrap.servers": "127.0.0.1:9"},
        "connect-cluster",
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=HEARTBEAT_MS,
        retry_backoff_ms=20,
    )
    member._client = client
    member._generation, member._member_id, member._state = 7, "m-1", MemberState.STABLE
    member._last_heartbeat_ok = time.monotonic()
    member._coordinator, member._coordinator_unknown_since = None, time.monotonic()
    return member


async def test_a_hanging_coordinator_lookup_delays_neither_coordinator_lost_nor_the_session_end() -> None:
    client = HangingClient()
    member = cut_off_member(client)
    started = time.monotonic()
    loop = asyncio.create_task(member._heartbeat_loop())
    while not member.coordinator_lost and time.monotonic() - started < 2:
        await asyncio.sleep(0.01)
    lost_after = time.monotonic() - started
    await asyncio.wait_for(loop, 3)  # the loop ends at the session's end, not after the request timeout
    ended_after = time.monotonic() - started
    assert member.coordinator_lost
    assert HEARTBEAT_MS / 1000 <= lost_after < HEARTBEAT_MS / 1000 + 0.5, lost_after
    assert SESSION_MS / 1000 <= ended_after < SESSION_MS / 1000 + 0.5, ended_after
    assert (member.generation, member.lapses, member.in_session) == (-1, 1, False)
    assert member.rejoin_needed.is_set() and "session timed out" in member.rejoin_reason
    assert client.lookups >= 2  # the stuck lookup was abandoned and tried again


async def test_a_cancellation_leaked_by_the_client_ends_the_heartbeats_loudly_and_asks_to_rejoin() -> None:
    member = cut_off_member(LeakingClient())
    await asyncio.wait_for(member._heartbeat_loop(), 3)  # returns: the leak is handled, not re-raised
    assert (member.generation, member.lapses) == (-1, 1)
    assert member.rejoin_needed.is_set() and "heartbeat failed unexpectedly" in member.rejoin_reason


async def test_cancelling_the_heartbeat_task_still_cancels_it() -> None:
    member = cut_off_member(HangingClient())
    loop = asyncio.create_task(member._heartbeat_loop())
    await asyncio.sleep(0.05)
    loop.cancel()
    await asyncio.wait([loop], timeout=3)
    assert loop.cancelled()
    assert member.generation == 7 and not member.rejoin_needed.is_set()
