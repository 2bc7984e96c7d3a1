"""Conditions (pyconnect.conditions) and how the mirror status view follows them
(pyconnect.mirror_status.core, flow_conditions): no IN_SYNC while a critical condition lasts, no alarm
for an idle healthy flow, heartbeat age end to end, lag in offsets and in time. Fakes and a manual clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.metrics import MirrorSourceMetrics
from connectors.mirror.source import MirrorSourceConnector
from pyconnect.conditions import (
    CRITICAL,
    WARNING,
    Condition,
    ConditionBoard,
    ConditionRegistry,
    markdown_table,
)
from pyconnect.metrics.registry import MetricsHub
from pyconnect.mirror_status.core import (
    HEARTBEATS_MAX_AGE_CONFIG,
    IN_SYNC,
    STALLED,
    Progress,
    hub_progress,
    mirror_status,
)
from pyconnect.mirror_status.text import render
from tests.unit.mirror_status.test_mirror_status import NOW, START, config, partition, view

DOCS = Path(__file__).resolve().parents[3] / "docs" / "conditions.md"


class ManualClock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


def flow_of(progress: Progress, *views: Any, **kw: Any) -> dict[str, Any]:
    (found,) = mirror_status(list(views) or [view()], progress, now_ms=NOW, **kw)["flows"]
    return found


def unreachable(connector: str = "mirror", since: int = NOW - 20_000) -> Condition:
    return Condition(
        "SOURCE_UNREACHABLE",
        "source cluster A (127.0.0.1:9) has answered no fetch of client 'c' for 15 s or more",
        since,
        cluster="A",
        client="c",
        connector=connector,
        task=0,
    )


# -- the board ----------------------------------------------------------------------------------------


def test_a_board_keeps_since_reports_each_change_once_and_orders_critical_first() -> None:
    clock = ManualClock(1_000)
    changes: list[str | None] = []
    board = ConditionBoard("m", 0, clock_ms=clock, on_change=lambda: changes.append(board.trace()))
    assert board.set("GROUP_SYNC_BLOCKED", "group g is active on B", subject="g", cluster="B")
    clock.now_ms = 2_000
    assert board.set("ACL_DENIED", "READ on topic t refused", subject="t", cluster="A")
    clock.now_ms = 3_000
    assert not board.set("ACL_DENIED", "READ on topic t refused", subject="t", cluster="A")
    assert board.set("ACL_DENIED", "READ on topic t refused for User:bob", subject="t", cluster="A")
    (acl,) = board.active("ACL_DENIED")
    assert acl.since_ms == 2_000 and (acl.connector, acl.task) == ("m", 0)
    trace = board.trace()
    assert trace is not None
    assert trace.splitlines()[0] == "ACL_DENIED: READ on topic t refused for User:bob"  # critical first
    assert "condition GROUP_SYNC_BLOCKED (warning; cluster B, subject g" in trace
    assert len(changes) == 3
    assert board.clear("ACL_DENIED") and not board.clear("ACL_DENIED")
    assert board.trace() is not None and board.trace().startswith("GROUP_SYNC_BLOCKED: ")  # type: ignore[union-attr]
    board.clear_all()
    assert board.trace() is None and changes[-1] is None


def test_a_registry_gathers_every_board_until_removed() -> None:
    registry = ConditionRegistry(ManualClock(5))
    first, second = registry.board("m", 0), registry.board("m", 1)
    first.set("TOPIC_DELETED", "topic t was deleted", subject="t")
    second.set("TOPIC_DELETED", "topic u was deleted", subject="u")
    assert sorted((c.task, c.subject) for c in registry.snapshot()) == [(0, "t"), (1, "u")]
    registry.remove(first)
    assert [c.subject for c in registry.snapshot()] == ["u"]


def test_conditions_travel_between_workers_as_json_and_bad_ones_are_refused() -> None:
    progress = Progress([partition()], [], [unreachable()])
    again = Progress.from_json(progress.to_json())
    assert again.conditions == progress.conditions
    for bad in (
        {"code": 1, "message": "m", "since_ms": 1},
        {"code": "X", "message": "m", "since_ms": "soon"},
        {"code": "X", "message": "m", "since_ms": 1, "task": True},
        {"code": "X", "message": "m", "since_ms": 1, "cluster": 3},
        "SOURCE_UNREACHABLE",
    ):
        with pytest.raises(ValueError):
            Progress.from_json({"conditions": [bad]})


# -- the flow follows the conditions ---------------------------------------------------------------------


def test_an_idle_flow_whose_source_answers_stays_in_sync() -> None:
    idle = partition(
        latency_avg_ms=None, newest_timestamp_ms=NOW - 3_600_000, last_replicated_ms=NOW - 3_600_000
    )
    found = flow_of(Progress([idle]))
    assert found["status"] == IN_SYNC and found["conditions"] == [] and found["reasons"] == []


def test_an_unreachable_source_stalls_an_idle_flow() -> None:
    """The failure of the issue: the source dies, nothing new arrives, every topic turns INACTIVE; the
    task's condition alone must take the flow out of IN_SYNC."""
    idle = partition(latency_avg_ms=None, newest_timestamp_ms=NOW - 90_000, last_replicated_ms=NOW - 90_000)
    found = flow_of(Progress([idle], [], [unreachable()]))
    assert found["status"] == STALLED and found["in_sync"] is False
    (condition,) = found["conditions"]
    assert condition["code"] == "SOURCE_UNREACHABLE" and condition["severity"] == CRITICAL
    assert (condition["cluster"], condition["connector"], condition["task"]) == ("A", "mirror", 0)
    assert found["reasons"] == [f"SOURCE_UNREACHABLE: {unreachable().message}"]
    text = render(mirror_status([view()], Progress([idle], [], [unreachable()]), now_ms=NOW))
    assert "A->B  STALLED" in text and "SOURCE_UNREACHABLE" in text and "cluster A" in text


