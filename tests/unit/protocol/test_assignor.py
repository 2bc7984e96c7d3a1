"""Incremental cooperative and eager assignors.

Three layers: replay of traces recorded from Kafka's own IncrementalCooperativeAssignor
(tests/golden/protocol/assignor.jsh; byte-for-byte assignments and delay state, round after round),
scenario tests mirroring IncrementalCooperativeAssignorTest, and hypothesis properties over a small
simulated cluster whose members merge assignments exactly as WorkerCoordinator does.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyconnect.protocol.assignor import (
    INITIAL_STATE,
    AssignmentResult,
    AssignorState,
    ConfigSnapshot,
    assign,
)
from pyconnect.protocol.connect_assignment import (
    CONFIG_MISMATCH,
    EMPTY_ASSIGNMENT,
    NO_ERROR,
    ExtendedAssignment,
    decode_assignment,
    encode_assignment,
    merge_into_snapshot,
)
from pyconnect.protocol.connect_metadata import (
    ConnectProtocolCompatibility,
    ExtendedWorkerState,
    WorkerState,
    decode_metadata,
    encode_metadata,
)
from pyconnect.protocol.eager_assignor import assign_eager
from pyconnect.protocol.task_id import ConnectorTaskId as T

TRACES = Path(__file__).resolve().parents[2] / "golden" / "protocol" / "assignor_traces.txt"
CAPTURED_GROUPS = Path(__file__).resolve().parents[2] / "golden" / "connect_group_protocol.json"


@dataclass
class TraceRound:
    generation: int
    last_completed: int
    now: int
    leader: str
    offset: int
    config: dict[str, int] = field(default_factory=dict)
    members: list[tuple[str, ExtendedWorkerState]] = field(default_factory=list)
    expect: dict[str, str] = field(default_factory=dict)
    state: tuple[int, int] = (0, 0)


def _load_traces() -> dict[str, tuple[int, list[TraceRound]]]:
    scenarios: dict[str, tuple[int, list[TraceRound]]] = {}
    rounds: list[TraceRound] = []
    current: TraceRound | None = None
    for line in TRACES.read_text(encoding="utf-8").splitlines():
        kind, *args = line.split()
        if kind == "scenario":
            rounds = []
            scenarios[args[0]] = (int(args[1]), rounds)
        elif kind == "round":
            current = TraceRound(int(args[0]), int(args[1]), int(args[2]), args[3], int(args[4]))
            rounds.append(current)
        elif current is not None and kind == "config":
            current.config[args[0]] = int(args[1])
        elif current is not None and kind == "member":
            current.members.append((args[0], decode_metadata(bytes.fromhex(args[1]))))
        elif current is not None and kind == "expect":
            current.expect[args[0]] = args[1]
        elif current is not None and kind == "state":
            current.state = (int(args[0]), int(args[1]))
    return scenarios


JAVA_TRACES = _load_traces()


@pytest.mark.parametrize("scenario", sorted(JAVA_TRACES))
def test_replays_java_assignor_traces_byte_for_byte(scenario: str) -> None:
    max_delay, rounds = JAVA_TRACES[scenario]
    state = INITIAL_STATE
    for index, r in enumerate(rounds):
        result = assign(
            r.members,
            r.leader,
            ConfigSnapshot(r.offset, r.config),
            state,
            now_ms=r.now,
            max_delay_ms=max_delay,
            last_completed_generation_id=r.last_completed,
            generation_id=r.generation,
            protocol_version=2,
        )
        state = result.state
        for member, expected in r.expect.items():
            got = encode_assignment(result.assignments[member], 2).hex()
            assert got == expected, (
                f"{scenario} round {index} {member}: {result.assignments[member]} != "
                f"{decode_assignment(bytes.fromhex(expected))}"
            )
        assert (state.delay, state.scheduled_rebalance) == r.state, f"{scenario} round {index}"


@pytest.mark.parametrize("scenario", sorted(set(JAVA_TRACES) - {"duplicates"}))
def test_members_merge_and_readvertise_like_java_workers(scenario: str) -> None:
    """Java members' next metadata = our merge of what they held and received (or unchanged if they missed it)."""
    _, rounds = JAVA_TRACES[scenario]
    for earlier, later in itertools.pairwise(rounds):
        previous = dict(earlier.members)
        for member, state in later.members:
            advertised = encode_metadata(state, 2)
            if member not in previous:
                continue
            received = decode_assignment(bytes.fromhex(earlier.expect[member]))
            merged = merge_into_snapshot(
                None if previous[member].assignment == EMPTY_ASSIGNMENT else previous[member].assignment,
                received,
                eager=False,
            )
            candidates = {
                encode_metadata(ExtendedWorkerState(state.url, state.config_offset, merged), 2),
                encode_metadata(
                    ExtendedWorkerState(state.url, state.config_offset, previous[member].assignment), 2
                ),
            }
            assert advertised in candidates, f"{scenario} generation {later.generation} {member}"


