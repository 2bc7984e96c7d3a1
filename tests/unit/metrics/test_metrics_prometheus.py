"""The exposition: JMX names as Java's JmxReporter makes them, Strimzi's JMX-exporter rules applied as
the exporter applies them, and a text format promtool accepts."""

from __future__ import annotations

import math

import pytest

from pyconnect.metrics.connect import (
    ConnectMetrics,
    ConnectorMetrics,
    ConnectorTaskCounts,
    CoordinatorMetrics,
    RebalanceMetrics,
    SourceTaskMetrics,
    TaskMetrics,
    WorkerMetrics,
)
from pyconnect.metrics.jmx import jmx_sanitize, object_name
from pyconnect.metrics.process import EventLoopLag, process_samples
from pyconnect.metrics.prometheus import PrometheusExposition, Sample, format_value, render, safe_name
from pyconnect.metrics.registry import MetricName, MetricsHub
from pyconnect.metrics.state_tracker import StateTracker
from pyconnect.metrics.task_errors import TaskErrorMetrics
from pyconnect.protocol.internal_records import State
from tests.promtool import check_metrics

MM2 = "A->B.MirrorSourceConnector"
QUOTED = '\\"A->B.MirrorSourceConnector\\"'


class ManualClock:
    def __init__(self, ms: int = 1_000_000) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


# Printed by kafka-clients 4.3.1: Sanitizer.jmxSanitize(value)
@pytest.mark.parametrize(
    ("value", "java"),
    [
        ("A-to-B", "A-to-B"),
        ("A->B.MirrorSourceConnector", '"A->B.MirrorSourceConnector"'),
        ("connect-127.0.0.1:8083", '"connect-127.0.0.1:8083"'),
        ("with space", "with space"),
        ('q"uote', '"q\\"uote"'),
        ("star*", '"star\\*"'),
        ("back\\slash", '"back\\\\slash"'),
        ("a.b_c%d", "a.b_c%d"),
        ("new\nline", '"new\\nline"'),
        ("comma,x", '"comma,x"'),
        ("eq=x", '"eq=x"'),
        ("", ""),
        ("ü", '"ü"'),
    ],
)
def test_jmx_sanitize_is_javas(value: str, java: str) -> None:
    assert jmx_sanitize(value) == java


def test_object_names_keep_tag_order_and_drop_empty_tags() -> None:
    name = MetricName("status", "connector-task-metrics", (("connector", MM2), ("task", "0"), ("x", "")))
    assert object_name("kafka.connect", name) == (
        'kafka.connect:type=connector-task-metrics,connector="A->B.MirrorSourceConnector",task=0'
    )


def test_safe_name_and_values_as_the_exporter_writes_them() -> None:
    assert (
        safe_name("kafka_connect-coordinator_assigned-connectors")
        == "kafka_connect_coordinator_assigned_connectors"
    )
    assert safe_name("a--b__c") == "a_b_c"
    assert safe_name("0x") == "_0x"
    assert [format_value(v) for v in (1.0, math.nan, math.inf, -math.inf, 0.5)] == [
        "1.0",
        "NaN",
        "+Inf",
        "-Inf",
        "0.5",
    ]


