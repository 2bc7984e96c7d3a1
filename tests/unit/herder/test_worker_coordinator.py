"""WorkerCoordinator over an in-memory classic group: Java's bytes, assignment rounds, protocol choice.

``FakeGroup`` plays the broker's classic group coordinator for N fake members: a round completes when
every known member has joined; the protocol is voted like the broker does (each member votes for its
most preferred protocol that all members support); the previous leader stays leader while present.
No sleeps: time is a manual clock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyconnect.herder.worker_coordinator import RebalanceOutcome, WorkerCoordinator
from pyconnect.kafka.group_member import GroupJoinError, JoinResult
from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.connect_assignment import CONFIG_MISMATCH, decode_assignment
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility, decode_metadata
from pyconnect.protocol.task_id import ConnectorTaskId

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "connect_group_protocol.json"

JOIN_SETTLE_STEPS = 10

Assign = Callable[[str, Sequence[tuple[str, bytes]]], Awaitable[Mapping[str, bytes]]]


class ManualClock:
    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance_ms(self, ms: int) -> None:
        self.now += ms / 1000


@dataclass
class Round:
    generation: int
    protocol: str
    leader: str
    protocols: dict[str, list[tuple[str, bytes]]]
    assignments: dict[str, bytes]


@dataclass
class _Pending:
    member: FakeMember
    protocols: list[tuple[str, bytes]]
    assign: Assign
    future: asyncio.Future[JoinResult]


class FakeGroup:
    """A classic group coordinator in memory (JoinGroup + SyncGroup rounds, no timeouts)."""

    def __init__(self) -> None:
        self.generation = 0
        self.leader: str | None = None
        self.members: list[str] = []
        self.rounds: list[Round] = []
        self._pending: dict[str, _Pending] = {}
        self._by_id: dict[str, FakeMember] = {}

    async def join(
        self, member: FakeMember, protocols: Sequence[tuple[str, bytes]], assign: Assign
    ) -> JoinResult:
        if member.member_id not in self.members:
            for other in self.members:
                self._by_id[other].rejoin_needed.set()
            self.members.append(member.member_id)
        self._by_id[member.member_id] = member
        future: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        self._pending[member.member_id] = _Pending(member, list(protocols), assign, future)
        for _ in range(JOIN_SETTLE_STEPS):  # let members joining in the same batch register (no real time)
            await asyncio.sleep(0)
        await self._maybe_complete()
        return await future

    async def remove(self, member_id: str) -> None:
        """LeaveGroup, or the broker evicting a member whose session expired."""
        self.members.remove(member_id)
        for other in self.members:
            self._by_id[other].rejoin_needed.set()
        await self._maybe_complete()

    async def _maybe_complete(self) -> None:
        if not self._pending or set(self.members) - set(self._pending):
            return
        pending, self._pending = self._pending, {}
        self.generation += 1
        joined = list(pending)
        protocol = select_protocol([pending[m].protocols for m in joined])
        if self.leader not in pending:
            self.leader = joined[0]
        for m in joined:
            pending[m].member.generation = self.generation
        metadata = [(m, dict(pending[m].protocols)[protocol]) for m in joined]
        assignments = dict(await pending[self.leader].assign(protocol, metadata))
        self.rounds.append(
            Round(
                self.generation, protocol, self.leader, {m: pending[m].protocols for m in joined}, assignments
            )
        )
        for m in joined:
            pending[m].member.rejoin_needed.clear()
            pending[m].future.set_result(
                JoinResult(self.generation, m, self.leader, protocol, m == self.leader, assignments[m])
            )


def select_protocol(offers: Sequence[Sequence[tuple[str, bytes]]]) -> str:
    """The classic coordinator's vote: common protocols, each member votes its first common one."""
    common = set.intersection(*({name for name, _ in offer} for offer in offers))
    if not common:
        raise AssertionError("INCONSISTENT_GROUP_PROTOCOL")
    votes = [next(name for name, _ in offer if name in common) for offer in offers]
    return max(dict.fromkeys(votes), key=votes.count)


