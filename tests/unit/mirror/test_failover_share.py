"""Share groups in the failover command without Kafka: the ShareGroupDescribe codec, the view of a share
group, its plan with the source read and with the source down, the refusal, and the report."""

from __future__ import annotations

import pytest

from connectors.mirror.offsets.failover_calls import FailoverError, FailoverRefused, UnknownGroup
from connectors.mirror.offsets.failover_execute import refusal
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_plan import FlowPlan
from connectors.mirror.offsets.failover_report import report_json, report_text
from connectors.mirror.offsets.failover_share import plan_share_group, share_outcome
from connectors.mirror.offsets.translation import OffsetSyncStore
from pyconnect.kafka.group_view import DEAD, UNKNOWN, GroupView, share_view
from pyconnect.protocol.flexible import FlexibleWriter
from pyconnect.protocol.primitives import ProtocolError
from pyconnect.protocol.share_group_describe import (
    ShareGroupDescribed,
    ShareMember,
    decode_response,
    encode_request,
)

FLOW = FailoverFlow("A", "B", {"bootstrap.servers": "a:9092"}, {"bootstrap.servers": "b:9092"})
IDLE = GroupView("s", "share", "Empty")


def store(partition_syncs: dict[tuple[str, int], list[tuple[int, int]]]) -> OffsetSyncStore:
    found = OffsetSyncStore("exact")
    found.start(must_read_to_end=False)
    for (topic, partition), syncs in partition_syncs.items():
        for up, down in syncs:
            found.add(topic, partition, up, down)
    found.mark_read_to_end()
    return found


def _member(w: FlexibleWriter, m: tuple[str, str, str]) -> None:
    w.string(m[0]).nullable_string(None).int32(3).string(m[1]).string(m[2])
    w.array(["orders"], FlexibleWriter.string)
    # assignment: one topic (uuid, name, partitions)
    w.uvarint(2).int64(0).int64(7).string("orders").array([0, 1], FlexibleWriter.int32).no_tags()
    w.no_tags().no_tags()


def describe_answer(groups: list[tuple[int, str, str, list[tuple[str, str, str]]]]) -> bytes:
    def group(w: FlexibleWriter, g: tuple[int, str, str, list[tuple[str, str, str]]]) -> None:
        code, group_id, state, members = g
        w.int16(code).nullable_string("not a share group" if code else None).string(group_id).string(state)
        w.int32(5).int32(5).string("simple").array(members, _member).int32(-(2**31)).no_tags()

    return FlexibleWriter().int32(0).array(groups, group).no_tags().to_bytes()


def test_the_describe_request_names_the_groups_and_asks_no_operations() -> None:
    body = encode_request(["g1", "g2"])
    assert body == b"\x03\x03g1\x03g2\x00\x00"


def test_the_describe_answer_gives_state_and_members_and_a_view_naming_them() -> None:
    data = describe_answer(
        [
            (0, "s", "Stable", [("m-1", "reader", "/10.0.0.7")]),
            (0, "idle", "Empty", []),
            (69, "nope", "Dead", []),
            (15, "moving", "", []),
        ]
    )
    throttle, groups = decode_response(data)
    assert throttle == 0
    assert groups[0] == ShareGroupDescribed(
        "s", 0, None, "Stable", (ShareMember("m-1", "reader", "/10.0.0.7", ("orders",)),)
    )
    views = [share_view(g) for g in groups]
    assert views[0].protocol == "share" and views[0].state == "Stable" and not views[0].idle
    assert views[0].holders == ("reader@10.0.0.7 (m-1)",)
    assert "share protocol, 1 member" in views[0].describe()
    assert views[1].idle and views[1].state == "Empty"
    assert views[2].state == DEAD and views[2].idle
    assert views[3].state == UNKNOWN and not views[3].idle and "error code 15" in (views[3].error or "")


@pytest.mark.parametrize("cut", [1, 5, 20])
def test_a_truncated_describe_answer_is_a_protocol_error(cut: int) -> None:
    data = describe_answer([(0, "s", "Stable", [("m-1", "reader", "h")])])
    with pytest.raises(ProtocolError):
        decode_response(data[:-cut])