def test_conditions_of_another_flows_connector_do_not_count() -> None:
    found = flow_of(Progress([partition()], [], [unreachable(connector="other")]))
    assert found["status"] == IN_SYNC and found["conditions"] == []


def test_a_warning_condition_is_shown_but_keeps_the_flow_in_sync() -> None:
    blocked = Condition(
        "GROUP_SYNC_BLOCKED",
        "group g is active on B",
        NOW,
        cluster="B",
        subject="g",
        connector="mirror",
        task=0,
    )
    found = flow_of(Progress([partition()], [], [blocked]))
    assert found["status"] == IN_SYNC and found["warnings"] == ["GROUP_SYNC_BLOCKED: group g is active on B"]
    assert [c["severity"] for c in found["conditions"]] == [WARNING]


def test_records_waiting_with_none_copied_for_the_target_latency_stall_the_flow() -> None:
    stuck = partition(
        replicated_offset=9, end_offset=500, last_replicated_ms=NOW - 31_000, latency_avg_ms=40.0
    )
    found = flow_of(Progress([stuck]))
    assert found["status"] == STALLED
    (condition,) = found["conditions"]
    assert condition["code"] == "REPLICATION_STALLED" and condition["subject"] == "A.t"
    assert condition["message"].startswith("490 records of A.t wait (partitions 0)")
    moving = partition(
        replicated_offset=9, end_offset=500, last_replicated_ms=NOW - 2_000, latency_avg_ms=40.0
    )
    assert flow_of(Progress([moving]))["status"] == IN_SYNC


def test_a_failed_task_is_a_condition_too() -> None:
    found = flow_of(Progress([partition()]), view("mirror", None, ("FAILED", "w1:8083")))
    assert found["status"] == "FAILED"
    assert [c["code"] for c in found["conditions"]] == ["TASK_FAILED"]
    assert found["reasons"] == ["task mirror-0 is FAILED: FAILED trace"]


def test_a_worker_that_does_not_answer_is_a_condition_and_the_flow_unknown() -> None:
    found = flow_of(Progress([]), unreachable={"w1:8083": "timed out"})
    assert found["status"] == "UNKNOWN"
    assert [(c["code"], c["subject"]) for c in found["conditions"]] == [("WORKER_UNREACHABLE", "w1:8083")]


# -- heartbeats ----------------------------------------------------------------------------------------


def heartbeats(newest: int | None, topic: str = "A.heartbeats") -> Any:
    return partition(
        topic, latency_avg_ms=None, newest_timestamp_ms=newest, replicated_offset=99, end_offset=100
    )


def test_the_age_of_the_newest_heartbeat_that_crossed_the_flow_is_shown() -> None:
    found = flow_of(Progress([heartbeats(NOW - 1_200), partition()]))
    assert found["heartbeat_age_ms"] == 1_200 and found["status"] == IN_SYNC


def test_heartbeats_older_than_the_bound_stall_even_an_idle_flow() -> None:
    idle = partition(latency_avg_ms=None, newest_timestamp_ms=NOW - 600_000)
    cfg = config(**{HEARTBEATS_MAX_AGE_CONFIG: "10000"})
    found = flow_of(Progress([heartbeats(NOW - 12_000), idle]), view("mirror", cfg))
    assert found["status"] == STALLED and found["heartbeats_max_age_ms"] == 10_000
    (condition,) = found["conditions"]
    assert condition["code"] == "HEARTBEATS_MISSING" and condition["cluster"] == "A"
    assert condition["message"] == "the newest heartbeat copied from A is 12 s old (bound 10 s)"
    assert condition["since_ms"] == NOW - 2_000  # when the bound was crossed


HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"


def a_to_b(progress: Progress, *views: Any) -> dict[str, Any]:
    flows = mirror_status(list(views), progress, now_ms=NOW)["flows"]
    (found,) = [f for f in flows if f["flow"] == "A->B"]
    return found


def test_no_heartbeat_copied_since_the_task_started_is_missing_after_the_bound() -> None:
    emitter = view("hb", config(HEARTBEAT, source="B", target="A"))  # writes heartbeats on A
    found = a_to_b(Progress([heartbeats(None)]), view(), emitter)
    assert START < NOW - 30_000 and [c["code"] for c in found["conditions"]] == ["HEARTBEATS_MISSING"]
    assert found["heartbeat_age_ms"] is None
    paused = view("hb", config(HEARTBEAT, source="B", target="A"), state="PAUSED")
    old = Progress([heartbeats(START - 600_000)])
    assert [c["code"] for c in a_to_b(old, view(), paused)["conditions"]] == ["HEARTBEATS_MISSING"]