@dataclass
class FakeMember:
    group: FakeGroup
    member_id: str
    generation: int = -1
    rejoin_needed: asyncio.Event = field(default_factory=asyncio.Event)
    reasons: list[str] = field(default_factory=list)

    fail_next: Exception | None = None

    async def join(self, protocols: Sequence[tuple[str, bytes]], assign: Assign) -> JoinResult:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        return await self.group.join(self, protocols, assign)

    def request_rejoin(self, reason: str = "requested") -> None:
        self.reasons.append(reason)
        self.rejoin_needed.set()


@dataclass
class Worker:
    """A fake member, its coordinator, a mutable config snapshot and the revocations it saw."""

    member: FakeMember
    coordinator: WorkerCoordinator
    snapshot: list[ConfigSnapshot]
    revocations: list[tuple[str | None, tuple[str, ...], tuple[ConnectorTaskId, ...]]]

    @property
    def id(self) -> str:
        return self.member.member_id

    def held(self) -> tuple[set[str], set[ConnectorTaskId]]:
        holding = self.coordinator.holding
        assert holding is not None
        return set(holding.connectors), set(holding.tasks)


def make_worker(
    group: FakeGroup,
    member_id: str,
    *,
    mode: str = "sessioned",
    url: str | None = None,
    snapshot: ConfigSnapshot | None = None,
    clock: ManualClock | None = None,
    max_delay_ms: int = 300000,
    source: Callable[[], ConfigSnapshot | tuple[int, ConfigSnapshot]] | None = None,
) -> Worker:
    member = FakeMember(group, member_id)
    box = [snapshot or ConfigSnapshot(-1, {})]
    revocations: list[tuple[str | None, tuple[str, ...], tuple[ConnectorTaskId, ...]]] = []

    async def on_revoked(
        leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
    ) -> None:
        revocations.append((leader, tuple(connectors), tuple(tasks)))

    coordinator = WorkerCoordinator(
        member,
        mode=mode,
        rest_url=url or f"http://{member_id}:8083/",
        config_snapshot=source or (lambda: box[0]),
        max_delay_ms=max_delay_ms,
        clock=clock or ManualClock(),
        on_revoked=on_revoked,
    )
    return Worker(member, coordinator, box, revocations)


async def rebalance(*workers: Worker) -> dict[str, RebalanceOutcome]:
    outcomes = await asyncio.wait_for(asyncio.gather(*(w.coordinator.rebalance() for w in workers)), 5)
    return {w.id: o for w, o in zip(workers, outcomes, strict=True)}


async def settle() -> None:
    for _ in range(JOIN_SETTLE_STEPS):
        await asyncio.sleep(0)


def set_config(workers: Sequence[Worker], snapshot: ConfigSnapshot) -> None:
    for w in workers:
        w.snapshot[0] = snapshot


def tasks(connector: str, n: int) -> set[ConnectorTaskId]:
    return {ConnectorTaskId(connector, i) for i in range(n)}


# -- Java's bytes -------------------------------------------------------------------------------------


def _golden(setting: str) -> tuple[dict, dict]:
    captures = [
        c for c in json.loads(GOLDEN.read_text())["captures"] if c["connect_protocol_setting"] == setting
    ]
    one, two = sorted(captures, key=lambda c: len(c["members"]))
    return one, two