def worker_fixture(clock: ManualClock) -> tuple[MetricsHub, dict[str, object]]:
    hub = MetricsHub(clock=clock)
    cm = ConnectMetrics(
        "127.0.0.1:8083", hub, kafka_cluster_id="kc", group_id="g", version="4.3.1", commit_id="c0"
    )
    connectors: dict[str, object] = {MM2: object(), "plain": object()}
    tasks: dict[tuple[str, int], TaskMetrics] = {}
    parts: dict[str, object] = {"metrics": cm, "connectors": connectors, "tasks": tasks}
    parts["worker"] = WorkerMetrics(cm, connectors, tasks)
    tasks[(MM2, 0)] = TaskMetrics(cm, MM2, 0, State.RUNNING)
    tasks[(MM2, 1)] = TaskMetrics(cm, MM2, 1, State.RUNNING)
    tasks[(MM2, 1)].record_state(State.FAILED)
    parts["source"] = SourceTaskMetrics(cm, MM2, 0)
    counts = ConnectorTaskCounts(cm, lambda: {k: t.state for k, t in tasks.items()})
    counts.task_added(MM2)
    parts["counts"] = counts
    connector = ConnectorMetrics(cm, MM2, connector_type="source", connector_class="x.Y", version="1")
    connector.state = State.RUNNING
    parts["connector"] = connector
    parts["rebalance"] = RebalanceMetrics(
        cm, protocol=lambda: "SESSIONED", leader_url=lambda: "http://127.0.0.1:8083/", generation=lambda: 7
    )
    parts["coordinator"] = CoordinatorMetrics(cm, "connect-127.0.0.1:8083", lambda: (2, 2))
    return hub, parts