def test_a_heartbeats_topic_left_by_a_removed_emitter_is_history_not_a_fault() -> None:
    """Heartbeats topics are replicated whatever the filter says: one whose emitter is gone (none in
    the fleet writes to A, none copied since the task started) shows its age and raises nothing."""
    old = Progress([heartbeats(START - 600_000), partition()])
    found = a_to_b(old, view())
    assert found["status"] == IN_SYNC and found["conditions"] == []
    assert found["heartbeat_age_ms"] == NOW - (START - 600_000)
    assert a_to_b(Progress([heartbeats(None)]), view())["conditions"] == []
    # an emitter writing elsewhere (into B, for the flow B->A) is no evidence for A->B
    into_b = view("hb", config(HEARTBEAT, source="A", target="B"))
    assert a_to_b(old, view(), into_b)["conditions"] == []
    # an emitter outside the fleet shows itself by heartbeats copied since the task started
    stopped_since = Progress([heartbeats(START + 1_000), partition()])
    assert [c["code"] for c in a_to_b(stopped_since, view())["conditions"]] == ["HEARTBEATS_MISSING"]


def test_a_flow_without_a_heartbeats_topic_has_no_heartbeat_age_and_no_condition() -> None:
    found = flow_of(Progress([partition()]))
    assert found["heartbeat_age_ms"] is None and found["conditions"] == []


def test_a_custom_separator_and_the_identity_policy_name_their_heartbeats_topics() -> None:
    cfg = config(**{"replication.policy.separator": "_"})
    assert (
        flow_of(Progress([heartbeats(NOW - 500, "A_heartbeats")]), view("mirror", cfg))["heartbeat_age_ms"]
        == 500
    )
    assert flow_of(Progress([heartbeats(NOW - 700, "heartbeats")]))["heartbeat_age_ms"] == 700


def test_a_bad_heartbeat_bound_is_refused_by_validate_naming_the_key() -> None:
    values = MirrorSourceConnector().validate({**config(), HEARTBEATS_MAX_AGE_CONFIG: "-5"})
    errors = values[HEARTBEATS_MAX_AGE_CONFIG].errors
    assert errors == [
        f"Invalid value -5 for configuration {HEARTBEATS_MAX_AGE_CONFIG}: Value must be at least 1000"
    ]
    values = MirrorSourceConnector().validate({**config(), HEARTBEATS_MAX_AGE_CONFIG: "soon"})
    assert values[HEARTBEATS_MAX_AGE_CONFIG].errors == [
        f"Invalid value soon for configuration {HEARTBEATS_MAX_AGE_CONFIG}: Not a number of type LONG"
    ]


# -- lag in offsets and in time -------------------------------------------------------------------------


def test_lag_in_time_is_the_age_of_the_oldest_uncopied_record() -> None:
    hub = MetricsHub(clock=lambda: NOW / 1000)
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)], end_offset=lambda topic, p: 20)
    metrics.record_acknowledged("A.t", 0, 5, 4)
    metrics.record_polled("A.t", 0, [NOW - 9_000, NOW - 8_000], 10, last_offset=6)
    metrics.record_polled("A.t", 0, [NOW - 3_000], 5, last_offset=7)
    (row,) = flow_of(hub_progress([hub]))["topics"]
    assert row["record_lag"] == 15 and row["lag_ms"] == 9_000
    assert row["partition_lags"] == [{"partition": 0, "record_lag": 15, "lag_ms": 9_000}]
    metrics.record_acknowledged("A.t", 0, 2, 6)
    (row,) = flow_of(hub_progress([hub]))["topics"]
    assert row["record_lag"] == 13 and row["lag_ms"] == 3_000
    metrics.record_acknowledged("A.t", 0, 1, 7)
    (row,) = flow_of(hub_progress([hub]))["topics"]
    assert row["lag_ms"] == 3_000  # nothing polled is waiting: the newest copied record bounds it
    metrics.record_acknowledged("A.t", 0, 12, 19)
    (row,) = flow_of(hub_progress([hub]))["topics"]
    assert row["record_lag"] == 0 and row["lag_ms"] == 0


def test_hub_progress_carries_the_workers_task_conditions() -> None:
    hub = MetricsHub(clock=lambda: NOW / 1000)
    board = hub.conditions.board("mirror", 0)
    board.set("TOPIC_DELETED", "topic t was deleted on A", subject="t", cluster="A")
    (condition,) = hub_progress([hub]).conditions
    assert (condition.code, condition.since_ms, condition.connector) == ("TOPIC_DELETED", NOW, "mirror")


# -- the documented table ---------------------------------------------------------------------------------


def test_docs_list_every_code_with_its_severity_meaning_and_action() -> None:
    assert markdown_table() in DOCS.read_text()