@pytest.mark.parametrize("setting", ["sessioned", "compatible", "eager"])
async def test_metadata_and_assignments_are_java_identical_over_the_captured_rounds(setting: str) -> None:
    """Replays the captured Java scenario: a worker creates a connector, its task, then a worker joins.

    Every JoinGroup metadata and SyncGroup assignment our coordinators produce for the selected
    protocol must equal the bytes the Java workers had in the group at the captured points.
    """
    one, two = _golden(setting)
    first = one["members"][0]
    second = next(m for m in two["members"] if m["member_id"] != first["member_id"])
    url_of = {m["member_id"]: decode_metadata(bytes.fromhex(m["metadata_hex"])).url for m in two["members"]}
    captured = decode_metadata(bytes.fromhex(first["metadata_hex"]))
    name = decode_assignment(bytes.fromhex(first["assignment_hex"])).tasks[0].connector
    final_offset = captured.config_offset
    # The connector was assigned at the offset its nested holding records (V1/V2), before its task was
    # committed; V0 metadata carries no holding, any earlier offset replays the eager capture.
    created_offset = captured.assignment.config_offset if setting != "eager" else final_offset - 2

    group = FakeGroup()
    a = make_worker(
        group, first["member_id"], mode=setting, url=url_of[first["member_id"]],
        snapshot=ConfigSnapshot(created_offset, {name: 0}),
    )  # fmt: skip
    await rebalance(a)
    set_config([a], ConfigSnapshot(final_offset, {name: 1}))
    a.member.request_rejoin("task configs committed")
    await rebalance(a)
    selected = one["protocol"]
    assert group.rounds[-1].protocol == selected
    assert dict(group.rounds[-1].protocols[a.id])[selected].hex() == first["metadata_hex"]
    assert group.rounds[-1].assignments[a.id].hex() == first["assignment_hex"]

    b = make_worker(
        group, second["member_id"], mode=setting, url=url_of[second["member_id"]],
        snapshot=ConfigSnapshot(final_offset, {name: 1}),
    )  # fmt: skip
    outcomes = await rebalance(a, b)
    last = group.rounds[-1]
    assert last.protocol == two["protocol"] and last.leader == a.id
    for member in two["members"]:
        assert dict(last.protocols[member["member_id"]])[selected].hex() == member["metadata_hex"]
        assert last.assignments[member["member_id"]].hex() == member["assignment_hex"]
    assert outcomes[a.id].is_leader and not outcomes[b.id].is_leader
    assert outcomes[b.id].leader_url == url_of[a.id]


def test_offered_protocols_follow_connect_protocol_preference() -> None:
    group = FakeGroup()
    for setting, names in (
        ("sessioned", ["sessioned", "compatible", "default"]),
        ("compatible", ["compatible", "default"]),
        ("EAGER", ["default"]),
    ):
        w = make_worker(group, f"m-{setting}", mode=setting, snapshot=ConfigSnapshot(7, {}))
        offered = w.coordinator.metadata()
        assert [n for n, _ in offered] == names
        assert all(decode_metadata(md).config_offset == 7 for _, md in offered)
        assert [md[:2] for _, md in offered] == [
            ConnectProtocolCompatibility.from_protocol(n).version.to_bytes(2, "big") for n in names
        ]


# -- incremental cooperative rounds -------------------------------------------------------------------


async def test_new_member_costs_a_revocation_round_then_an_assignment_round() -> None:
    group = FakeGroup()
    config = ConfigSnapshot(10, {"c1": 2, "c2": 2})
    w1 = make_worker(group, "w1", snapshot=config)
    first = await rebalance(w1)
    assert first["w1"].is_leader and first["w1"].generation == 1
    assert w1.held() == ({"c1", "c2"}, tasks("c1", 2) | tasks("c2", 2))

    w2 = make_worker(group, "w2", snapshot=config)
    join = asyncio.create_task(rebalance(w2))
    await settle()
    assert w1.member.rejoin_needed.is_set(), "a joining member makes the coordinator ask others to rejoin"
    second = await rebalance(w1)
    second.update(await join)
    r1, r2 = second["w1"], second["w2"]
    assert r1.generation == r2.generation == 2
    assert r1.revoked and len(r1.assignment.revoked_connectors) == 1 and len(r1.assignment.revoked_tasks) == 2
    assert not r1.assignment.connectors and not r1.assignment.tasks
    assert not r2.assignment.connectors and not r2.assignment.tasks and r2.holding.connectors == ()
    assert w1.revocations == [("w1", r1.assignment.revoked_connectors, r1.assignment.revoked_tasks)]
    assert len(w1.held()[0]) == 1 and len(w1.held()[1]) == 2

    w1.member.request_rejoin("revoked in the previous round")
    third = await rebalance(w1, w2)
    assert third["w2"].assignment.connectors == r1.assignment.revoked_connectors
    assert set(third["w2"].assignment.tasks) == set(r1.assignment.revoked_tasks)
    assert not third["w1"].revoked and not third["w2"].revoked
    (c1, t1), (c2, t2) = w1.held(), w2.held()
    assert c1 | c2 == {"c1", "c2"} and not c1 & c2 and len(c1) == len(c2) == 1
    assert t1 | t2 == tasks("c1", 2) | tasks("c2", 2) and not t1 & t2 and len(t1) == len(t2) == 2
    owners = third["w1"].leader_state
    assert owners is not None and third["w2"].leader_state is None
    assert {owners.owner_url(c) for c in c2} == {"http://w2:8083/"}
    assert {owners.owner_url(t) for t in t1} == {"http://w1:8083/"}


