"""ConnectGroupMember against a real broker: one Connect group, its leader, heartbeats, leave, eviction.

Members use a 6 s session timeout (the broker's ``group.min.session.timeout.ms`` default) and a 1 s
heartbeat so that eviction is observable within a test. The Java tests put a real Java Connect worker
in the same group as our member, once with the Java worker leading and once with ours leading.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from pyconnect.herder.worker_coordinator import RebalanceOutcome, WorkerCoordinator
from pyconnect.kafka.group_member import ConnectGroupMember, JoinResult, MemberState, describe_group
from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.connect_assignment import NO_ERROR, decode_assignment
from pyconnect.protocol.connect_metadata import (
    ConnectProtocolCompatibility,
    WorkerState,
    decode_metadata,
    join_group_protocols,
)
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaConnectWorker
from tests.golden.capture import heartbeat_connector_config

pytestmark = pytest.mark.kafka
log = logging.getLogger(__name__)

SESSION_MS = 6000
HEARTBEAT_MS = 1000
REBALANCE_MS = 20000
JOIN_DEADLINE_S = 45.0


def member(cluster: ClusterHandle, group: str, name: str, **overrides: int) -> ConnectGroupMember:
    settings: dict[str, Any] = {
        "session_timeout_ms": SESSION_MS,
        "heartbeat_interval_ms": HEARTBEAT_MS,
        "rebalance_timeout_ms": REBALANCE_MS,
        **overrides,
    }
    return ConnectGroupMember(
        {"bootstrap.servers": cluster.bootstrap_servers}, group, client_id=f"connect-{name}", **settings
    )


def protocols(name: str, offset: int = -1) -> list[tuple[str, bytes]]:
    state = WorkerState(f"http://{name}.example:8083/", offset)
    return join_group_protocols(state, ConnectProtocolCompatibility.SESSIONED)


class Leader:
    """An ``assign`` callback that records what it was given and answers per-member bytes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[tuple[str, bytes]]]] = []

    async def __call__(self, protocol: str, members: Sequence[tuple[str, bytes]]) -> Mapping[str, bytes]:
        self.calls.append((protocol, list(members)))
        return {member_id: f"assignment-for:{member_id}".encode() for member_id, _ in members}


@contextlib.asynccontextmanager
async def members(
    cluster: ClusterHandle, group: str, names: Sequence[str]
) -> AsyncIterator[list[ConnectGroupMember]]:
    started = [member(cluster, group, n) for n in names]
    try:
        for m in started:
            await m.start()
        yield started
    finally:
        for m in started:
            await m.stop(leave=True)


async def join_all(
    group_members: Sequence[ConnectGroupMember], names: Sequence[str], leaders: Sequence[Leader]
) -> list[JoinResult]:
    """Join all members and rejoin each one its heartbeat flags (as a herder would) until they agree.

    Members that join a moment apart may complete different rounds (the first one alone); the broker
    then asks the earlier ones to rejoin while the later ones wait. Done when every member's last
    round has the same generation and none is asked to rejoin; bounded by ``JOIN_DEADLINE_S``.
    """
    latest: dict[int, JoinResult] = {}

    async def run(i: int) -> None:
        latest[i] = await group_members[i].join(protocols(names[i]), leaders[i])

    tasks = {i: asyncio.create_task(run(i)) for i in range(len(group_members))}
    try:
        for _ in range(int(JOIN_DEADLINE_S / 0.1)):
            await asyncio.sleep(0.1)
            for i, task in list(tasks.items()):
                if task.done():
                    task.result()
                    if group_members[i].rejoin_needed.is_set():
                        tasks[i] = asyncio.create_task(run(i))
            settled = all(t.done() for t in tasks.values()) and len(latest) == len(group_members)
            if settled and len({r.generation for r in latest.values()}) == 1:
                return [latest[i] for i in range(len(group_members))]
        raise TimeoutError(f"members did not settle on one generation: {latest}")
    finally:
        for task in tasks.values():
            task.cancel()
        await asyncio.wait(tasks.values())


