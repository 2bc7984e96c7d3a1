"""The failback's pure core for B's own topics (DefaultReplicationPolicy): which topics the reverse flow
copies and from where, where a group that read them on B returns on A, and the failover's record of
where they ended, without Kafka."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.failback.execute import FailbackRun
from connectors.mirror.failback.group_return import plan_return
from connectors.mirror.failback.ledger import MirrorEnd
from connectors.mirror.failback.positions import Unproved, position_on_copy
from connectors.mirror.failback.return_syncs import return_syncs
from connectors.mirror.failback.reverse_flow import copied_topics, own_topics, reverse_starts
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_calls import FailoverRefused
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_state import FailoverState
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.policy import ReplicationPolicy, is_cycle, replication_policy
from pyconnect.kafka.group_view import GroupView
from tests.unit.mirror.settled_positions import resolved

FLOW = {"source": "A", "target": "B", "checkpoints_topic": "A.checkpoints.internal"}
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
ON_B = ["orders", "A.orders", "A.B.orders", "x.orders", "heartbeats", "A.heartbeats", "__consumer_offsets"]
ON_B += ["mm2-offset-syncs.A.internal", "A.checkpoints.internal", "payments"]


def _policy(source: str, identity: bool = False) -> ReplicationPolicy:
    config = {"source.cluster.alias": source}
    return replication_policy({**config, "replication.policy.class": IDENTITY} if identity else config)


def test_cycles_follow_the_chain_of_sources_as_java_does() -> None:
    policy = _policy("B")
    assert is_cycle(policy, "A", "A.orders") and is_cycle(policy, "A", "B.A.orders")
    assert not is_cycle(policy, "A", "orders") and not is_cycle(policy, "A", "C.orders")
    # IdentityReplicationPolicy cannot tell: only heartbeats topics carry a source
    identity = _policy("B", identity=True)
    assert not is_cycle(identity, "A", "A.orders") and is_cycle(identity, "A", "A.heartbeats")


def test_the_reverse_flow_copies_bs_own_topics_never_the_forward_copies() -> None:
    policy = _policy("B")
    assert copied_topics({"topics": "orders"}, policy, "A", ON_B) == ["orders"]
    # the default filter: every topic that is not internal, heartbeats or a cycle
    assert copied_topics({}, policy, "A", ON_B) == ["orders", "payments", "x.orders"]
    assert copied_topics({"topics": ".*", "topics.exclude": "pay.*"}, policy, "A", ON_B) == [
        "orders",
        "x.orders",
    ]
    # under IdentityReplicationPolicy B's orders is the forward copy and the applications' topic at once
    identity = _policy("B", identity=True)
    assert "orders" in copied_topics({"topics": "orders"}, identity, "A", ON_B)


def test_a_failover_records_the_ends_of_bs_own_topics() -> None:
    assert own_topics(_policy("B"), "A", ON_B) == ["heartbeats", "orders", "payments", "x.orders"]
    assert "A.orders" in own_topics(_policy("B", identity=True), "A", ON_B)


def test_reverse_starts_take_the_copy_end_or_the_end_at_the_failover() -> None:
    bounds = {("orders", 0): (0, 80), ("orders", 1): (10, 70), ("new", 0): (0, 5), ("re", 0): (0, 3)}
    bounds[("old", 0)] = (40, 90)
    own = {("orders", 0): 30, ("orders", 1): 12, ("re", 0): 9, ("old", 0): 20}
    starts = reverse_starts(bounds, {("orders", 1): 66}, own, bounds)
    # a forward copy from its end; an own topic from its end at the failover; a topic created after the
    # failover, or recreated (recorded end past its end), from its log start; retention: the log start
    assert starts == {("orders", 0): 30, ("orders", 1): 66, ("new", 0): 0, ("re", 0): 0, ("old", 0): 40}
    # a failover that recorded nothing (an older state file): the log start
    assert reverse_starts([("orders", 0)], {}, None, bounds) == {("orders", 0): 0}


COPY = [(31, 500, 35), (37, 505, 40)]  # B 31..35 -> A 500..504, B 36 a marker, B 37..40 -> A 505..508
COPY_ON_B, COPY_ON_A = [*range(31, 36), *range(37, 41)], list(range(500, 509))


@pytest.mark.parametrize(
    ("committed", "expected", "evidence"),
    [(30, 500, "reverse run"), (31, 500, "reverse run"), (34, 503, "reverse run"), (36, 505, "reverse runs")],
)
def test_a_group_on_bs_own_topic_returns_on_its_copy(committed: int, expected: int, evidence: str) -> None:
    found = resolved(position_on_copy(committed, 30, COPY, 500), COPY_ON_B, COPY_ON_A)
    assert (found.offset, found.evidence) == (expected, evidence)
    assert (
        resolved(position_on_copy(41, 30, COPY, 500), COPY_ON_B, COPY_ON_A).offset == 509
    )  # read everything
    assert (
        resolved(position_on_copy(30, 30, [], 7), [], []).evidence == "reverse start"
    )  # nothing written on B
    assert (
        resolved(position_on_copy(30, 30, [(3, 0, 9)], 7), [], []).offset == 7
    )  # an earlier round trip's runs


def test_a_group_behind_the_copys_start_is_unproved() -> None:
    with pytest.raises(Unproved, match="before 30, where the proved copy back begins"):
        position_on_copy(29, 30, COPY, 500)


@settings(max_examples=200, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 2), min_size=0, max_size=30),
    start=st.integers(0, 5),
    copy_start=st.integers(0, 50),
    earlier=st.booleans(),
)
def test_every_position_on_the_copy_is_the_next_unread_record(
    gaps: list[int], start: int, copy_start: int, earlier: bool
) -> None:
    """B's own partition: records before the failover (not copied, perhaps by an ``earlier`` round trip),
    then records with gaps
    (markers) from ``start``, copied back one after the other from ``copy_start`` on A with a sync each:
    from any committed offset at or past the start, the next record read on A is the one it would have
    read next on B."""
    b, written = start - 1, []
    for gap in gaps:
        b += 1 + gap
        written.append(b)
    reverse = OffsetSyncStore("exact")
    reverse.start(False)
    if earlier and start and copy_start:  # the last record an earlier round trip copied back
        reverse.add("orders", 0, start - 1, copy_start - 1)
    for k, n in enumerate(written):
        reverse.add("orders", 0, n, copy_start + k)
    reverse.mark_read_to_end()
    runs = reverse.runs(("orders", 0))
    on_a = [copy_start + k for k in range(len(written))]
    if earlier and start and copy_start:
        on_a.insert(0, copy_start - 1)
    for committed in range(start, (written[-1] if written else start) + 2):
        following = [copy_start + k for k, n in enumerate(written) if n >= committed]
        expected = following[0] if following else copy_start + len(written)
        found = resolved(position_on_copy(committed, start, runs, copy_start), written, on_a)
        assert found.offset == expected, committed


IDLE = GroupView("g", "classic", "Empty")


def test_a_group_returns_on_as_orders_and_on_the_copy_of_bs_orders() -> None:
    forward = {("orders", 0): [(0, 0, 199)]}
    planned = plan_return(
        "g",
        (IDLE, {("A.orders", 0): 200, ("orders", 0): 34, ("payments", 0): 3}),
        (IDLE, {}),
        {("A.orders", 0): ("orders", MirrorEnd("orders", 0, 199, 200, "offset syncs"))},
        forward,
        {("orders", 0): COPY},
        {("orders", 0): 230, ("B.orders", 0): 500},
        allow_rewind=False,
        own={("orders", 0): ("B.orders", 30)},
    )
    # A.orders read to the copy's end: past the orphans (A's end when the reverse flow began)
    assert planned.offsets() == {("orders", 0): 230, ("B.orders", 0): 503}
    assert planned.others == ("payments-0",) and planned.refused is None
    rows = {p.target_topic: p.position.evidence for p in planned.partitions if p.position}
    assert rows == {"A.orders": "reverse start", "orders": "reverse run"}


def test_the_copies_of_bs_orders_get_forward_syncs_on_their_topic_on_a() -> None:
    syncs = return_syncs({("B.orders", 0): ("orders", COPY)})
    assert [(s.topic, s.upstream_offset, s.downstream_offset) for s in syncs] == [
        ("B.orders", 500, 31),
        ("B.orders", 504, 35),
        ("B.orders", 505, 37),
        ("B.orders", 508, 40),
    ]


def test_the_states_keep_the_reverse_starts_and_the_failovers_own_ends(tmp_path: Path) -> None:
    state = FailbackState(dict(FLOW))
    state.measured([], [], {("B.orders", 0): 0}, {("orders", 0): 30})
    path = tmp_path / "failback.json"
    state.save(path)
    assert FailbackState.load(path, dict(FLOW)).reverse_starts == {"orders:0": 30}
    failover = FailoverState(dict(FLOW), own_ends={"orders:0": 30})
    failover.save(path)
    assert FailoverState.load(path, dict(FLOW)).own_ends == {"orders:0": 30}
    FailoverState(dict(FLOW)).save(path)  # not recorded stays distinct from "B had no own topic"
    assert FailoverState.load(path, dict(FLOW)).own_ends is None


def test_only_a_mirror_source_connector_b_to_a_is_adopted_as_the_reverse_flow() -> None:
    from connectors.mirror.failback.reverse_flow import adoption_refusal

    config = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "B",
        "target.cluster.alias": "A",
    }
    assert adoption_refusal(config, "B", "A") is None
    assert "copies B->A, not A->B" in str(adoption_refusal(config, "A", "B"))
    checkpoints = {**config, "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"}
    assert "not a MirrorSourceConnector" in str(adoption_refusal(checkpoints, "B", "A"))


def test_through_an_adopted_reverse_flow_positions_are_proved_from_its_oldest_sync() -> None:
    # copying all along: B 0..40 -> A 0..40, whatever the failover's end on B was
    assert position_on_copy(12, 0, [(0, 0, 40)], 99).offset == 12
    with pytest.raises(Unproved, match="no offset sync of the reverse flow proves"):
        position_on_copy(12, None, [], 99)
    state = FailbackState(dict(FLOW))
    state.reverse_adopted = True
    assert FailbackState.from_json(state.to_json(), "x").reverse_adopted


class FakeFleet:
    """A Connect fleet's REST API as the failback uses it: connectors with a state, config and offsets."""

    url = "http://fleet"

    def __init__(self, **connectors: str) -> None:
        self.state = dict(connectors)
        self.calls: list[str] = []

    async def exists(self, name: str) -> bool:
        return name in self.state

    async def config(self, name: str) -> dict[str, str]:
        return {"source.cluster.alias": "A", "target.cluster.alias": "B", "topics": "orders"}

    async def create(self, name: str, config: dict[str, str], initial_state: str) -> None:
        self.calls.append(f"create {name} {config['source.cluster.alias']}->{config['target.cluster.alias']}")
        self.state[name] = initial_state

    async def states(self, name: str) -> tuple[str, list[str]]:
        return self.state[name], []

    async def wait_state(self, name: str, wanted: str, timeout_s: float) -> None:
        assert self.state[name] == wanted

    async def alter_offsets(self, name: str, body: dict[str, object]) -> None:
        offsets = body["offsets"]
        assert isinstance(offsets, list)
        self.calls.append(f"offsets {name} {len(offsets)}")

    async def stop(self, name: str) -> None:
        self.calls.append(f"stop {name}")
        self.state[name] = "STOPPED"

    async def resume(self, name: str) -> None:
        self.calls.append(f"resume {name}")
        self.state[name] = "RUNNING"


