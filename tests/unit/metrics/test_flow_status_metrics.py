"""The mirror status document as Prometheus series (pyconnect.metrics.flow_status): a state set per
flow, one series per active condition code and cluster, per-partition lag, heartbeat age; promtool
accepts the exposition without a lint."""

from __future__ import annotations

from typing import Any

from pyconnect.conditions import Condition
from pyconnect.metrics.flow_status import FLOW_STATUSES, flow_status_samples
from pyconnect.metrics.prometheus import render
from pyconnect.mirror_status.core import (
    STATUSES,
    ConnectorView,
    PartitionProgress,
    Progress,
    mirror_status,
)
from tests.promtool import check_metrics

NOW_MS = 1_700_000_000_000
AB = (("flow", "A->B"), ("source", "A"), ("target", "B"))


def series(document: dict[str, Any] | None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, s.labels): s.value for s in flow_status_samples(document)}


def condition(
    code: str, since_ms: int, cluster: str | None = "A", severity: str = "critical"
) -> dict[str, Any]:
    return {
        "code": code,
        "severity": severity,
        "cluster": cluster,
        "client": "c-0",
        "subject": "t-0",
        "connector": "mirror",
        "task": 0,
        "since_ms": since_ms,
        "message": "m",
    }


def flow(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "flow": "A->B",
        "source": "A",
        "target": "B",
        "status": "IN_SYNC",
        "in_sync": True,
        "conditions": [],
        "target_latency_ms": 4000,
        "heartbeat_age_ms": None,
        "topics": [],
    }
    return {**base, **fields}


def test_the_statuses_are_the_documents() -> None:
    assert FLOW_STATUSES == STATUSES


def test_the_flow_status_is_a_state_set_and_in_sync_follows_it() -> None:
    got = series({"flows": [flow(status="STALLED", in_sync=False)]})
    states = {dict(labels)["status"]: v for (name, labels), v in got.items() if name.endswith("flow_status")}
    assert states == {s: (1.0 if s == "STALLED" else 0.0) for s in STATUSES}
    assert got[("pyconnect_mirror_flow_in_sync", AB)] == 0.0
    assert got[("pyconnect_mirror_flow_target_latency_seconds", AB)] == 4.0
    healthy = series({"flows": [flow()]})
    assert healthy[("pyconnect_mirror_flow_in_sync", AB)] == 1.0
    assert healthy[("pyconnect_mirror_flow_status", (*AB, ("status", "IN_SYNC")))] == 1.0


def test_a_status_outside_the_known_ones_still_shows_at_one() -> None:
    got = series({"flows": [flow(status="PAUSED_SOMEHOW", in_sync=False)]})
    assert got[("pyconnect_mirror_flow_status", (*AB, ("status", "PAUSED_SOMEHOW")))] == 1.0
    assert sum(v for (name, _), v in got.items() if name == "pyconnect_mirror_flow_status") == 1.0


def test_conditions_with_the_same_labels_are_one_series_since_the_oldest() -> None:
    conditions = [
        condition("SOURCE_UNREACHABLE", NOW_MS - 5000),
        condition("SOURCE_UNREACHABLE", NOW_MS - 9000),
        condition("WORKER_UNREACHABLE", NOW_MS - 1000, cluster=None),
        condition("REBALANCING", NOW_MS - 2000, cluster=None, severity="warning"),
    ]
    got = series({"flows": [flow(status="STALLED", in_sync=False, conditions=conditions)]})
    found = {labels: v for (name, labels), v in got.items() if name == "pyconnect_mirror_condition"}
    unreachable = (*AB, ("code", "SOURCE_UNREACHABLE"), ("cluster", "A"), ("severity", "critical"))
    worker = (*AB, ("code", "WORKER_UNREACHABLE"), ("cluster", ""), ("severity", "critical"))
    rebalancing = (*AB, ("code", "REBALANCING"), ("cluster", ""), ("severity", "warning"))
    assert found == {unreachable: 1.0, worker: 1.0, rebalancing: 1.0}
    since = "pyconnect_mirror_condition_since_seconds"
    assert got[(since, unreachable)] == (NOW_MS - 9000) / 1000
    assert got[(since, worker)] == (NOW_MS - 1000) / 1000


