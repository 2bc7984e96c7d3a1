"""The mirror status core (pyconnect.mirror_status.core), its terminal rendering, and the metrics it
reads (connectors.mirror.metrics progress gauges), with fakes and a manual clock."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pytest

from connectors.mirror.metrics import MirrorCheckpointMetrics, MirrorSourceMetrics
from connectors.mirror.source import MirrorSourceConnector
from pyconnect.errors import ConnectError
from pyconnect.metrics.prometheus import PrometheusExposition
from pyconnect.metrics.registry import MetricName, MetricReading, MetricsHub
from pyconnect.mirror_status import client
from pyconnect.mirror_status.core import (
    ACTIVE,
    DEFAULT_TARGET_LATENCY_MS,
    FAILED,
    HIDDEN,
    IN_SYNC,
    INACTIVE,
    LAGGING,
    NOT_RUNNING,
    STALE,
    TARGET_LATENCY_CONFIG,
    UNKNOWN,
    CheckpointProgress,
    ConnectorView,
    PartitionProgress,
    Progress,
    mask_config,
    mirror_status,
    progress_from_readings,
    target_latency_error,
    target_latency_ms,
    task_worker_ids,
    topic_status,
)
from pyconnect.mirror_status.text import render
from pyconnect.worker.failure_trace import failure_trace

NOW = 1_700_000_100_000
START = NOW - 60_000
SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"


def config(kind: str = SOURCE, source: str = "A", target: str = "B", **extra: str) -> dict[str, str]:
    return {
        "connector.class": kind,
        "source.cluster.alias": source,
        "target.cluster.alias": target,
        **extra,
    }


def status(name: str, state: str = "RUNNING", *tasks: tuple[str, str], trace: str | None = None) -> dict:
    connector: dict[str, Any] = {"state": state, "worker_id": "w1:8083"}
    if trace:
        connector["trace"] = trace
    return {
        "name": name,
        "connector": connector,
        "tasks": [
            {
                "id": i,
                "state": s,
                "worker_id": w,
                **({"trace": f"{s} trace\n\tat x"} if s == "FAILED" else {}),
            }
            for i, (s, w) in enumerate(tasks)
        ],
        "type": "source",
    }


def view(
    name: str = "mirror", cfg: dict[str, str] | None = None, *tasks: tuple[str, str], **kw: Any
) -> ConnectorView:
    tasks = tasks or (("RUNNING", "w1:8083"),)
    return ConnectorView(name, cfg or config(), status(name, kw.get("state", "RUNNING"), *tasks))


def partition(topic: str = "A.t", p: int = 0, **kw: Any) -> PartitionProgress:
    values: dict[str, Any] = {
        "records": 10.0,
        "latency_avg_ms": 50.0,
        "task_start_ms": START,
        "newest_timestamp_ms": NOW - 100,
        "last_replicated_ms": NOW - 50,
        "replicated_offset": 9,
        "end_offset": 10,
    }
    values.update(kw)
    return PartitionProgress("A", "B", topic, p, **values)


def one_flow(connectors: list[ConnectorView], parts: list[PartitionProgress], **kw: Any) -> dict[str, Any]:
    document = mirror_status(connectors, Progress(parts), now_ms=NOW, **kw)
    assert document["generated_ms"] == NOW
    (found,) = document["flows"]
    return found


# -- topic states -----------------------------------------------------------------------------------


def test_an_active_topic_under_the_target_latency_is_in_sync() -> None:
    row = topic_status(
        "A.t", [partition(p=0, latency_avg_ms=40.0), partition(p=1, latency_avg_ms=60.0)], 1000, NOW
    )
    assert row["state"] == ACTIVE and row["in_sync"] is True
    assert row["latency_ms"] == 50.0 and row["max_latency_ms"] == 60.0
    assert row["record_lag"] == 0 and row["last_record_age_ms"] == 100
    assert row["records_replicated"] == 20 and row["partitions"] == 2


def test_a_record_waiting_for_the_target_latency_makes_its_topic_lag() -> None:
    waiting = partition(end_offset=500, oldest_pending_timestamp_ms=NOW - 1_000, latency_avg_ms=20.0)
    row = topic_status("A.t", [waiting], 1000, NOW)
    assert row["state"] == ACTIVE and row["in_sync"] is False and row["lag_ms"] == 1_000
    assert row["reason"] == "the copy runs 1.0 s behind the source, target 1000 ms"
    young = partition(end_offset=500, oldest_pending_timestamp_ms=NOW - 999, latency_avg_ms=5_000.0)
    assert topic_status("A.t", [young], 1000, NOW)["in_sync"] is True


def test_a_copy_falling_behind_lags_by_its_last_copy_before_the_average_catches_up() -> None:
    """A flood the mirror copies slower than it comes: between polls nothing is in flight, and the last
    record copied (in offset order) was written 1.8 s before its acknowledgement."""
    flooded = partition(
        end_offset=60_000, latency_avg_ms=924.0, newest_timestamp_ms=NOW - 1_900, last_replicated_ms=NOW - 100
    )
    row = topic_status("A.t", [flooded], 1000, NOW)
    assert (
        row["in_sync"] is False and row["reason"] == "the copy runs 1.8 s behind the source, target 1000 ms"
    )
    keeping_up = partition(end_offset=500, newest_timestamp_ms=NOW - 150, last_replicated_ms=NOW - 100)
    assert topic_status("A.t", [keeping_up], 1000, NOW)["in_sync"] is True


def test_a_backlog_copied_a_minute_ago_does_not_keep_a_caught_up_topic_lagging() -> None:
    """The windowed average still holds the old records' latency; nothing waits now: in sync."""
    caught_up = partition(latency_avg_ms=95_000.0)
    row = topic_status("A.t", [caught_up], 1000, NOW)
    assert row["state"] == ACTIVE and row["in_sync"] is True and row["latency_ms"] == 95_000.0