async def _three_balanced_workers(max_delay_ms: int) -> tuple[FakeGroup, ManualClock, list[Worker]]:
    group, clock = FakeGroup(), ManualClock()
    config = ConfigSnapshot(5, {"a": 3, "b": 3, "c": 3})
    workers = [
        make_worker(group, f"w{i}", snapshot=config, clock=clock, max_delay_ms=max_delay_ms)
        for i in (1, 2, 3)
    ]
    await rebalance(*workers)
    for _ in range(3):
        if not any(w.member.rejoin_needed.is_set() for w in workers):
            break
        await rebalance(*workers)
    held = [w.held() for w in workers]
    assert all(len(c) == 1 and len(t) == 3 for c, t in held), held
    return group, clock, workers


async def test_departed_member_work_waits_for_the_scheduled_delay() -> None:
    group, clock, (w1, w2, w3) = await _three_balanced_workers(max_delay_ms=10000)
    lost_c, lost_t = w3.held()
    before = (w1.held(), w2.held())
    await group.remove(w3.id)

    outcomes = await rebalance(w1, w2)
    assert {o.delay for o in outcomes.values()} == {10000}
    assert all(not o.assignment.connectors and not o.assignment.tasks for o in outcomes.values())
    assert (w1.held(), w2.held()) == before

    clock.advance_ms(4000)
    outcomes = await rebalance(w1, w2)
    assert {o.delay for o in outcomes.values()} == {6000}, "the remaining delay is announced"
    assert (w1.held(), w2.held()) == before

    clock.advance_ms(6000)
    outcomes = await rebalance(w1, w2)
    assert {o.delay for o in outcomes.values()} == {0}
    gained_c = set(outcomes["w1"].assignment.connectors) | set(outcomes["w2"].assignment.connectors)
    gained_t = set(outcomes["w1"].assignment.tasks) | set(outcomes["w2"].assignment.tasks)
    assert gained_c == lost_c and gained_t == lost_t
    (c1, t1), (c2, t2) = w1.held(), w2.held()
    assert c1 | c2 == {"a", "b", "c"} and t1 | t2 == tasks("a", 3) | tasks("b", 3) | tasks("c", 3)
    assert not t1 & t2 and abs(len(t1) - len(t2)) <= 1


async def test_returning_member_gets_its_lost_work_back_after_the_delay() -> None:
    group, clock, (w1, w2, w3) = await _three_balanced_workers(max_delay_ms=10000)
    lost_c, lost_t = w3.held()
    await group.remove(w3.id)
    await rebalance(w1, w2)
    back = make_worker(group, "w3-restarted", snapshot=w1.snapshot[0], clock=clock, max_delay_ms=10000)
    clock.advance_ms(2000)
    outcomes = await rebalance(w1, w2, back)
    assert {o.delay for o in outcomes.values()} == {8000}
    clock.advance_ms(8000)
    outcomes = await rebalance(w1, w2, back)
    assert set(outcomes[back.id].assignment.connectors) == lost_c
    assert set(outcomes[back.id].assignment.tasks) == lost_t


async def test_zero_max_delay_reassigns_lost_work_immediately() -> None:
    group, _clock, (w1, w2, w3) = await _three_balanced_workers(max_delay_ms=0)
    lost_c, lost_t = w3.held()
    await group.remove(w3.id)
    outcomes = await rebalance(w1, w2)
    assert {o.delay for o in outcomes.values()} == {0}
    gained_t = set(outcomes["w1"].assignment.tasks) | set(outcomes["w2"].assignment.tasks)
    gained_c = set(outcomes["w1"].assignment.connectors) | set(outcomes["w2"].assignment.connectors)
    assert gained_c == lost_c and gained_t == lost_t