def test_partition_lag_and_heartbeat_age_are_left_out_while_unknown() -> None:
    topic = {
        "topic": "A.t",
        "partition_lags": [
            {"partition": 0, "record_lag": 7, "lag_ms": 2500},
            {"partition": 1, "record_lag": None, "lag_ms": None},
            {"partition": 2, "record_lag": 0, "lag_ms": 0},
        ],
    }
    got = series({"flows": [flow(topics=[topic], heartbeat_age_ms=1500)]})
    p0, p2 = (*AB, ("topic", "A.t"), ("partition", "0")), (*AB, ("topic", "A.t"), ("partition", "2"))
    lags = {labels: v for (name, labels), v in got.items() if name == "pyconnect_mirror_partition_record_lag"}
    seconds = {
        labels: v for (name, labels), v in got.items() if name == "pyconnect_mirror_partition_lag_seconds"
    }
    assert lags == {p0: 7.0, p2: 0.0}
    assert seconds == {p0: 2.5, p2: 0.0}
    assert got[("pyconnect_mirror_heartbeat_age_seconds", AB)] == 1.5
    assert not any(
        name == "pyconnect_mirror_heartbeat_age_seconds" for name, _ in series({"flows": [flow()]})
    )


def test_no_document_no_series() -> None:
    assert flow_status_samples(None) == []
    assert flow_status_samples({"generated_ms": NOW_MS, "flows": []}) == []


def test_a_real_document_renders_an_exposition_promtool_accepts_without_lints() -> None:
    source = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "pyconnect.mirror.target.latency.ms": "4000",
    }
    running = {
        "connector": {"state": "RUNNING", "worker_id": "w:1"},
        "tasks": [{"id": 0, "state": "RUNNING", "worker_id": "w:1"}],
    }
    views = [
        ConnectorView("mirror", source, running),
        ConnectorView("other", {**source, "source.cluster.alias": "C"}, running),
    ]
    progress = Progress(
        [
            PartitionProgress(
                "A",
                "B",
                "A.t",
                0,
                task_start_ms=NOW_MS - 60_000,
                replicated_offset=9,
                end_offset=20,
                newest_timestamp_ms=NOW_MS - 30_000,
                last_replicated_ms=NOW_MS - 30_000,
            ),
            PartitionProgress(
                "A",
                "B",
                "A.heartbeats",
                0,
                newest_timestamp_ms=NOW_MS - 1000,
                replicated_offset=3,
                end_offset=4,
            ),
        ],
        conditions=[
            Condition(
                "SOURCE_UNREACHABLE",
                'no fetch "answered"\nfor 2 s',
                NOW_MS - 3000,
                "A",
                "c-0",
                "A.t-0",
                "mirror",
                0,
            )
        ],
    )
    document = mirror_status(views, progress, now_ms=NOW_MS)
    text = render(flow_status_samples(document))
    assert check_metrics(text) == []
    got = series(document)
    assert got[("pyconnect_mirror_flow_status", (*AB, ("status", "STALLED")))] == 1.0
    condition_labels = (*AB, ("code", "SOURCE_UNREACHABLE"), ("cluster", "A"), ("severity", "critical"))
    assert got[("pyconnect_mirror_condition", condition_labels)] == 1.0
    assert got[("pyconnect_mirror_partition_record_lag", (*AB, ("topic", "A.t"), ("partition", "0")))] == 10.0
    assert got[("pyconnect_mirror_heartbeat_age_seconds", AB)] == 1.0
    cb = (("flow", "C->B"), ("source", "C"), ("target", "B"))
    assert got[("pyconnect_mirror_flow_in_sync", cb)] == 1.0
    assert 'pyconnect_mirror_flow_status{flow="A->B",source="A",target="B",status="STALLED"} 1.0' in text
    assert text.count("# TYPE pyconnect_mirror_flow_status gauge") == 1