def _captured_groups() -> list[dict]:
    return json.loads(CAPTURED_GROUPS.read_text(encoding="utf-8"))["captures"]


@pytest.mark.parametrize("capture", _captured_groups(), ids=lambda c: f"{c['protocol']}: {c['note']}")
def test_reproduces_assignments_captured_from_running_java_workers(capture: dict) -> None:
    mode = ConnectProtocolCompatibility.from_protocol(capture["protocol"])
    members = [
        (m["member_id"], decode_metadata(bytes.fromhex(m["metadata_hex"]))) for m in capture["members"]
    ]
    captured = {m["member_id"]: m["assignment_hex"] for m in capture["members"]}
    leader = decode_assignment(bytes.fromhex(next(iter(captured.values())))).leader
    assert leader is not None
    task_counts: dict[str, int] = {}
    for hex_bytes in captured.values():
        received = decode_assignment(bytes.fromhex(hex_bytes))
        held = [s.assignment for _, s in members]
        for a in (received, *held):
            for connector in a.connectors:
                task_counts.setdefault(connector, 0)
            for task in a.tasks:
                task_counts[task.connector] = max(task_counts.get(task.connector, 0), task.task + 1)
    snapshot = ConfigSnapshot(max(s.config_offset for _, s in members), task_counts)
    if mode is ConnectProtocolCompatibility.EAGER:
        computed = dict(assign_eager(members, leader, snapshot)[0])
    else:
        computed = dict(
            assign(
                members,
                leader,
                snapshot,
                INITIAL_STATE,
                now_ms=0,
                max_delay_ms=300_000,
                last_completed_generation_id=0,
                generation_id=1,
                protocol_version=mode.version,
            ).assignments
        )
    assert {m: encode_assignment(a, mode.version).hex() for m, a in computed.items()} == captured


class Cluster:
    """Members that advertise their holding, a leader that keeps the assignor memory, a clock."""

    def __init__(self, max_delay: int = 300_000, **connectors: int) -> None:
        self.max_delay = max_delay
        self.members: list[str] = []
        self.held: dict[str, ExtendedAssignment | None] = {}
        self.tasks: dict[str, int] = dict(connectors)
        self.offset = 1
        self.now = 1_000
        self.generation = 0
        self.state: AssignorState = INITIAL_STATE
        self.leader: str | None = None
        self.last: AssignmentResult | None = None

    def join(self, member: str) -> Cluster:
        self.members.append(member)
        self.held[member] = None
        return self

    def leave(self, member: str) -> Cluster:
        self.members.remove(member)
        del self.held[member]
        return self

    def configure(self, connector: str, tasks: int) -> Cluster:
        self.tasks[connector] = tasks
        self.offset += 1
        return self

    def delete(self, connector: str) -> Cluster:
        del self.tasks[connector]
        self.offset += 1
        return self

    def round(self, *, failing: tuple[str, ...] = ()) -> dict[str, ExtendedAssignment]:
        if self.members[0] != self.leader:
            self.leader, self.state = self.members[0], INITIAL_STATE
        metadata = [
            (m, decode_metadata(encode_metadata(ExtendedWorkerState(f"http://{m}:8083/", self.offset, a), 2)))
            for m, a in ((m, self.held[m] or EMPTY_ASSIGNMENT) for m in self.members)
        ]
        result = assign(
            metadata,
            self.leader,
            ConfigSnapshot(self.offset, dict(self.tasks)),
            self.state,
            now_ms=self.now,
            max_delay_ms=self.max_delay,
            last_completed_generation_id=self.generation,
            generation_id=self.generation + 1,
            protocol_version=2,
        )
        self.generation += 1
        self.state, self.last = result.state, result
        handed_out = Counter(x for a in result.assignments.values() for x in (*a.connectors, *a.tasks))
        assert all(n == 1 for n in handed_out.values()), handed_out
        for member, assignment in result.assignments.items():
            if member not in failing:
                received = decode_assignment(encode_assignment(assignment, 2))
                self.held[member] = merge_into_snapshot(self.held[member], received, eager=False)
        assert_disjoint(self.holdings())
        return result.assignments

    def converge(self, max_rounds: int = 30) -> int:
        for count in range(1, max_rounds + 1):
            assignments = self.round()
            delay = max(a.delay for a in assignments.values())
            moved = any(
                a.connectors or a.tasks or a.revoked_connectors or a.revoked_tasks
                for a in assignments.values()
            )
            if delay:
                self.now += delay
            elif not moved:
                return count
        raise AssertionError(f"no fixed point after {max_rounds} rounds: {self.holdings()}")

    def holdings(self) -> dict[str, tuple[set[str], set[T]]]:
        return {m: (set(a.connectors), set(a.tasks)) if a else (set(), set()) for m, a in self.held.items()}

    def configured(self) -> tuple[set[str], set[T]]:
        return set(self.tasks), {T(c, i) for c, n in self.tasks.items() for i in range(n)}