def series(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def test_connect_rules_give_the_series_the_dashboards_and_alerts_query() -> None:
    clock = ManualClock()
    hub, parts = worker_fixture(clock)
    source = parts["source"]
    assert isinstance(source, SourceTaskMetrics)
    source.record_poll(10, 4.0)
    source.record_write(6, 0)
    rebalance = parts["rebalance"]
    assert isinstance(rebalance, RebalanceMetrics)
    before = series(PrometheusExposition(hub).render())
    assert before["kafka_connect_worker_rebalance_time_since_last_rebalance_ms"] == math.inf
    rebalance.rebalance_started()
    assert series(PrometheusExposition(hub).render())["kafka_connect_worker_rebalance_rebalancing"] == 1.0
    clock.ms += 250
    rebalance.rebalance_succeeded()
    clock.ms += 1000
    text = PrometheusExposition(hub).render()
    got = series(text)
    expected = {
        "kafka_connect_worker_connector_count": 2.0,
        "kafka_connect_worker_task_count": 2.0,
        f'kafka_connect_worker_connector_total_task_count{{connector="{QUOTED}"}}': 2.0,
        f'kafka_connect_worker_connector_running_task_count{{connector="{QUOTED}"}}': 1.0,
        f'kafka_connect_worker_connector_failed_task_count{{connector="{QUOTED}"}}': 1.0,
        f'kafka_connect_connector_status{{connector="{QUOTED}",status="running"}}': 1.0,
        f'kafka_connect_connector_connector_class{{connector="{QUOTED}",connector_class="x.Y"}}': 1.0,
        f'kafka_connect_connector_task_status{{connector="{QUOTED}",task="0",status="running"}}': 1.0,
        f'kafka_connect_connector_task_status{{connector="{QUOTED}",task="1",status="failed"}}': 1.0,
        f'kafka_connect_source_task_source_record_poll_total{{connector="{QUOTED}",task="0"}}': 10.0,
        f'kafka_connect_source_task_source_record_write_total{{connector="{QUOTED}",task="0"}}': 6.0,
        f'kafka_connect_source_task_source_record_active_count{{connector="{QUOTED}",task="0"}}': 4.0,
        f'kafka_connect_source_task_poll_batch_max_time_ms{{connector="{QUOTED}",task="0"}}': 4.0,
        'kafka_connect_coordinator_assigned_connectors{clientid="\\"connect-127.0.0.1:8083\\""}': 2.0,
        'kafka_connect_coordinator_assigned_tasks{clientid="\\"connect-127.0.0.1:8083\\""}': 2.0,
        "kafka_connect_worker_rebalance_rebalancing": 0.0,
        "kafka_connect_worker_rebalance_completed_rebalances_total": 1.0,
        "kafka_connect_worker_rebalance_rebalance_max_time_ms": 250.0,
        "kafka_connect_worker_rebalance_time_since_last_rebalance_ms": 1000.0,
        "kafka_connect_worker_rebalance_epoch": 7.0,
        'kafka_connect_worker_rebalance_leader_name{leader_name="http://127.0.0.1:8083/"}': 1.0,
        'kafka_connect_version_info{clientid="\\"127.0.0.1:8083\\"",version="4.3.1"}': 1.0,
    }
    assert {k: got.get(k) for k in expected} == expected
    # the exporter's rule folds -count-max and -count-avg into the -count series; the first one stays
    assert text.count("kafka_connect_source_task_source_record_active_count{") == 1
    assert "# TYPE kafka_connect_worker_connector_startup_attempts_total counter" in text
    assert "# TYPE kafka_connect_worker_rebalance_leader_name untyped" in text
    check_metrics(text)


def test_mirror_maker_2_rules_put_task_status_under_connector_status() -> None:
    hub, _ = worker_fixture(ManualClock())
    got = series(PrometheusExposition(hub, "mirror-maker-2").render())
    assert got[f'kafka_connect_connector_status{{connector="{QUOTED}",task="1",status="failed"}}'] == 1.0
    assert not any(k.startswith("kafka_connect_connector_connector_class") for k in got), (
        "no connector-metrics rule"
    )
    assert not any(k.startswith("kafka_connect_worker_rebalance_leader_name") for k in got), (
        "strings need a value"
    )
    assert not any("source_record_poll_rate" in k for k in got), "no -rate in the MM2 task rule"
    assert got["kafka_connect_worker_connector_count"] == 2.0


def test_mirror_maker_2_rules_name_the_mirror_groups() -> None:
    hub = MetricsHub(clock=ManualClock())
    mirror = hub.registry("kafka.connect.mirror")
    tags = (("source", "A"), ("target", "B"), ("topic", "A.orders"), ("partition", "3"))
    mirror.add_gauge(MetricName("record-age-ms-avg", "MirrorSourceConnector", tags), lambda now: 12.5)
    checkpoint_tags = (
        ("source", "A"),
        ("target", "B"),
        ("group", "g1"),
        ("topic", "A.orders"),
        ("partition", "0"),
    )
    mirror.add_gauge(
        MetricName("checkpoint-latency-ms", "MirrorCheckpointConnector", checkpoint_tags), lambda now: 3.0
    )
    got = series(PrometheusExposition(hub, "mirror-maker-2").render())
    assert got == {
        'kafka_connect_mirror_mirrorsourceconnector_record_age_ms_avg{source="A",target="B",topic="A.orders",partition="3"}': 12.5,
        'kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms{source="A",target="B",group="g1",topic="A.orders",partition="0"}': 3.0,
    }


def test_closed_groups_leave_the_exposition_and_the_rule_cache() -> None:
    hub, parts = worker_fixture(ManualClock())
    exposition = PrometheusExposition(hub)
    assert MM2.replace(">", "") not in exposition.render()
    for key in ("connector", "source", "counts"):
        parts[key].close()  # type: ignore[attr-defined]
    for task in parts["tasks"].values():  # type: ignore[attr-defined]
        task.close()
    text = exposition.render()
    assert "A->B" not in text
    parts["metrics"].close()  # type: ignore[attr-defined]
    assert not any(line.startswith("kafka_") for line in exposition.render().splitlines())


def test_a_gauge_that_raises_or_answers_none_is_left_out() -> None:
    hub = MetricsHub(clock=ManualClock())
    registry = hub.registry("kafka.connect")
    registry.add_gauge(MetricName("task-count", "connect-worker-metrics"), lambda now: 1 / 0)
    registry.add_gauge(MetricName("connector-count", "connect-worker-metrics"), lambda now: None)
    registry.add_gauge(MetricName("epoch", "connect-worker-rebalance-metrics"), lambda now: 2)
    assert series(PrometheusExposition(hub).render()) == {"kafka_connect_worker_rebalance_epoch": 2.0}


def test_render_escapes_labels_and_help_and_keeps_the_first_duplicate() -> None:
    text = render(
        [
            Sample("a", (("l", 'x"y\\z\nw'),), 1.0, "gauge", "help \\ with\nnewline"),
            Sample("a", (("l", 'x"y\\z\nw'),), 2.0, "gauge", "other"),
            Sample("b_total", (), math.inf, "counter", "b"),
        ]
    )
    assert text == (
        "# HELP a help \\\\ with\\nnewline\n# TYPE a gauge\n"
        'a{l="x\\"y\\\\z\\nw"} 1.0\n'
        "# HELP b_total b\n# TYPE b_total counter\nb_total +Inf\n"
    )
    check_metrics(text)


def test_process_and_event_loop_series_are_well_formed() -> None:
    lag = EventLoopLag()
    lag.observe(0.25)
    lag.observe(0.125)
    samples = process_samples() + lag.samples()
    names = {s.name for s in samples}
    assert {
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_start_time_seconds",
        "process_open_fds",
        "python_eventloop_lag_seconds",
    } <= names
    values = {s.name: s.value for s in samples}
    assert values["python_eventloop_lag_seconds"] == 0.125
    assert values["python_eventloop_lag_max_seconds"] == 0.25
    assert values["process_resident_memory_bytes"] > 1_000_000
    assert lag.samples()[1].value == 0.125, "the maximum restarts at each scrape"
    check_metrics(render(samples))


def test_state_tracker_ratios_are_javas() -> None:
    tracker = StateTracker()
    assert tracker.duration_ratio(State.RUNNING, 5) == 0.0
    tracker.change_state(State.RUNNING, 0)
    tracker.change_state(State.PAUSED, 300)
    assert tracker.duration_ratio(State.RUNNING, 400) == 0.75
    assert tracker.duration_ratio(State.PAUSED, 400) == 0.25
    tracker.change_state(State.STOPPED, 400)
    # Java leaves time spent STOPPED out of the denominator
    assert tracker.duration_ratio(State.STOPPED, 500) == 100 / 500
    tracker.change_state(State.RUNNING, 500)
    assert tracker.duration_ratio(State.RUNNING, 600) == 400 / 500


def test_task_commit_percentages_are_windowed_fractions() -> None:
    clock = ManualClock()
    hub = MetricsHub(clock=clock)
    task = TaskMetrics(ConnectMetrics("w", hub), "c", 0, State.RUNNING)
    task.record_commit(10, True)
    task.record_commit(30, True)
    task.record_commit(99, False)
    got = {r.name.name: r.value for r in hub.read() if r.name.group == "connector-task-metrics"}
    assert got["offset-commit-success-percentage"] == 2 / 3
    assert got["offset-commit-failure-percentage"] == 1 / 3
    assert got["offset-commit-avg-time-ms"] == 20.0, "failed commits do not count towards the times"
    clock.ms += 60_000
    got = {r.name.name: r.value for r in hub.read() if r.name.group == "connector-task-metrics"}
    assert got["offset-commit-success-percentage"] == 0.0
    assert math.isnan(got["offset-commit-avg-time-ms"])


def test_task_error_metrics_are_named_as_the_exporter_names_them() -> None:
    clock = ManualClock()
    hub = MetricsHub(clock=clock)
    errors = TaskErrorMetrics(ConnectMetrics("w", hub), MM2, 0)
    errors.record_failure()
    errors.record_failure()
    errors.record_retry()
    errors.record_error_timestamp(0)
    got = series(PrometheusExposition(hub).render())
    labels = '{connector="\\"A->B.MirrorSourceConnector\\"",task="0"}'
    assert {k: v for k, v in got.items() if k.startswith("kafka_connect_task_error_")} == {
        f"kafka_connect_task_error_{name}{labels}": value
        for name, value in (
            ("total_record_failures", 2.0),
            ("total_record_errors", 0.0),
            ("total_records_skipped", 0.0),
            ("total_retries", 1.0),
            ("total_errors_logged", 0.0),
            ("deadletterqueue_produce_requests", 0.0),
            ("deadletterqueue_produce_failures", 0.0),
            ("last_error_timestamp", float(clock.ms)),
        )
    }