def _run(reverse: Any, state: FailbackState) -> tuple[FailbackRun, list[bool]]:
    """A run of the failback of A->B with ``reverse`` as the reverse fleet (its connector ``back``)."""
    flow = FailoverFlow("A", "B", {"bootstrap.servers": "a"}, {"bootstrap.servers": "b"})
    saved: list[bool] = []
    forward: Any = FakeFleet(fwd="STOPPED")
    run = FailbackRun(
        flow, state, forward, "fwd", reverse, "back", [], 1.0, save=lambda s: saved.append(s.reverse_created)
    )
    return run, saved


async def test_the_reverse_connector_is_created_stopped_pointed_then_resumed_and_never_taken_over() -> None:
    state = FailbackState(dict(FLOW))
    state.measured([], [], {}, {("orders", 0): 30, ("orders", 1): 0})
    fleet = FakeFleet()
    run, saved = _run(fleet, state)
    await run._start_reverse()
    assert saved == [True]  # recorded before the creation
    assert fleet.calls == ["create back B->A", "offsets back 2", "resume back"]
    # a run resumed after a crash between the creation and the offsets: pointed again, while STOPPED
    fleet.state["back"], fleet.calls = "STOPPED", []
    await run._start_reverse()
    assert fleet.calls == ["offsets back 2", "resume back"]
    # a connector of that name this failback did not create: refused, untouched
    left = FakeFleet(back="STOPPED")
    run, _ = _run(left, FailbackState(dict(FLOW)))
    with pytest.raises(FailoverRefused, match="that this failback did not create"):
        await run._start_reverse()
    assert left.calls == []
    # an adopted one (named by the operator, running B->A): only stopped and resumed
    adopted = FailbackState(dict(FLOW))
    adopted.reverse_adopted = True
    running = FakeFleet(back="RUNNING")
    run, _ = _run(running, adopted)
    await run._start_reverse()
    assert running.calls == ["stop back", "resume back"]