def test_records_waiting_with_nothing_known_of_the_copy_fall_back_to_the_windowed_average() -> None:
    unknown = {"end_offset": 500, "last_replicated_ms": None}
    row = topic_status("A.t", [partition(latency_avg_ms=1000.0, **unknown)], 1000, NOW)
    assert row["state"] == ACTIVE and row["in_sync"] is False
    assert row["reason"] == "average replication latency 1000 ms, target 1000 ms"
    assert topic_status("A.t", [partition(latency_avg_ms=999.0, **unknown)], 1000, NOW)["in_sync"] is True


def test_records_waiting_without_any_replicated_in_the_window_is_a_stalled_active_topic() -> None:
    row = topic_status(
        "A.t", [partition(latency_avg_ms=None, end_offset=500, last_replicated_ms=None)], 30_000, NOW
    )
    assert row["state"] == ACTIVE and row["in_sync"] is False and row["record_lag"] == 490
    assert "none replicated" in row["reason"]


def test_data_only_from_before_the_mirror_started_is_stale_and_not_judged() -> None:
    old = partition(newest_timestamp_ms=START - 3_600_000, latency_avg_ms=3_600_000.0)
    row = topic_status("A.t", [old], 1000, NOW)
    assert row["state"] == STALE and row["in_sync"] is None and row["reason"] is None
    assert row["last_record_age_ms"] == NOW - START + 3_600_000


def test_a_stale_backlog_still_being_copied_is_active() -> None:
    copying = partition(newest_timestamp_ms=START - 10_000, latency_avg_ms=20_000.0, end_offset=1000)
    row = topic_status("A.t", [copying], 1000, NOW)
    assert row["state"] == ACTIVE and row["in_sync"] is False