def leader_call(
    results: Sequence[JoinResult], leaders: Sequence[Leader]
) -> tuple[str, list[tuple[str, bytes]]]:
    """The protocol and members the round's leader was given in its last ``assign`` call."""
    (leader,) = [a for r, a in zip(results, leaders, strict=True) if r.is_leader]
    return leader.calls[-1]


def assert_one_round(results: Sequence[JoinResult], group_members: Sequence[ConnectGroupMember]) -> None:
    assert len({r.generation for r in results}) == 1, [r.generation for r in results]
    assert len({r.leader_id for r in results}) == 1
    assert sum(r.is_leader for r in results) == 1
    assert {r.protocol for r in results} == {"sessioned"}
    for r, m in zip(results, group_members, strict=True):
        assert r.member_id == m.member_id and r.generation == m.generation
        assert m.state is MemberState.STABLE and m.leader == r.is_leader
        assert r.assignment == f"assignment-for:{r.member_id}".encode()


async def wait_rejoin(group_members: Sequence[ConnectGroupMember], limit_s: float) -> float:
    start = time.monotonic()
    async with asyncio.timeout(limit_s):
        await asyncio.gather(*(m.rejoin_needed.wait() for m in group_members))
    return time.monotonic() - start


async def test_three_members_one_leader_and_intact_metadata(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    group = unique("connect")
    names = ["w1", "w2", "w3"]
    async with members(cluster_a, group, names) as ms:
        leaders = [Leader() for _ in ms]
        start = time.monotonic()
        results = await join_all(ms, names, leaders)
        log.info("three members joined in %.2fs", time.monotonic() - start)
        assert_one_round(results, ms)

        assert not any(a.calls for r, a in zip(results, leaders, strict=True) if not r.is_leader)
        protocol, metadata = leader_call(results, leaders)
        assert protocol == "sessioned"
        sent = {m.member_id: dict(protocols(n))["sessioned"] for m, n in zip(ms, names, strict=True)}
        assert dict(metadata) == sent
        assert sorted(decode_metadata(md).url for _, md in metadata) == [
            f"http://{n}.example:8083/" for n in names
        ]

        described = await describe_group({"bootstrap.servers": cluster_a.bootstrap_servers}, group)
        assert described["error_code"] == NO_ERROR
        assert (described["protocol_type"], described["protocol"], described["state"]) == (
            "connect",
            "sessioned",
            "Stable",
        )
        assert {d["member_id"]: d["metadata"] for d in described["members"]} == sent
        assert {d["member_id"]: d["assignment"] for d in described["members"]} == {
            r.member_id: r.assignment for r in results
        }
        assert {d["client_id"] for d in described["members"]} == {"connect-w1", "connect-w2", "connect-w3"}

        # The group stays stable over several heartbeat intervals.
        await asyncio.sleep(3 * HEARTBEAT_MS / 1000)
        assert not any(m.rejoin_needed.is_set() for m in ms)


async def test_new_member_triggers_rejoin_and_leave_triggers_rebalance(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    group = unique("connect")
    names = ["w1", "w2", "w3", "w4"]
    async with members(cluster_a, group, names) as ms:
        first = await join_all(ms[:3], names[:3], [Leader() for _ in range(3)])
        leader_id = first[0].leader_id

        joining = asyncio.create_task(ms[3].join(protocols("w4"), Leader()))
        waited = await wait_rejoin(ms[:3], limit_s=3 * HEARTBEAT_MS / 1000 + 10)
        log.info("heartbeats flagged the rebalance after %.2fs", waited)
        assert all(m.rejoin_reason == "group is already rebalancing" for m in ms[:3])
        leaders = [Leader() for _ in range(3)]
        second = await join_all(ms[:3], names[:3], leaders)
        second.append(await asyncio.wait_for(joining, JOIN_DEADLINE_S))
        assert {r.generation for r in second} == {first[0].generation + 1}
        assert {r.leader_id for r in second} == {leader_id}, "the existing leader keeps leading"
        assert len(leader_call(second[:3], leaders)[1]) == 4

        leaving = ms[1]
        await leaving.stop(leave=True)
        assert leaving.member_id == "" and leaving.state is MemberState.UNJOINED
        waited = await wait_rejoin([ms[0], ms[2], ms[3]], limit_s=SESSION_MS / 1000)
        log.info("LeaveGroup made the others rejoin after %.2fs", waited)
        rest = [ms[0], ms[2], ms[3]]
        leaders = [Leader() for _ in rest]
        third = await join_all(rest, ["w1", "w3", "w4"], leaders)
        assert {r.generation for r in third} == {first[0].generation + 2}
        members_seen = leader_call(third, leaders)[1]
        assert {m for m, _ in members_seen} == {m.member_id for m in rest}


@pytest.mark.long  # session-timeout paths; the fleets of make test lose and regain members by kill -9
async def test_dead_member_is_evicted_after_the_session_timeout(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    group = unique("connect")
    names = ["w1", "w2", "w3"]
    async with members(cluster_a, group, names) as ms:
        first = await join_all(ms, names, [Leader() for _ in ms])
        dead = next(m for m, r in zip(ms, first, strict=True) if not r.is_leader)
        survivors = [m for m in ms if m is not dead]
        dead_id = dead.member_id

        died = time.monotonic()
        await dead.stop(leave=False)  # heartbeats stop, no LeaveGroup: the broker must time it out
        waited = await wait_rejoin(survivors, limit_s=SESSION_MS / 1000 + 20)
        log.info(
            "dead member evicted after %.2fs (session timeout %d ms)", time.monotonic() - died, SESSION_MS
        )
        assert waited >= SESSION_MS / 1000 - 2 * HEARTBEAT_MS / 1000, "no eviction before the session timeout"

        leaders = [Leader() for _ in survivors]
        second = await join_all(
            survivors, [n for m, n in zip(ms, names, strict=True) if m is not dead], leaders
        )
        assert {r.generation for r in second} == {first[0].generation + 1}
        members_seen = {m for m, _ in leader_call(second, leaders)[1]}
        assert members_seen == {m.member_id for m in survivors} and dead_id not in members_seen

        described = await describe_group({"bootstrap.servers": cluster_a.bootstrap_servers}, group)
        assert {d["member_id"] for d in described["members"]} == members_seen


@pytest.mark.long  # session-timeout paths; the fleets of make test lose and regain members by kill -9
async def test_rejoining_with_a_forgotten_member_id_is_answered_unknown_member_and_recovers(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    group = unique("connect")
    async with members(cluster_a, group, ["w1", "w2"]) as ms:
        first = await join_all(ms, ["w1", "w2"], [Leader(), Leader()])
        ghost = ms[1]
        stale_id = ghost.member_id
        await ms[1]._stop_heartbeat()
        await wait_rejoin([ms[0]], limit_s=SESSION_MS / 1000 + 20)  # evicted by the broker
        second = await join_all([ms[0]], ["w1"], [Leader()])
        assert second[0].generation == first[0].generation + 1
        # The evicted member still believes in its old id: JoinGroup must reset it and get a new one.
        assert ghost.member_id == stale_id
        rejoining = asyncio.create_task(ghost.join(protocols("w2"), Leader()))
        await wait_rejoin([ms[0]], limit_s=3 * HEARTBEAT_MS / 1000 + 10)
        third = await join_all([ms[0]], ["w1"], [Leader()])
        third.append(await asyncio.wait_for(rejoining, JOIN_DEADLINE_S))
        assert ghost.member_id not in ("", stale_id) and third[1].member_id == ghost.member_id
        assert {r.generation for r in third} == {second[0].generation + 1}


@pytest.mark.long  # session-timeout paths; the fleets of make test lose and regain members by kill -9
async def test_member_that_cannot_heartbeat_for_the_session_timeout_leaves_by_itself(
    cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """The broker freezes (SIGSTOP of the broker process this test session started, on cluster B).

    Like Java's heartbeat thread, the member gives up on its membership once no heartbeat succeeded
    for ``session.timeout.ms``: it forgets member id and generation and asks to rejoin.
    """
    pid = cluster_b.require_local().nodes[0].pid
    assert pid is not None
    group = unique("connect")
    async with members(cluster_b, group, ["w1"]) as (m,):
        await join_all([m], ["w1"], [Leader()])
        old_id = m.member_id
        os.kill(pid, signal.SIGSTOP)
        try:
            waited = await wait_rejoin([m], limit_s=SESSION_MS / 1000 + 20)
            log.info("member left by itself %.2fs after the broker froze", waited)
            assert "session timed out" in m.rejoin_reason
            assert (m.member_id, m.generation, m.state) == ("", -1, MemberState.UNJOINED)
            assert m.coordinator is None
            assert waited >= SESSION_MS / 1000 - HEARTBEAT_MS / 1000
        finally:
            os.kill(pid, signal.SIGCONT)
        (again,) = await join_all([m], ["w1"], [Leader()])
        assert again.member_id not in ("", old_id) and again.is_leader


# -- with a Java Connect worker ---------------------------------------------------------------------


def java_worker(cluster: ClusterHandle, tmp_path: Path, group: str) -> JavaConnectWorker:
    return JavaConnectWorker(
        cluster.bootstrap_servers,
        tmp_path / "java-worker",
        group_id=group,
        extra={"session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": HEARTBEAT_MS},
        die_with_parent=True,
    )


@contextlib.asynccontextmanager
async def running_coordinator(
    cluster: ClusterHandle, group: str, outcomes: list[RebalanceOutcome]
) -> AsyncIterator[tuple[ConnectGroupMember, WorkerCoordinator]]:
    """Our member under a WorkerCoordinator, rejoining whenever asked (a minimal herder loop)."""
    m = member(cluster, group, "py")
    coordinator = WorkerCoordinator(
        m, mode="sessioned", rest_url="http://127.0.0.1:1/", config_snapshot=lambda: ConfigSnapshot(-1, {})
    )

    async def loop() -> None:
        for _ in range(50):
            outcomes.append(await coordinator.rebalance())
            await m.rejoin_needed.wait()

    await m.start()
    task = asyncio.create_task(loop())
    try:
        yield m, coordinator
    finally:
        task.cancel()
        await asyncio.wait([task])
        await m.stop(leave=True)


async def wait_for(predicate: Callable[[], bool], limit_s: float, what: str) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.2)


@pytest.mark.java
async def test_our_member_receives_a_valid_assignment_from_a_java_leader(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group = unique("connect")
    java = java_worker(cluster_a, tmp_path, group)
    try:
        java.start()
        await asyncio.to_thread(java.wait_ready, 120)
        outcomes: list[RebalanceOutcome] = []
        async with running_coordinator(cluster_a, group, outcomes) as (ours, _):
            await wait_for(lambda: bool(outcomes), JOIN_DEADLINE_S, "our member never completed a round")
            outcome = outcomes[-1]
            assert not outcome.is_leader and outcome.leader_url == java.rest_url
            assert outcome.protocol is ConnectProtocolCompatibility.SESSIONED
            assert outcome.assignment.error == NO_ERROR and outcome.assignment.version == 2
            assert outcome.assignment.leader == outcome.leader_id != ours.member_id

            described = await describe_group({"bootstrap.servers": cluster_a.bootstrap_servers}, group)
            assert (described["protocol_type"], described["protocol"]) == ("connect", "sessioned")
            by_id = {d["member_id"]: d for d in described["members"]}
            assert set(by_id) == {ours.member_id, outcome.leader_id}
            assert decode_metadata(by_id[outcome.leader_id]["metadata"]).url == java.rest_url
            assert decode_metadata(by_id[ours.member_id]["metadata"]).url == "http://127.0.0.1:1/"
            status, _ = await asyncio.to_thread(java.rest, "GET", "/connectors")
            assert status == 200
    finally:
        await asyncio.to_thread(java.stop)


@pytest.mark.java
async def test_a_java_worker_accepts_the_assignment_of_our_leader(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group = unique("connect")
    java = java_worker(cluster_a, tmp_path, group)
    outcomes: list[RebalanceOutcome] = []
    async with running_coordinator(cluster_a, group, outcomes) as (ours, _):
        await wait_for(lambda: bool(outcomes), JOIN_DEADLINE_S, "our member never completed a round")
        assert outcomes[-1].is_leader
        try:
            java.start()
            await asyncio.to_thread(
                java.wait_ready, 120
            )  # GET / and /health: the Java herder completed a tick
            await wait_for(
                lambda: len(outcomes) >= 2 and outcomes[-1].generation > outcomes[0].generation,
                JOIN_DEADLINE_S,
                "no round with the Java worker",
            )
            described = await describe_group({"bootstrap.servers": cluster_a.bootstrap_servers}, group)
            assert (described["protocol_type"], described["protocol"], described["state"]) == (
                "connect", "sessioned", "Stable",
            )  # fmt: skip
            by_id = {d["member_id"]: d for d in described["members"]}
            assert len(by_id) == 2 and ours.member_id in by_id
            java_id = next(i for i in by_id if i != ours.member_id)
            given = decode_assignment(by_id[java_id]["assignment"])
            assert (given.error, given.leader, given.leader_url, given.version) == (
                NO_ERROR, ours.member_id, "http://127.0.0.1:1/", 2,
            )  # fmt: skip
            assert decode_metadata(by_id[java_id]["metadata"]).url == java.rest_url
            status, body = await asyncio.to_thread(java.rest, "GET", "/connectors")
            assert (status, body) == (200, [])
        finally:
            await asyncio.to_thread(java.stop)


def heartbeat_connector(name: str, bootstrap: str) -> dict[str, object]:
    return {"name": name, "config": heartbeat_connector_config(bootstrap)}


def running(java: JavaConnectWorker, name: str) -> bool:
    status, body = java.rest("GET", f"/connectors/{name}/status", timeout=10)
    return (
        status == 200
        and body["connector"]["state"] == "RUNNING"
        and [t["state"] for t in body["tasks"]] == ["RUNNING"]
    )


@pytest.mark.java
async def test_cooperative_rounds_with_a_java_leader_move_work_to_our_member(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """Java leads two connectors; our member joins: revocation round, then it is given half the work.

    A later rejoin re-advertises our merged holding; the Java leader must read it back as held (no
    lost work, no delay, nothing moved) - so the nested allocation bytes we send are right.
    """
    group = unique("connect")
    java = java_worker(cluster_a, tmp_path, group)
    try:
        java.start()
        await asyncio.to_thread(java.wait_ready, 120)
        for name in ("hb-1", "hb-2"):
            status, body = await asyncio.to_thread(
                java.rest, "POST", "/connectors", heartbeat_connector(name, cluster_a.bootstrap_servers)
            )
            assert status == 201, body
        for name in ("hb-1", "hb-2"):
            await wait_for(partial(running, java, name), 90, f"{name} not running on the Java worker")

        outcomes: list[RebalanceOutcome] = []
        async with running_coordinator(cluster_a, group, outcomes) as (ours, coordinator):

            def holds_half() -> bool:
                held = coordinator.holding
                return held is not None and len(held.connectors) == 1 and len(held.tasks) == 1

            await wait_for(holds_half, JOIN_DEADLINE_S, f"our member never got half the work: {outcomes}")
            assert not any(o.is_leader for o in outcomes)
            assert all(o.assignment.error == NO_ERROR and o.config_offset >= 0 for o in outcomes)
            held = coordinator.holding
            assert held is not None
            gained = [o for o in outcomes if o.assignment.connectors or o.assignment.tasks]
            assert len(gained) == 1 and gained[0].generation > outcomes[0].generation, (
                "work moves in a later round than the one that revoked it from the Java worker"
            )

            before = len(outcomes)
            coordinator.request_rejoin("test: re-advertise the holding")
            await wait_for(lambda: len(outcomes) > before, JOIN_DEADLINE_S, "forced rejoin did not complete")
            again = outcomes[-1]
            assert (again.assignment.connectors, again.assignment.tasks) == ((), ())
            assert not again.revoked and again.delay == 0
            assert again.holding.connectors == held.connectors and again.holding.tasks == held.tasks

            described = await describe_group({"bootstrap.servers": cluster_a.bootstrap_servers}, group)
            mine = next(d for d in described["members"] if d["member_id"] == ours.member_id)
            advertised = decode_metadata(mine["metadata"]).assignment
            assert (advertised.connectors, advertised.tasks) == (held.connectors, held.tasks)
    finally:
        await asyncio.to_thread(java.stop)