def assert_disjoint(holdings: dict[str, tuple[set[str], set[T]]]) -> None:
    connectors = Counter(c for cs, _ in holdings.values() for c in cs)
    tasks = Counter(t for _, ts in holdings.values() for t in ts)
    assert all(n == 1 for n in connectors.values()), connectors
    assert all(n == 1 for n in tasks.values()), tasks


def assert_converged(cluster: Cluster) -> None:
    holdings = cluster.holdings()
    connectors, tasks = cluster.configured()
    assert set().union(*(cs for cs, _ in holdings.values())) == connectors
    assert set().union(*(ts for _, ts in holdings.values())) == tasks
    for index in (0, 1):
        sizes = [len(h[index]) for h in holdings.values()]
        assert max(sizes) - min(sizes) <= 1, holdings


def owners(cluster: Cluster) -> dict[object, str]:
    return {item: m for m, (cs, ts) in cluster.holdings().items() for item in (*cs, *ts)}


def test_new_worker_costs_two_rounds_revoke_then_assign() -> None:
    cluster = Cluster(c1=2, c2=2).join("w1")
    cluster.converge()
    first = cluster.join("w2").round()
    assert (first["w1"].connectors, first["w1"].tasks) == ((), ())
    assert len(first["w1"].revoked_connectors) == 1 and len(first["w1"].revoked_tasks) == 2
    assert first["w2"] == ExtendedAssignment(NO_ERROR, "w1", "http://w1:8083/", 1, version=2)
    second = cluster.round()
    assert set(second["w2"].connectors) == set(first["w1"].revoked_connectors)
    assert set(second["w2"].tasks) == set(first["w1"].revoked_tasks)
    assert (second["w1"].revoked_connectors, second["w1"].revoked_tasks) == ((), ())
    assert_converged(cluster)


def test_lost_work_is_held_for_the_delay_then_reassigned() -> None:
    cluster = Cluster(60_000, a=3, b=3).join("w1").join("w2").join("w3")
    cluster.converge()
    lost = cluster.holdings()["w3"]
    delayed = cluster.leave("w3").round()
    assert {a.delay for a in delayed.values()} == {60_000}
    assert all(not a.connectors and not a.tasks for a in delayed.values())
    cluster.now += 20_000
    assert {a.delay for a in cluster.round().values()} == {40_000}
    cluster.now += 40_000
    after = cluster.round()
    assert {a.delay for a in after.values()} == {0}
    reassigned = {x for a in after.values() for x in (*a.connectors, *a.tasks)}
    assert reassigned == lost[0] | lost[1]
    cluster.converge()
    assert_converged(cluster)


def test_returning_worker_gets_its_lost_work_when_the_delay_expires() -> None:
    cluster = Cluster(60_000, a=2, b=4).join("w1").join("w2")
    cluster.converge()
    before = cluster.holdings()
    cluster.leave("w2").round()
    cluster.now += 10_000
    assert cluster.join("w2-restarted").round()["w2-restarted"].delay == 50_000
    cluster.now += 50_000
    cluster.round()
    assert cluster.holdings()["w2-restarted"] == before["w2"]
    assert cluster.holdings()["w1"] == before["w1"]