def test_no_data_recently_is_inactive_and_not_judged() -> None:
    quiet = partition(latency_avg_ms=None)
    assert topic_status("A.t", [quiet], 1000, NOW)["state"] == INACTIVE
    never = PartitionProgress("A", "B", "A.t", 0, task_start_ms=START)
    row = topic_status("A.t", [never], 1000, NOW)
    assert row["state"] == INACTIVE and row["in_sync"] is None
    assert row["record_lag"] is None and row["last_record_age_ms"] is None and row["records_replicated"] == 0


def test_one_active_partition_makes_the_topic_active_and_only_active_partitions_count() -> None:
    parts = [partition(p=0, latency_avg_ms=None), partition(p=1, latency_avg_ms=80.0)]
    row = topic_status("A.t", parts, 100, NOW)
    assert row["state"] == ACTIVE and row["latency_ms"] == 80.0 and row["in_sync"] is True


def test_record_lag_needs_both_ends_and_never_goes_negative() -> None:
    assert partition(end_offset=None).record_lag is None
    assert partition(replicated_offset=None).record_lag is None
    assert partition(replicated_offset=20, end_offset=10).record_lag == 0
    assert partition(replicated_offset=4, end_offset=10).record_lag == 5


# -- flows ------------------------------------------------------------------------------------------


def test_a_healthy_flow_with_a_stale_and_an_inactive_topic_is_in_sync() -> None:
    parts = [
        partition("A.live"),
        partition("A.old", newest_timestamp_ms=START - 1, latency_avg_ms=9e6),
        partition("A.quiet", latency_avg_ms=None),
    ]
    found = one_flow([view()], parts)
    assert found["status"] == IN_SYNC and found["in_sync"] is True and found["reasons"] == []
    assert found["flow"] == "A->B" and found["target_latency_ms"] == DEFAULT_TARGET_LATENCY_MS
    assert {t["topic"]: t["state"] for t in found["topics"]} == {
        "A.live": ACTIVE,
        "A.old": STALE,
        "A.quiet": INACTIVE,
    }


def test_a_lagging_topic_makes_the_flow_lag_and_says_why() -> None:
    found = one_flow(
        [view(cfg=config(**{TARGET_LATENCY_CONFIG: "1000"}))],
        [partition(latency_avg_ms=2500.0, end_offset=99, oldest_pending_timestamp_ms=NOW - 2_500)],
    )
    assert found["status"] == LAGGING and not found["in_sync"] and found["target_latency_ms"] == 1000
    assert found["reasons"] == ["topic A.t lags: the copy runs 2.5 s behind the source, target 1000 ms"]


def test_a_failed_task_fails_the_flow_with_its_first_trace_line() -> None:
    connector = view("mirror", config(), ("RUNNING", "w1:8083"), ("FAILED", "w2:8083"))
    found = one_flow(
        [connector], [partition(latency_avg_ms=99_999.0, end_offset=99, last_replicated_ms=None)]
    )
    assert found["status"] == FAILED
    assert found["reasons"][0] == "task mirror-1 is FAILED: FAILED trace"
    assert found["reasons"][1].startswith("topic A.t lags")
    assert found["connectors"][0]["tasks"][1] == {
        "id": 1,
        "state": "FAILED",
        "worker_id": "w2:8083",
        "error": "FAILED trace",
    }


class DataError(Exception):
    pass


def test_a_failure_caused_by_another_error_names_its_root_cause() -> None:
    try:
        try:
            raise DataError("Only Struct objects supported")
        except DataError as cause:
            raise ConnectError("Tolerance exceeded in error handler") from cause
    except ConnectError as exc:
        trace = failure_trace(exc)
    failed = ConnectorView("mirror", config(), status("mirror", "FAILED", trace=trace))
    found = one_flow([failed], [])
    assert found["reasons"] == [
        "connector mirror is FAILED: pyconnect.errors.ConnectError: Tolerance exceeded in error handler "
        "(caused by tests.unit.mirror_status.test_mirror_status.DataError: Only Struct objects supported)"
    ]


