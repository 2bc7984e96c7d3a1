"""The failover plan of a group, its report and the refusal naming active members (no Kafka)."""

from __future__ import annotations

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.failover_execute import GroupOutcome, refusal
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_plan import FlowPlan, plan_group, queries, stretches
from connectors.mirror.offsets.failover_report import report_json, report_text
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.records import TopicPartition
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_view import GroupView

FLOW = FailoverFlow(
    "A",
    "B",
    {"bootstrap.servers": "a:9092"},
    {"bootstrap.servers": "b:9092"},
    {"replication.policy.class": "IdentityReplicationPolicy"},
    "target",
    100,
    "connector mm2-checkpoint",
)


def store(syncs: list[tuple[int, int]]) -> OffsetSyncStore:
    found = OffsetSyncStore("exact")
    found.start(must_read_to_end=False)
    for up, down in syncs:
        found.add("orders", 0, up, down)
    found.mark_read_to_end()
    return found


def test_a_group_inside_a_transaction_is_placed_by_the_target_records() -> None:
    # exactly-once copy: transactions of 5 records, a marker after each; syncs of each transaction's end
    syncs = [(0, 0), (4, 4), (9, 10), (14, 16)]
    checkpoints = {TopicPartition("orders", 0): Checkpoint("g", "orders", 0, 7, 5, "m")}
    found, missing = queries(FLOW, checkpoints, None)
    assert [(q.topic, q.source_offset, q.source_offset_from) for q in found] == [("orders", 7, "checkpoint")]
    assert missing == []
    index = store(syncs)
    wanted = stretches(FLOW, found, index, {("orders", 0): syncs})
    ((_, stretch),) = wanted.values()
    assert stretch == ("orders", 0, 0, 10)
    records = [1, 2, 3, 4, 6, 7, 8, 9]  # 5 is the first transaction's marker
    proofs = {key: (segment, records) for key, (segment, _) in wanted.items()}
    view = ("Empty", "classic", ())
    plan = plan_group(FLOW, "g", view, found, missing, {("orders", 0): CommittedOffset(5)}, index, proofs)
    (row,) = plan.partitions
    assert (row.target_offset, row.expected_reread, row.expected_skipped, row.basis, row.action) == (
        8,
        0,
        0,
        "target records",
        "commit",
    )
    assert plan.to_commit == {("orders", 0): CommittedOffset(8, "m")}
    unproven = plan_group(
        FLOW, "g", view, found, missing, {}, index, {key: (s, None) for key, (s, _) in wanted.items()}
    )
    fallback = unproven.partitions[0]
    assert (
        fallback.basis == "offset syncs" and fallback.target_offset is not None and fallback.target_offset < 8
    )


def test_partitions_committed_without_a_checkpoint_are_listed_and_left_alone() -> None:
    checkpoints = {TopicPartition("orders", 0): Checkpoint("g", "orders", 0, 4, 4, "")}
    source = {("orders", 0): CommittedOffset(4), ("orders", 1): CommittedOffset(9)}
    found, missing = queries(FLOW, checkpoints, source)
    plan = plan_group(
        FLOW, "g", ("Stable", "consumer", ("app-1@10.0.0.7 (m-1)",)), found, missing, {}, None, {}
    )
    assert [(r.partition, r.action, r.basis) for r in plan.partitions] == [
        (0, "commit", "checkpoint"),
        (1, "no-checkpoint", "none"),
    ]
    assert not plan.idle and plan.expected_skipped == 0 and plan.expected_reread is None
    flow_plan = FlowPlan(FLOW, True, False, (plan,), ("offset syncs not read",))
    document = report_json("plan", flow_plan)
    assert document["groups"][0]["status"] == "active"
    assert document["groups"][0]["target_members"] == ["app-1@10.0.0.7 (m-1)"]
    assert document["flow"]["offset_syncs_topic"] == "mm2-offset-syncs.A.internal"
    text = report_text(flow_plan)
    assert "Executing now would be refused" in text and "Note: offset syncs not read" in text
    done = report_json("execute", flow_plan, [GroupOutcome("g", 1, 0, "verified", False)], "state.json")
    assert (done["groups"][0]["status"], done["groups"][0]["committed"], done["state_file"]) == (
        "verified",
        1,
        "state.json",
    )


def test_the_refusal_names_each_active_group_and_its_members() -> None:
    views = {
        "g1": GroupView(
            "g1", "classic", "Stable", 2, holders=("app-1@10.0.0.7 (c-1)", "app-2@10.0.0.8 (c-2)")
        ),
        "g2": GroupView("g2", "consumer", "Reconciling", 1, holders=("app-3@10.0.0.9 (m)",)),
    }
    line = refusal(views, "B")
    assert line.startswith(
        "refusing to commit: group g1 is Stable (classic protocol, 2 members) on cluster B: "
    )
    assert "app-2@10.0.0.8 (c-2)" in line and "group g2 is Reconciling (consumer protocol, 1 member)" in line
    assert "\n" not in line and line.endswith("(nothing was committed)")