def test_departed_leader_means_no_delay() -> None:
    cluster = Cluster(60_000, a=2, b=2).join("w1").join("w2")
    cluster.converge()
    assignments = cluster.leave("w1").round()
    assert assignments["w2"].delay == 0
    assert_converged(cluster)


def test_deleted_connector_is_revoked_with_its_tasks() -> None:
    cluster = Cluster(keep=2, drop=3).join("w1").join("w2")
    cluster.converge()
    assignments = cluster.delete("drop").round()
    revoked_c = {c for a in assignments.values() for c in a.revoked_connectors}
    revoked_t = {t for a in assignments.values() for t in a.revoked_tasks}
    assert revoked_c == {"drop"}
    assert revoked_t == {T("drop", i) for i in range(3)}
    cluster.converge()
    assert_converged(cluster)


def test_task_count_changes_revoke_removed_and_assign_new_tasks() -> None:
    cluster = Cluster(src=6).join("w1").join("w2")
    cluster.converge()
    shrink = cluster.configure("src", 2).round()
    assert {t for a in shrink.values() for t in a.revoked_tasks} == {T("src", i) for i in range(2, 6)}
    cluster.converge()
    grow = cluster.configure("src", 5).round()
    assert {t for a in grow.values() for t in a.tasks} == {T("src", i) for i in range(2, 5)}
    cluster.converge()
    assert_converged(cluster)


def test_duplicated_work_is_revoked_from_every_holder_then_reassigned() -> None:
    cluster = Cluster(s=2).join("a").join("b")
    cluster.converge()
    held_a = cluster.held["a"]
    held_b = cluster.held["b"]
    assert held_a is not None and held_b is not None
    cluster.held["b"] = ExtendedAssignment(
        NO_ERROR, "a", "u", 1, held_b.connectors + held_a.connectors, held_b.tasks + held_a.tasks
    )
    first = cluster.round()
    duplicated = set(held_a.connectors) | set(held_a.tasks)
    assert set(first["a"].revoked_connectors) | set(first["a"].revoked_tasks) >= duplicated
    assert set(first["b"].revoked_connectors) | set(first["b"].revoked_tasks) >= duplicated
    cluster.converge()
    assert_converged(cluster)


def test_missed_sync_work_is_reassigned_as_new() -> None:
    cluster = Cluster(k=4).join("x").join("y")
    cluster.round(failing=("y",))
    assert not cluster.holdings()["y"][1]
    assignments = cluster.round()
    assert assignments["x"].delay == 0
    cluster.converge()
    assert_converged(cluster)


def test_successive_revoking_rounds_back_off_forty_to_the_n() -> None:
    cluster = Cluster(300_000, **{f"c{i}": 4 for i in range(6)}).join("w1")
    cluster.converge()
    assert max(a.delay for a in cluster.join("w2").round().values()) == 0
    assert max(a.delay for a in cluster.join("w3").round().values()) == 40
    cluster.now += 40
    cluster.converge()
    assert_converged(cluster)


def test_leader_behind_members_gets_config_mismatch_or_uses_fresh_snapshot() -> None:
    members = [
        ("m1", ExtendedWorkerState("http://m1/", 5)),
        ("m2", ExtendedWorkerState("http://m2/", 9)),
    ]
    stale = ConfigSnapshot(5, {"c": 1})
    kwargs = {"now_ms": 0, "max_delay_ms": 1000, "last_completed_generation_id": -1, "generation_id": 1}
    failed = assign(members, "m1", stale, INITIAL_STATE, **kwargs)
    assert {a.error for a in failed.assignments.values()} == {CONFIG_MISMATCH}
    assert {a.config_offset for a in failed.assignments.values()} == {9}
    assert failed.state is INITIAL_STATE
    fresh = assign(members, "m1", stale, INITIAL_STATE, fresh_snapshot=ConfigSnapshot(11, {"c": 1}), **kwargs)
    assert {a.config_offset for a in fresh.assignments.values()} == {11}
    assert fresh.snapshot.offset == 11
    assert {c for a in fresh.assignments.values() for c in a.connectors} == {"c"}