@pytest.mark.parametrize("state", ["PAUSED", "STOPPED", "UNASSIGNED", "RESTARTING"])
def test_a_connector_not_running_means_not_running(state: str) -> None:
    connector = ConnectorView("mirror", config(), status("mirror", state, ("RUNNING", "w1:8083")))
    found = one_flow([connector], [partition()])
    assert found["status"] == NOT_RUNNING and found["reasons"] == [f"connector mirror is {state}"]


def test_a_connector_without_status_is_not_running() -> None:
    found = one_flow([ConnectorView("mirror", config(), None)], [])
    assert found["status"] == NOT_RUNNING and found["reasons"] == ["connector mirror is without status"]


def test_failed_wins_over_not_running() -> None:
    paused = ConnectorView("hb", config("x.MirrorHeartbeatConnector"), status("hb", "PAUSED"))
    failed = ConnectorView("mirror", config(), status("mirror", "FAILED", trace="boom\n\tat y"))
    found = one_flow([paused, failed], [])
    assert found["status"] == FAILED
    assert found["reasons"] == ["connector hb is PAUSED", "connector mirror is FAILED: boom"]


def test_a_worker_whose_metrics_are_missing_makes_the_flow_unknown_not_in_sync() -> None:
    connector = view("mirror", config(), ("RUNNING", "w1:8083"), ("RUNNING", "w2:8083"))
    found = one_flow([connector], [partition()], unreachable={"w2:8083": "timeout", "w9:8083": "gone"})
    assert found["status"] == UNKNOWN and not found["in_sync"]
    assert found["reasons"] == ["worker w2:8083 did not answer for its metrics: timeout"]


def test_flows_are_grouped_by_aliases_and_other_connectors_are_left_out() -> None:
    connectors = [
        view("b-to-a", config(source="B", target="A")),
        view("a-to-b", config()),
        view("a-to-b-checkpoints", config(CHECKPOINT)),
        ConnectorView("other", {"connector.class": "FileStreamSource"}, None),
    ]
    parts = [partition("A.t"), PartitionProgress("B", "A", "B.t", 0, latency_avg_ms=5.0, task_start_ms=START)]
    document = mirror_status(connectors, Progress(parts), now_ms=NOW)
    flows = {f["flow"]: f for f in document["flows"]}
    assert list(flows) == ["A->B", "B->A"]
    assert [c["name"] for c in flows["A->B"]["connectors"]] == ["a-to-b", "a-to-b-checkpoints"]
    assert [c["kind"] for c in flows["A->B"]["connectors"]] == ["source", "checkpoint"]
    assert [t["topic"] for t in flows["A->B"]["topics"]] == ["A.t"]
    assert [t["topic"] for t in flows["B->A"]["topics"]] == ["B.t"]


def test_java_default_aliases_when_absent() -> None:
    connector = ConnectorView("m", {"connector.class": SOURCE}, status("m"))
    assert mirror_status([connector], Progress(), now_ms=NOW)["flows"][0]["flow"] == "source->target"


def test_the_smallest_target_latency_of_the_flow_source_connectors_applies() -> None:
    connectors = [
        view("m1", config(**{TARGET_LATENCY_CONFIG: "5000"})),
        view("m2", config(**{TARGET_LATENCY_CONFIG: "2000"})),
        view("cp", config(CHECKPOINT, **{TARGET_LATENCY_CONFIG: "1000"})),
    ]
    assert one_flow(connectors, [])["target_latency_ms"] == 2000


def test_checkpoint_latency_per_group() -> None:
    checkpoints = [
        CheckpointProgress("A", "B", "g1", "A.t", 0, latency_ms=30.0, latency_avg_ms=20.0),
        CheckpointProgress("A", "B", "g1", "A.t", 1, latency_ms=10.0, latency_avg_ms=40.0),
        CheckpointProgress("A", "B", "g0", "A.t", 0, latency_ms=None, latency_avg_ms=None),
        CheckpointProgress("B", "A", "g9", "B.t", 0, latency_ms=1.0, latency_avg_ms=1.0),
    ]
    document = mirror_status([view()], Progress([], checkpoints), now_ms=NOW)
    (found,) = document["flows"]
    assert found["checkpoints"] == [
        {"group": "g0", "latency_ms": None, "last_latency_ms": None, "partitions": 1},
        {"group": "g1", "latency_ms": 40.0, "last_latency_ms": 30.0, "partitions": 2},
    ]