async def test_new_leader_reassigns_the_departed_leaders_work_at_once() -> None:
    group, _clock, (w1, w2, w3) = await _three_balanced_workers(max_delay_ms=10000)
    assert group.leader == w1.id
    lost_c, lost_t = w1.held()
    await group.remove(w1.id)
    outcomes = await rebalance(w2, w3)
    assert group.leader == w2.id and outcomes[w2.id].is_leader
    assert {o.delay for o in outcomes.values()} == {0}
    gained_c = set(outcomes[w2.id].assignment.connectors) | set(outcomes[w3.id].assignment.connectors)
    gained_t = set(outcomes[w2.id].assignment.tasks) | set(outcomes[w3.id].assignment.tasks)
    assert gained_c == lost_c and gained_t == lost_t


async def test_assignor_memory_survives_across_generations_on_the_leader() -> None:
    group, clock, (w1, w2, w3) = await _three_balanced_workers(max_delay_ms=10000)
    await group.remove(w3.id)
    await rebalance(w1, w2)
    state = w1.coordinator.assignor_state
    assert state.delay == 10000 and state.scheduled_rebalance == int(clock() * 1000) + 10000
    assert state.previous_generation_id == group.generation == w1.coordinator.last_completed_generation
    assert w2.coordinator.assignor_state.previous_generation_id == -1, "only the leader runs the assignor"


# -- config offsets -------------------------------------------------------------------------------


async def test_leader_behind_the_members_takes_a_fresh_snapshot_or_answers_config_mismatch() -> None:
    group = FakeGroup()
    queued: list[ConfigSnapshot | tuple[int, ConfigSnapshot]] = []
    taken: list[ConfigSnapshot | tuple[int, ConfigSnapshot]] = []

    def source() -> ConfigSnapshot | tuple[int, ConfigSnapshot]:
        taken.append(queued.pop(0) if queued else ConfigSnapshot(3, {"c": 1}))
        return taken[-1]

    w1 = make_worker(group, "w1", source=source)
    await rebalance(w1)
    w2 = make_worker(group, "w2", snapshot=ConfigSnapshot(9, {"c": 1, "d": 1}))
    taken.clear()
    outcomes = await rebalance(w1, w2)
    assert len(taken) == 2, "one snapshot for JoinGroup, one fresh retry as leader"
    assert all(o.failed and o.error == CONFIG_MISMATCH and o.config_offset == 9 for o in outcomes.values())
    assert w1.coordinator.rejoin_needed() and w2.coordinator.rejoin_needed()

    # The leader's metadata snapshot is behind, but its fresh snapshot has caught up (and passed 9);
    # a source may return (offset, snapshot) pairs: the pair's offset wins.
    queued.extend([ConfigSnapshot(3, {"c": 1}), (11, ConfigSnapshot(0, {"c": 1, "d": 1}))])
    outcomes = await rebalance(w1, w2)
    assert all(not o.failed and o.config_offset == 11 for o in outcomes.values())
    assert set(w1.held()[0]) | set(w2.held()[0]) == {"c", "d"}
    assert not w1.coordinator.rejoin_needed()
    assert w1.coordinator.config_snapshot == ConfigSnapshot(11, {"c": 1, "d": 1})


# -- protocol selection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "selected", "version"),
    [
        (("sessioned", "sessioned"), "sessioned", 2),
        (("sessioned", "compatible"), "compatible", 1),
        (("compatible", "sessioned", "sessioned"), "compatible", 1),
        (("sessioned", "eager"), "default", 0),
        (("eager", "compatible"), "default", 0),
    ],
)
async def test_group_selects_the_protocol_all_members_support(
    settings: tuple[str, ...], selected: str, version: int
) -> None:
    group = FakeGroup()
    config = ConfigSnapshot(4, {"c": 2})
    workers = [make_worker(group, f"w{i}", mode=m, snapshot=config) for i, m in enumerate(settings)]
    outcomes = await rebalance(*workers)
    assert group.rounds[-1].protocol == selected
    for w in workers:
        outcome = outcomes[w.id]
        assert outcome.protocol is ConnectProtocolCompatibility.from_protocol(selected)
        assert outcome.assignment.version == version
        assert w.coordinator.current_protocol.protocol == selected
        assert group.rounds[-1].assignments[w.id][:2] == version.to_bytes(2, "big")
    held_c = [c for w in workers for c in w.held()[0]]
    held_t = [t for w in workers for t in w.held()[1]]
    assert sorted(held_c) == ["c"] and sorted(held_t) == sorted(tasks("c", 2))


