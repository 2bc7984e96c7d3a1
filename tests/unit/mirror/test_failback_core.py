"""The pure core of ``pyconnect failback``: copy ends, positions back on the source, the reverse flow's
config, the group decisions and the state file, without Kafka."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mirror.failback.group_return import plan_return
from connectors.mirror.failback.ledger import MirrorEnd, OrphanRange, mirror_end
from connectors.mirror.failback.positions import Between, SourcePosition, Unproved, position_on_source
from connectors.mirror.failback.reverse_flow import copy_starts, reverse_source_config
from connectors.mirror.failback.state import FailbackState
from connectors.mirror.offsets.failover_state import FailoverState, StateError
from connectors.mirror.offsets.translation import OffsetSyncStore
from pyconnect.kafka.group_view import GroupView
from tests.unit.mirror.settled_positions import resolved

FLOW = {"source": "A", "target": "B", "checkpoints_topic": "A.checkpoints.internal"}


def test_a_sync_at_or_past_the_committed_offset_proves_the_copy_end() -> None:
    assert mirror_end("t", 0, (41, 90), 41, 0) == MirrorEnd("t", 0, 41, 91, "offset syncs")
    # acknowledged and synced, the offset flush not yet done: the sync is the truth
    assert mirror_end("t", 0, (45, 94), 41, 0) == MirrorEnd("t", 0, 45, 95, "offset syncs")
    assert mirror_end("t", 0, (45, 94), None, 0).proved


def test_a_connector_offset_past_every_sync_is_not_proof() -> None:
    end = mirror_end("t", 1, (10, 20), 15, 0)
    assert (end.last_copied, end.target_end, end.evidence, end.proved) == (15, 26, "connector offsets", False)
    assert not mirror_end("t", 1, None, 15, 3).proved


def test_nothing_copied_starts_the_copy_back_at_the_targets_log_start() -> None:
    assert mirror_end("t", 2, None, None, 7) == MirrorEnd("t", 2, -1, 7, "nothing copied")


FORWARD = [(0, 100, 9), (10, 111, 19)]  # A 0..9 -> B 100..109, marker at 110, A 10..19 -> B 111..120
REVERSE = [(122, 30, 126)]  # B 122..126 -> A 30..34 (B 121 is the forward flow's last marker)
ON_B = [*range(100, 110), *range(111, 121), *range(122, 127)]
ON_A = [*range(0, 20), *range(20, 25), *range(30, 35)]


@pytest.mark.parametrize(
    ("committed", "expected", "evidence"),
    [
        (100, 0, "forward run"),
        (105, 5, "forward run"),
        (110, 10, "forward runs"),  # a marker on B between two runs: the next record is A's 10
        (120, 19, "forward run"),
        (121, 30, "reverse run"),  # the copy's end (a marker): the first record written on B
        (122, 30, "reverse run"),
        (124, 32, "reverse run"),
        (127, 35, "reverse run"),  # read everything copied back
    ],
)
def test_positions_follow_the_next_record(committed: int, expected: int, evidence: str) -> None:
    found = resolved(position_on_source(committed, 121, FORWARD, REVERSE, 25), ON_B, ON_A)
    assert (found.offset, found.evidence) == (expected, evidence)


def test_between_two_runs_the_records_are_counted_not_the_offsets() -> None:
    """B 10 11 12 (marker 13) 14 15 16 copy A 50..55, synced only at B 10 and B 16 (the deltas differ: two
    runs, (50, 10, 50) and (55, 16, 55)). A group at B 15 reads A 54 next, not A 55 (the run's first) nor
    A 55 by arithmetic from B 10: the marker at 13 shifted every offset after it."""
    forward = [(50, 10, 50), (55, 16, 55)]
    on_b, on_a = [10, 11, 12, 14, 15, 16], list(range(50, 56))
    found = position_on_source(15, 17, forward, [], 56)
    assert found == Between(15, 10, 50, 55, "forward runs")
    assert resolved(found, on_b, on_a) == SourcePosition(54, "forward runs")
    assert resolved(position_on_source(11, 17, forward, [], 56), on_b, on_a).offset == 51
    assert resolved(position_on_source(13, 17, forward, [], 56), on_b, on_a).offset == 53
    assert resolved(position_on_source(14, 17, forward, [], 56), on_b, on_a).offset == 53
    # reverse: B 30 31 32 33 copied to A 60 61 (marker 62) 63 64, synced at B 30 and B 33
    reverse = [(30, 60, 30), (33, 64, 33)]
    back = [60, 61, 63, 64]
    assert resolved(position_on_source(32, 30, [], reverse, 60), [30, 31, 32, 33], back).offset == 63
    assert resolved(position_on_source(31, 30, [], reverse, 60), [30, 31, 32, 33], back).offset == 61


def test_without_records_written_on_the_target_a_group_returns_after_the_orphans() -> None:
    assert position_on_source(121, 121, FORWARD, [], 25).offset == 25
    assert position_on_source(121, 121, FORWARD, [], 25).evidence == "reverse start"


def test_an_offset_no_forward_sync_covers_is_unproved() -> None:
    with pytest.raises(Unproved, match="no forward offset sync covers offset 50"):
        position_on_source(50, 121, FORWARD, REVERSE, 25)


@settings(max_examples=300, deadline=None)
@given(
    source_holes=st.lists(st.booleans(), min_size=1, max_size=40),
    target_gaps=st.lists(st.integers(0, 2), min_size=40, max_size=40),
    synced=st.lists(st.booleans(), min_size=40, max_size=40),
    copied=st.integers(0, 40),
    written=st.integers(0, 15),
    back_gaps=st.lists(st.integers(0, 1), min_size=15, max_size=15),
    back_synced=st.lists(st.booleans(), min_size=15, max_size=15),
    orphans=st.integers(0, 5),
)
def test_every_position_is_the_next_unread_record(
    source_holes: list[bool],
    target_gaps: list[int],
    synced: list[bool],
    copied: int,
    written: int,
    back_gaps: list[int],
    back_synced: list[bool],
    orphans: int,
) -> None:
    """A source partition with holes (markers, compaction) copied to a target with gaps (EOS markers), and
    back again to a source with gaps, each with the syncs our writer writes (a task's first record, the
    records on both sides of an upstream hole, the last record) and any others: from any offset a group
    committed on the target, it resumes on the source where the next record it reads is the one it would
    have read next on the target (at that record's offset, or before it with no record in between)."""
    a_offsets, offset = [], 0
    for hole in source_holes:
        offset += 2 if hole else 1
        a_offsets.append(offset)
    a_copied = a_offsets[: min(copied, len(a_offsets))]
    b_offsets, b = [], -1
    forward = OffsetSyncStore("exact")
    forward.start(False)
    for i, a in enumerate(a_copied):
        b += 1 + (target_gaps[i] if i else 0)  # the target's log starts with the first copy
        b_offsets.append(b)
        hole_next = i + 1 < len(a_copied) and a_copied[i + 1] != a + 1
        hole_before = i > 0 and a_copied[i - 1] != a - 1
        if i == 0 or i == len(a_copied) - 1 or hole_next or hole_before or synced[i]:
            forward.add("t", 0, a, b)
    forward.mark_read_to_end()
    mirror = (b_offsets[-1] + 1) if b_offsets else 0
    a_end = (a_offsets[-1] + 1 if a_offsets else 0) + orphans
    native = [mirror + 1 + k for k in range(written)]  # records written on B after the failover
    back, a = [], a_end - 1
    reverse = OffsetSyncStore("exact")
    reverse.start(False)
    for k, n in enumerate(native):
        a += 1 + (back_gaps[k] if k else 0)  # EOS markers on A among the copies back
        back.append(a)
        if k in (0, len(native) - 1) or back_synced[k]:
            reverse.add("t", 0, n, a)
    reverse.mark_read_to_end()
    on_source = [*a_offsets, *range(a_offsets[-1] + 1, a_end), *back]
    on_target = [*b_offsets, *native]
    everything = [*zip(b_offsets, a_copied, strict=True), *zip(native, back, strict=True)]
    for committed in range(0, (native[-1] if native else mirror) + 2):
        following = [a for b, a in everything if b >= committed]
        if following:
            expected = following[0]
        elif native:
            expected = back[-1] + 1
        else:
            expected = a_end
        found = resolved(
            position_on_source(committed, mirror, forward.runs(("t", 0)), reverse.runs(("t", 0)), a_end),
            on_target,
            sorted(on_source),
        )
        between = [a for a in on_source if found.offset <= a < expected]
        assert found.offset <= expected and not between, (committed, found, expected)


def test_the_reverse_config_swaps_the_sides_and_keeps_the_rest() -> None:
    forward = {
        "name": "mm2-source",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": "a:9092",
        "target.cluster.bootstrap.servers": "b:9092",
        "target.cluster.sasl.jaas.config": "${file:/s:b.jaas}",
        "source.consumer.isolation.level": "read_committed",
        "topics": "orders",
        "offset-syncs.topic.location": "target",
    }
    assert reverse_source_config(forward) == {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "target.cluster.alias": "A",
        "source.cluster.alias": "B",
        "target.cluster.bootstrap.servers": "a:9092",
        "source.cluster.bootstrap.servers": "b:9092",
        "source.cluster.sasl.jaas.config": "${file:/s:b.jaas}",
        "target.consumer.isolation.level": "read_committed",
        "topics": "orders",
        "offset-syncs.topic.location": "target",
    }


def test_copy_starts_are_connect_offsets_of_the_record_before() -> None:
    assert copy_starts("B", {("orders", 1): 0, ("orders", 0): 42}) == {
        "offsets": [
            {"partition": {"cluster": "B", "partition": 0, "topic": "orders"}, "offset": {"offset": 41}},
            {"partition": {"cluster": "B", "partition": 1, "topic": "orders"}, "offset": None},
        ]
    }


IDLE = GroupView("g", "classic", "Empty")
ACTIVE = GroupView("g", "classic", "Stable", 1)
ENDS = {("orders", 0): ("orders", MirrorEnd("orders", 0, 19, 121, "offset syncs"))}


def _plan(on_b: GroupView, on_a: GroupView, a_offset: int, *, allow_rewind: bool = False):  # type: ignore[no-untyped-def]
    return plan_return(
        "g",
        (on_b, {("orders", 0): 124, ("other", 0): 3}),
        (on_a, {("orders", 0): a_offset}),
        ENDS,
        {("orders", 0): FORWARD},
        {("orders", 0): REVERSE},
        {("orders", 0): 25},
        allow_rewind=allow_rewind,
    )


def test_a_group_returns_where_it_stopped_and_names_what_this_flow_does_not_carry() -> None:
    planned = _plan(IDLE, IDLE, 12)
    assert planned.refused is None and planned.offsets() == {("orders", 0): 32}
    assert planned.others == ("other-0",)


def test_active_groups_and_rewinds_are_refused() -> None:
    assert "has members on the cluster it failed over to" in str(_plan(ACTIVE, IDLE, 12).refused)
    assert "is active on the original cluster" in str(_plan(IDLE, ACTIVE, 12).refused)
    assert "would move back" in str(_plan(IDLE, IDLE, 40).refused)
    assert _plan(IDLE, IDLE, 40, allow_rewind=True).refused is None


def test_the_state_file_round_trips_and_refuses_another_flow(tmp_path: Path) -> None:
    state = FailbackState(dict(FLOW))
    state.measured(
        [MirrorEnd("orders", 0, 19, 121, "offset syncs")],
        [OrphanRange("orders", 0, 20, 24, 5, 50)],
        {("orders", 0): 25},
    )
    state.complete("forward-stopped")
    state.complete("measured")
    state.returns = FailoverState(
        {"source": "B", "target": "A", "checkpoints_topic": "B.checkpoints.internal"}
    )
    state.returns.plan("g", {("orders", 0): 32}, {})
    path = tmp_path / "failback.json"
    state.save(path)
    loaded = FailbackState.load(path, dict(FLOW))
    assert loaded.to_json() == state.to_json() and loaded.next_step() == "quarantined"
    with pytest.raises(StateError, match="is of flow A->B"):
        FailbackState.load(path, {**FLOW, "target": "C"})
    path.write_text('{"state_version": 1, "flow": {}, "groups": {}}')
    with pytest.raises(StateError, match="not a failback state file"):
        FailbackState.load(path, dict(FLOW))


def test_the_copies_back_get_forward_syncs_of_their_originals() -> None:
    from connectors.mirror.failback.return_syncs import return_syncs

    syncs = return_syncs(
        {("orders", 0): ("orders", [(122, 30, 126), (130, 36, 130)]), ("orders", 1): ("orders", [])}
    )
    assert [(s.topic, s.partition, s.upstream_offset, s.downstream_offset) for s in syncs] == [
        ("orders", 0, 30, 122),
        ("orders", 0, 34, 126),
        ("orders", 0, 36, 130),
    ]
    store = OffsetSyncStore("exact")
    store.start(False)
    store.add("orders", 0, 19, 120)  # the forward copy's last record
    store.handle_syncs(syncs)
    store.mark_read_to_end()
    assert store.runs(("orders", 0))[-2:] == [(30, 122, 34), (36, 130, 36)]


def test_a_cutover_state_rolls_back_its_fence_and_round_trips(tmp_path: Path) -> None:
    from connectors.mirror.cutover.fence import fence_bindings
    from connectors.mirror.cutover.state import CutoverState

    state = CutoverState(dict(FLOW))
    for step in ("lag-checked", "fenced", "quiet"):
        state.complete(step, 1.0)
    state.fence, state.fenced_topics, state.source_ends = ["User:app"], ["orders"], {"orders:0": 42}
    path = tmp_path / "cutover.json"
    state.save(path)
    assert CutoverState.load(path, dict(FLOW)).to_json() == state.to_json()
    state.roll_back()
    assert (state.done, state.fence, state.source_ends) == (["lag-checked"], [], {})
    (binding,) = fence_bindings(["User:app"], ["orders"])
    assert (binding.principal, binding.name, binding.operation.name, binding.permission_type.name) == (
        "User:app",
        "orders",
        "WRITE",
        "DENY",
    )