def test_task_worker_ids_are_those_of_mirror_tasks() -> None:
    connectors = [
        view("m", config(), ("RUNNING", "w1:1"), ("FAILED", "w2:1")),
        ConnectorView("other", {"connector.class": "X"}, status("other", "RUNNING", ("RUNNING", "w3:1"))),
        ConnectorView("new", config(), None),
    ]
    assert task_worker_ids(connectors) == {"w1:1", "w2:1"}


# -- config ------------------------------------------------------------------------------------------


def test_target_latency_defaults_minimum_and_errors() -> None:
    assert target_latency_ms({}) == 30_000
    assert target_latency_ms({TARGET_LATENCY_CONFIG: " 1000 "}) == 1000
    assert target_latency_ms({TARGET_LATENCY_CONFIG: "999"}) == 30_000
    assert target_latency_error(None) is None and target_latency_error("1000") is None
    assert target_latency_error("999") == (
        f"Invalid value 999 for configuration {TARGET_LATENCY_CONFIG}: Value must be at least 1000"
    )
    assert target_latency_error("fast") == (
        f"Invalid value fast for configuration {TARGET_LATENCY_CONFIG}: Not a number of type LONG"
    )


def test_validate_reports_a_bad_target_latency_on_its_key_and_leaves_valid_configs_as_java() -> None:
    base = {
        **config(),
        "source.cluster.bootstrap.servers": "127.0.0.1:1",
        "target.cluster.bootstrap.servers": "127.0.0.1:1",
    }
    connector = MirrorSourceConnector()
    plain = connector.validate(base)
    assert TARGET_LATENCY_CONFIG not in plain
    assert TARGET_LATENCY_CONFIG not in connector.validate({**base, TARGET_LATENCY_CONFIG: "5000"})
    bad = connector.validate({**base, TARGET_LATENCY_CONFIG: "10"})
    assert bad[TARGET_LATENCY_CONFIG].errors == [target_latency_error("10")]
    assert {k: v.errors for k, v in bad.items() if k != TARGET_LATENCY_CONFIG} == {
        k: v.errors for k, v in plain.items()
    }


def test_secrets_are_masked() -> None:
    cfg = {
        "source.cluster.sasl.jaas.config": "org.x.PlainLoginModule required password='p';",
        "target.cluster.ssl.key.password": "k",
        "source.cluster.ssl.keystore.key": "-----BEGIN",
        "consumer.ssl.truststore.password": "t",
        "my.api.key": "abc",
        "basic.auth.user.info": "u:p",
        "secret": "s",
        "empty.password": "",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "topics": "t.*",
    }
    masked = mask_config(cfg, password_keys=["basic.auth.user.info"])
    assert masked == {
        "basic.auth.user.info": HIDDEN,
        "consumer.ssl.truststore.password": HIDDEN,
        "empty.password": "",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "my.api.key": HIDDEN,
        "secret": HIDDEN,
        "source.cluster.sasl.jaas.config": HIDDEN,
        "source.cluster.ssl.keystore.key": HIDDEN,
        "target.cluster.ssl.key.password": HIDDEN,
        "topics": "t.*",
    }
    found = one_flow([ConnectorView("m", {**config(), **cfg}, status("m"))], [])
    assert "p'" not in json.dumps(found)


# -- reading the metrics ------------------------------------------------------------------------------


class Clock:
    def __init__(self, now_s: float) -> None:
        self.now_s = now_s

    def __call__(self) -> float:
        return self.now_s