def test_eager_round_robin_continues_from_connectors_into_tasks() -> None:
    members = [(m, WorkerState(f"http://{m}/", 3)) for m in ("w2", "w1", "w3")]
    assignments, _ = assign_eager(members, "w2", ConfigSnapshot(3, {"b": 2, "a": 3}))
    assert assignments["w1"].connectors == ("a",)
    assert assignments["w2"].connectors == ("b",)
    assert assignments["w3"].connectors == ()
    assert assignments["w3"].tasks == (T("a", 0), T("b", 0))
    assert assignments["w1"].tasks == (T("a", 1), T("b", 1))
    assert assignments["w2"].tasks == (T("a", 2),)
    assert {a.leader_url for a in assignments.values()} == {"http://w2/"}
    mismatch, _ = assign_eager(members, "w2", ConfigSnapshot(1, {"a": 1}))
    assert {(a.error, a.config_offset) for a in mismatch.values()} == {(CONFIG_MISMATCH, 3)}


events = st.one_of(
    st.tuples(st.just("join"), st.integers(0, 10_000)),
    st.tuples(st.just("leave"), st.integers(0, 100)),
    st.tuples(st.just("configure"), st.integers(0, 8), st.integers(0, 6)),
    st.tuples(st.just("delete"), st.integers(0, 100)),
)


def _apply(cluster: Cluster, event: tuple) -> None:
    kind = event[0]
    if kind == "join":
        name = f"worker-{event[1]}"
        if name not in cluster.members:
            cluster.join(name)
    elif kind == "leave" and len(cluster.members) > 1:
        cluster.leave(cluster.members[event[1] % len(cluster.members)])
    elif kind == "configure":
        cluster.configure(f"conn-{event[1]}", event[2])
    elif kind == "delete" and cluster.tasks:
        cluster.delete(sorted(cluster.tasks)[event[1] % len(cluster.tasks)])


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from([f"conn-{i}" for i in range(8)]), st.integers(0, 6), max_size=6),
    st.integers(1, 5),
    st.sampled_from([0, 1_000, 300_000]),
    st.lists(events, max_size=8),
)
def test_convergence_exactly_once_and_balanced(
    connectors: dict[str, int], workers: int, max_delay: int, steps: list[tuple]
) -> None:
    cluster = Cluster(max_delay, **connectors)
    for i in range(workers):
        cluster.join(f"worker-{i}")
    cluster.converge()
    assert_converged(cluster)
    for event in steps:
        _apply(cluster, event)
        cluster.converge()
        assert_converged(cluster)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([f"conn-{i}" for i in range(10)]), st.integers(0, 8), min_size=1, max_size=8
    ),
    st.integers(1, 5),
    st.sampled_from([0, 300_000]),
)
def test_joining_worker_only_takes_work_and_survivors_keep_theirs(
    connectors: dict[str, int], workers: int, max_delay: int
) -> None:
    cluster = Cluster(max_delay, **connectors)
    for i in range(workers):
        cluster.join(f"worker-{i}")
    cluster.converge()
    before = owners(cluster)
    cluster.join("newcomer").converge()
    assert_converged(cluster)
    after = owners(cluster)
    assert all(after[item] in (owner, "newcomer") for item, owner in before.items())
    moved = sum(1 for item, owner in before.items() if after[item] != owner)
    assert moved == len(cluster.holdings()["newcomer"][0]) + len(cluster.holdings()["newcomer"][1])


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([f"conn-{i}" for i in range(10)]), st.integers(0, 8), min_size=1, max_size=8
    ),
    st.integers(2, 6),
    st.data(),
)
def test_departure_without_delay_moves_only_the_lost_work(
    connectors: dict[str, int], workers: int, data: st.DataObject
) -> None:
    cluster = Cluster(0, **connectors)
    for i in range(workers):
        cluster.join(f"worker-{i}")
    cluster.converge()
    leaving = data.draw(st.sampled_from(cluster.members))
    before = owners(cluster)
    first = cluster.leave(leaving).round()
    assert all(not (a.revoked_connectors or a.revoked_tasks) for a in first.values())
    cluster.converge()
    assert_converged(cluster)
    after = owners(cluster)
    assert all(after[item] == owner for item, owner in before.items() if owner != leaving)


def test_a_converged_cluster_is_a_fixed_point() -> None:
    cluster = Cluster(**{f"c{i}": i for i in range(7)})
    for i in range(4):
        cluster.join(f"w{i}")
    cluster.converge()
    before = cluster.holdings()
    assignments = cluster.round()
    assert all(
        not (a.connectors or a.tasks or a.revoked_connectors or a.revoked_tasks or a.delay)
        for a in assignments.values()
    )
    assert cluster.holdings() == before