def test_with_the_source_read_each_start_offset_is_translated_exactly_and_compared() -> None:
    syncs = store({("orders", 0): [(0, 0), (100, 100)], ("orders", 1): [(0, 0), (50, 50)]})
    plan = plan_share_group(
        FLOW,
        "s",
        IDLE,
        {("orders", 0): 100, ("orders", 1): 50, ("unmirrored", 0): 9},
        {("A.orders", 0): 40, ("A.orders", 1): 70, ("local", 0): 3},
        syncs,
        allow_rewind=False,
    )
    rows = {(p.target_topic, p.partition): p for p in plan.partitions}
    assert set(rows) == {("A.orders", 0), ("A.orders", 1)}  # a partition the flow does not copy is left out
    assert (rows[("A.orders", 0)].target_offset, rows[("A.orders", 0)].action) == (100, "commit")
    assert rows[("A.orders", 0)].expected_reread == 0 and rows[("A.orders", 0)].expected_skipped == 0
    assert rows[("A.orders", 0)].basis == "offset syncs" and rows[("A.orders", 0)].source_offset == 100
    # the target is ahead of the translation: left alone unless a rewind is allowed
    assert (rows[("A.orders", 1)].target_offset, rows[("A.orders", 1)].action) == (50, "skip-rewind")
    assert plan.targets == {("A.orders", 0): 100}
    assert plan.protocol == "share" and plan.idle
    rewound = plan_share_group(
        FLOW, "s", IDLE, {("orders", 1): 50}, {("A.orders", 1): 70}, syncs, allow_rewind=True
    )
    assert rewound.partitions[0].action == "rewind" and rewound.to_commit == {
        ("A.orders", 1): rewound.to_commit[("A.orders", 1)]
    }


def test_a_start_offset_the_syncs_cannot_place_is_not_committed() -> None:
    syncs = store({("orders", 0): [(50, 50)]})
    plan = plan_share_group(FLOW, "s", IDLE, {("orders", 0): 10}, {}, syncs, allow_rewind=False)
    assert [(p.action, p.target_offset) for p in plan.partitions] == [("no-translation", None)]
    assert plan.targets == {} and plan.to_commit == {}


def test_with_the_source_down_the_target_keeps_what_the_continuous_sync_set() -> None:
    plan = plan_share_group(
        FLOW,
        "s",
        IDLE,
        None,
        {("A.orders", 0): 120, ("A.orders", 1): 7, ("local", 0): 3},
        None,
        allow_rewind=False,
    )
    assert [(p.topic, p.target_topic, p.target_offset, p.action, p.basis) for p in plan.partitions] == [
        ("orders", "A.orders", 120, "keep", "share sync"),
        ("orders", "A.orders", 7, "keep", "share sync"),
    ]
    assert plan.partitions[0].source_offset_from == "synced" and plan.expected_reread is None
    assert plan.targets == {("A.orders", 0): 120, ("A.orders", 1): 7} and plan.to_commit == {}
    with pytest.raises(UnknownGroup, match="continuous group offset sync never set them"):
        plan_share_group(FLOW, "s", IDLE, None, {}, None, allow_rewind=False)


def test_a_share_group_with_members_is_refused_and_named() -> None:
    busy = GroupView("s", "share", "Stable", 1, holders=("reader@h (m-1)",))
    assert "group s is Stable (share protocol, 1 member) on cluster B: reader@h (m-1)" in refusal(
        {"s": busy}, "B"
    )
    with pytest.raises(FailoverRefused, match="share group s has members on cluster B"):
        share_outcome({("", -1): 68}, "s", "B")
    with pytest.raises(FailoverError, match="error codes \\[3\\]"):
        share_outcome({("A.orders", 0): 3}, "s", "B")
    share_outcome({}, "s", "B")


def test_the_report_names_a_share_group_and_its_rows() -> None:
    syncs = store({("orders", 0): [(0, 0), (100, 100)]})
    plan = plan_share_group(FLOW, "s", IDLE, {("orders", 0): 100}, {}, syncs, allow_rewind=False)
    flow_plan = FlowPlan(FLOW, True, True, (plan,))
    text = report_text(flow_plan)
    assert "Share group s on B: Empty" in text and "offset syncs" in text and "commit" in text
    document = report_json("plan", flow_plan)
    group = document["groups"][0]
    assert group["target_protocol"] == "share" and group["status"] == "planned"
    assert group["partitions"][0]["target_offset"] == 100 and group["expected_reread"] == 0