def test_progress_is_read_from_the_mirror_task_metrics() -> None:
    clock = Clock(START / 1000)
    hub = MetricsHub(clock=clock)
    ends = {("A.t", 0): None}
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)], end_offset=lambda t, p: ends[(t, p)])
    metrics.resumed("A.t", 0, 99)
    clock.now_s = NOW / 1000
    metrics.record_polled("A.t", 0, [NOW - 300, NOW - 200], 10, last_offset=101)
    metrics.record_acknowledged("A.t", 0, 2, last_offset=101)
    ends[("A.t", 0)] = 110
    checkpoints = MirrorCheckpointMetrics(hub, "A", "B")
    checkpoints.record_acknowledged("g", "A.t", 0, [NOW - 40])
    other = hub.registry("kafka.connect")
    other.add_gauge(MetricName("record-count", "MirrorSourceConnector", (("topic", "x"),)), lambda now: 1.0)
    progress = progress_from_readings(hub.read())
    assert progress.partitions == [
        PartitionProgress(
            "A",
            "B",
            "A.t",
            0,
            records=2.0,
            latency_avg_ms=250.0,
            record_age_ms=200.0,
            task_start_ms=START,
            newest_timestamp_ms=NOW - 200,
            last_replicated_ms=NOW,
            replicated_offset=101,
            end_offset=110,
            truncated_records=0.0,
            truncations=0.0,
        )
    ]
    assert progress.partitions[0].record_lag == 8
    assert progress.checkpoints == [
        CheckpointProgress("A", "B", "g", "A.t", 0, latency_ms=40.0, latency_avg_ms=40.0)
    ]
    metrics.close()
    checkpoints.close()
    assert progress_from_readings(hub.read()) == Progress()


def test_the_progress_gauges_are_not_exported_to_prometheus() -> None:
    hub = MetricsHub(clock=Clock(NOW / 1000))
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)], end_offset=lambda t, p: 10)
    metrics.resumed("A.t", 0, 3)
    metrics.record_polled("A.t", 0, [NOW - 5], 1, last_offset=4)
    metrics.record_acknowledged("A.t", 0, 1, last_offset=4)
    text = PrometheusExposition(hub, "worker").render()
    assert 'kafka_connect_mirror_mirrorsourceconnector_record_count{source="A",target="B",topic="A.t"' in text
    for hidden in ("progress", "end_offset", "replicated_offset", "task_start", "last_record_timestamp"):
        assert hidden not in text.lower(), hidden


def test_unknown_values_are_none_and_nan_is_no_value() -> None:
    name = MetricName(
        "replication-latency-ms-avg",
        "MirrorSourceConnector",
        (("source", "A"), ("target", "B"), ("topic", "A.t"), ("partition", "0")),
    )
    progress = progress_from_readings([MetricReading("kafka.connect.mirror", name, math.nan)])
    assert progress.partitions == [PartitionProgress("A", "B", "A.t", 0)]


def test_progress_json_round_trip_and_refusals() -> None:
    progress = Progress([partition()], [CheckpointProgress("A", "B", "g", "A.t", 0, 1.0, 2.0)])
    assert Progress.from_json(json.loads(json.dumps(progress.to_json()))) == progress
    whole = {"source": "A", "target": "B", "topic": "t", "partition": 0}
    for bad in (
        [],
        {"partitions": {}},
        {"partitions": [1]},
        {"partitions": [{"source": "A"}]},
        {"partitions": [{**whole, "partition": "0"}]},
        {"partitions": [{**whole, "partition": True}]},
        {"partitions": [{**whole, "topic": 7}]},
        {"partitions": [{**whole, "end_offset": "9"}]},
        {"checkpoints": [{**whole, "group": None}]},
    ):
        with pytest.raises(ValueError):
            Progress.from_json(bad)


# -- terminal -------------------------------------------------------------------------------------------