async def test_eager_protocol_revokes_everything_before_each_join() -> None:
    group = FakeGroup()
    config = ConfigSnapshot(4, {"c": 2})
    w1 = make_worker(group, "w1", mode="eager", snapshot=config)
    first = await rebalance(w1)
    assert first["w1"].eager and w1.revocations == []
    assert w1.held() == ({"c"}, tasks("c", 2))

    w2 = make_worker(group, "w2", mode="sessioned", snapshot=config)
    join = asyncio.create_task(rebalance(w2))
    await settle()
    assert w1.member.rejoin_needed.is_set()
    second = await rebalance(w1)
    second.update(await join)
    assert w1.revocations == [("w1", ("c",), tuple(sorted(tasks("c", 2))))], "stopped all before joining"
    assert w2.revocations == [], "nothing held yet, nothing revoked"
    assert second["w2"].eager, "one eager member downgrades the group to the eager protocol"
    # Eager assignments are complete: w1 sorts first and gets the connector, the tasks alternate.
    assert second["w1"].holding.connectors == ("c",) and second["w1"].holding.tasks == (
        ConnectorTaskId("c", 1),
    )
    assert second["w2"].holding.connectors == () and second["w2"].holding.tasks == (ConnectorTaskId("c", 0),)

    await rebalance(w1, w2)
    assert w2.revocations == [("w1", (), (ConnectorTaskId("c", 0),))], "the eager rule holds for every member"


async def test_cooperative_members_keep_their_work_across_a_rebalance() -> None:
    group = FakeGroup()
    config = ConfigSnapshot(4, {"c": 2})
    w1 = make_worker(group, "w1", snapshot=config)
    await rebalance(w1)
    w1.member.request_rejoin("test")
    outcome = (await rebalance(w1))["w1"]
    assert w1.revocations == [] and not outcome.revoked
    assert outcome.assignment.connectors == () and outcome.holding.connectors == ("c",)


async def test_drop_assignment_revokes_everything_and_advertises_an_empty_holding() -> None:
    group = FakeGroup()
    w1 = make_worker(group, "w1", snapshot=ConfigSnapshot(4, {"c": 1}))
    await rebalance(w1)
    dropped = await w1.coordinator.drop_assignment("coordinator unreachable")
    assert dropped is not None and dropped.connectors == ("c",)
    assert w1.revocations == [("w1", ("c",), (ConnectorTaskId("c", 0),))]
    assert w1.coordinator.holding is None and w1.coordinator.rejoin_needed()
    offered = dict(w1.coordinator.metadata())
    assert decode_metadata(offered["sessioned"]).assignment.leader is None
    assert offered["sessioned"].endswith(b"\xff\xff\xff\xff"), "null allocation"
    outcome = (await rebalance(w1))["w1"]
    assert outcome.assignment.connectors == ("c",), "nothing active: the leader assigns it as new work"


async def test_eager_revocation_happens_once_even_when_the_join_fails() -> None:
    group = FakeGroup()
    w1 = make_worker(group, "w1", mode="eager", snapshot=ConfigSnapshot(4, {"c": 1}))
    await rebalance(w1)
    w1.member.fail_next = GroupJoinError("coordinator unavailable")
    with pytest.raises(GroupJoinError):
        await w1.coordinator.rebalance()
    assert w1.revocations == [("w1", ("c",), (ConnectorTaskId("c", 0),))]
    assert w1.coordinator.holding is not None and w1.coordinator.holding.connectors == ("c",)
    await rebalance(w1)
    assert len(w1.revocations) == 1, "the retry joins without revoking the same work again"
    await rebalance(w1)
    assert len(w1.revocations) == 2, "the next round revokes again"