def test_render_lists_flows_reasons_topics_checkpoints_and_connectors() -> None:
    connector = view("mirror", config(), ("FAILED", "w1:8083"))
    checkpoints = [CheckpointProgress("A", "B", "g1", "A.t", 0, 30.0, 20.0)]
    document = mirror_status(
        [connector], Progress([partition(latency_avg_ms=12_500.0)], checkpoints), now_ms=NOW
    )
    text = render(document)
    lines = text.splitlines()
    assert lines[0] == "A->B  FAILED  (target latency 30.0 s)"
    assert lines[1] == "  ! task mirror-0 is FAILED: FAILED trace"
    assert any(line.split()[:4] == ["A.t", "ACTIVE", "yes", "12.5"] for line in lines), text
    assert any(line.split()[0] == "g1" for line in lines if line.strip()), text
    assert "  mirror (source) RUNNING; tasks 0:FAILED" in lines
    assert render({"flows": []}) == "No MirrorMaker 2 flows on this cluster.\n"


def test_status_url_and_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.status_url("http://h:1") == "http://h:1/mirrors"
    assert client.status_url("http://h:1/") == "http://h:1/mirrors"
    assert client.status_url("https://h:1/mirrors/") == "https://h:1/mirrors"
    with pytest.raises(client.StatusError, match="must start with http"):
        client.status_url("h:1")
    documents = iter([{"flows": [{"in_sync": True}]}, {"flows": [{"in_sync": False}]}, {"flows": []}])
    monkeypatch.setattr(client, "fetch", lambda url, timeout_s: next(documents))
    monkeypatch.setattr(client, "render", lambda document: "text\n")
    out, err = io.StringIO(), io.StringIO()
    assert client.run("http://h:1", as_json=False, timeout_s=1, out=out, err=err) == client.EXIT_OK
    assert client.run("http://h:1", as_json=False, timeout_s=1, out=out, err=err) == client.EXIT_NOT_IN_SYNC
    assert client.run("http://h:1", as_json=True, timeout_s=1, out=out, err=err) == client.EXIT_OK
    assert err.getvalue() == ""

    def refuse(url: str, timeout_s: float) -> dict:
        raise client.StatusError("cannot reach http://h:1/mirrors: refused")

    monkeypatch.setattr(client, "fetch", refuse)
    assert client.run("http://h:1", as_json=False, timeout_s=1, out=out, err=err) == client.EXIT_ERROR
    assert err.getvalue() == "pyconnect: cannot reach http://h:1/mirrors: refused\n"


def test_records_lost_to_truncation_show_per_topic_with_a_warning_and_leave_the_status_alone() -> None:
    found = one_flow(
        [view()],
        [
            partition(p=0, truncated_records=50.0, truncations=1.0),
            partition(p=1, truncated_records=0.0, truncations=1.0),
            partition("A.u", 0, truncated_records=0.0, truncations=0.0),
        ],
    )
    rows = {t["topic"]: t for t in found["topics"]}
    assert (rows["A.t"]["records_lost"], rows["A.t"]["truncations"]) == (50, 2)
    assert (rows["A.u"]["records_lost"], rows["A.u"]["truncations"]) == (0, 0)
    assert found["warnings"] == [
        "topic A.t: 2 truncation gaps, 50 records lost before they were replicated (see the source task's log)"
    ]
    assert found["status"] == IN_SYNC and found["reasons"] == []


def test_render_shows_records_lost_and_the_truncation_warning() -> None:
    document = mirror_status(
        [view()], Progress([partition(truncated_records=50.0, truncations=1.0)]), now_ms=NOW
    )
    lines = render(document).splitlines()
    assert "  ! topic A.t: 1 truncation gaps, 50 records lost before they were replicated" in lines[1]
    header = next(line for line in lines if line.strip().startswith("TOPIC"))
    row = next(line for line in lines if line.strip().startswith("A.t"))
    assert header.split()[-1] == "LOST" and row.split()[-1] == "50"
