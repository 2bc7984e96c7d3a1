"""``GET /metrics`` of real workers on real Kafka: the series Strimzi's Connect dashboards and alerts
query exist on every worker with values that add up to the cluster's assignment, the exposition passes
``promtool check metrics``, and a real Prometheus server scrapes it."""

from __future__ import annotations

import math
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from pyconnect.testing.standalone_process import StandaloneWorker
from tests.integration.fleet import (
    fleet,
    python_workers,
    read_seqnos_sync,
    running_tasks,
    status,
    verifiable,
    wait_for,
)
from tests.promtool import check_metrics, prometheus_query, prometheus_server

pytestmark = pytest.mark.kafka

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(worker: ConnectWorkerProcess) -> str:
    with urllib.request.urlopen(worker.rest_url.rstrip("/") + "/metrics", timeout=30) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == CONTENT_TYPE
        return str(response.read().decode("utf-8"))


def parse(text: str) -> Series:
    out: Series = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        assert match, line
        labels = frozenset(
            (k, v.replace('\\"', '"').replace("\\\\", "\\")) for k, v in _LABEL.findall(match.group(2) or "")
        )
        out[(match.group(1), labels)] = float(match.group(3).replace("+Inf", "inf"))
    return out


def value(series: Series, name: str, **labels: str) -> float | None:
    return series.get((name, frozenset(labels.items())))


def matching(series: Series, name: str, **labels: str) -> dict[frozenset[tuple[str, str]], float]:
    wanted = set(labels.items())
    return {ls: v for (n, ls), v in series.items() if n == name and wanted <= set(ls)}


def total(scrapes: list[Series], name: str, **labels: str) -> float:
    return sum(sum(matching(s, name, **labels).values()) for s in scrapes)


def test_two_workers_expose_the_dashboard_series_for_a_source_connector(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("metrics"), unique("out")
    workers = python_workers(cluster_a.bootstrap_servers, tmp_path, group, 2)
    with fleet(workers):
        a, b = workers
        assert a.rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 3, 100)})[0] == 201
        owners = wait_for("3 RUNNING tasks", lambda: running_tasks(a, "verif", 3), 60)
        connector_owner = status(a, "verif")["connector"]["worker_id"]  # type: ignore[index]
        time.sleep(3)  # a few offset commits (offset.flush.interval.ms=1000)

        texts = [scrape(w) for w in workers]
        for text in texts:
            check_metrics(text)
        scrapes = [parse(t) for t in texts]
        leader = group_leader_url(cluster_a.bootstrap_servers, group)
        for worker, series in zip(workers, scrapes, strict=True):
            mine = sorted(t for t, w in owners.items() if w == worker.worker_id)
            runs_connector = connector_owner == worker.worker_id
            assert value(series, "kafka_connect_worker_task_count") == len(mine)
            assert value(series, "kafka_connect_worker_connector_count") == (1 if runs_connector else 0)
            [(client, assigned_tasks)] = matching(series, "kafka_connect_coordinator_assigned_tasks").items()
            assert dict(client)["clientid"] == f'"connect-{worker.worker_id}"', "quoted as JMX quotes it"
            assert assigned_tasks == len(mine)
            assert sum(matching(series, "kafka_connect_coordinator_assigned_connectors").values()) == (
                1 if runs_connector else 0
            )
            assert value(series, "kafka_connect_worker_rebalance_rebalancing") == 0.0
            assert (value(series, "kafka_connect_worker_rebalance_completed_rebalances_total") or 0) >= 1
            assert (
                value(series, "kafka_connect_worker_rebalance_leader_name", leader_name=leader or "") == 1.0
            )
            assert value(
                series, "kafka_connect_worker_rebalance_connect_protocol", connect_protocol="SESSIONED"
            )
            assert (
                0
                <= (value(series, "kafka_connect_worker_rebalance_time_since_last_rebalance_ms") or -1)
                < math.inf
            )
            if mine:
                assert value(
                    series, "kafka_connect_worker_connector_total_task_count", connector="verif"
                ) == len(mine)
                assert value(
                    series, "kafka_connect_worker_connector_running_task_count", connector="verif"
                ) == len(mine)
                assert (
                    value(series, "kafka_connect_worker_connector_failed_task_count", connector="verif")
                    == 0.0
                )
            for task in mine:
                labels = {"connector": "verif", "task": str(task)}
                assert value(series, "kafka_connect_connector_task_status", status="running", **labels) == 1.0
                commit_ms = value(series, "kafka_connect_connector_task_offset_commit_avg_time_ms", **labels)
                assert commit_ms is not None and 0 <= commit_ms < 5000, commit_ms
                assert not matching(
                    series, "kafka_connect_connector_task_offset_commit_success_percentage"
                ), "the Connect rules export no -percentage task metric"
                assert (
                    value(series, "kafka_connect_source_task_source_record_active_count", **labels)
                    is not None
                )
                assert (
                    value(series, "kafka_connect_source_task_source_record_write_total", **labels) or 0
                ) > 0
                assert (value(series, "kafka_connect_source_task_source_record_poll_rate", **labels) or 0) > 0
            connector_status = matching(series, "kafka_connect_connector_status", connector="verif")
            assert connector_status == (
                {frozenset({("connector", "verif"), ("status", "running")}): 1.0} if runs_connector else {}
            )
            if runs_connector:
                assert value(
                    series,
                    "kafka_connect_connector_connector_class",
                    connector="verif",
                    connector_class="org.apache.kafka.connect.tools.VerifiableSourceConnector",
                )
        assert total(scrapes, "kafka_connect_worker_task_count") == 3
        assert total(scrapes, "kafka_connect_worker_connector_count") == 1
        assert total(scrapes, "kafka_connect_worker_task_startup_success_total") == 3
        assert total(scrapes, "kafka_connect_worker_connector_startup_success_total") == 1

        # records written, as counted by the metrics, are the records in the topic once nothing is in flight
        assert b.rest("PUT", "/connectors/verif/pause")[0] == 202
        wait_for(
            "PAUSED tasks",
            lambda: {t["state"] for t in (status(a, "verif") or {"tasks": []})["tasks"]} == {"PAUSED"},
            30,
        )
        time.sleep(2)
        paused = [parse(scrape(w)) for w in workers]
        written = total(paused, "kafka_connect_source_task_source_record_write_total", connector="verif")
        in_topic = sum(len(v) for v in read_seqnos_sync(cluster_a.bootstrap_servers, topic).values())
        assert written == in_topic > 0
        assert (
            total(paused, "kafka_connect_source_task_source_record_poll_total", connector="verif") >= written
        )
        assert total(paused, "kafka_connect_connector_task_status", connector="verif", status="paused") == 3

        # a deleted connector's series go with it, and the exposition stays well-formed meanwhile
        assert a.rest("DELETE", "/connectors/verif")[0] == 204
        for _ in range(10):
            for worker in workers:
                check_metrics(scrape(worker))
        wait_for(
            "no series of the deleted connector",
            lambda: all('"verif"' not in scrape(w) for w in workers),
            30,
        )
        assert total([parse(scrape(w)) for w in workers], "kafka_connect_worker_task_count") == 0


def test_the_standalone_worker_serves_metrics_without_group_series(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    worker = StandaloneWorker(
        cluster_a.bootstrap_servers,
        tmp_path / "standalone",
        extra={"offset.flush.interval.ms": 500},
        connectors={"verif": verifiable(unique("standalone"), 2)},
        die_with_parent=True,
    )
    try:
        worker.start()
        worker.wait_ready()
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "verif", 2), 60)
        text = scrape(worker)
        check_metrics(text)
        series = parse(text)
        assert value(series, "kafka_connect_worker_task_count") == 2.0
        assert value(series, "kafka_connect_connector_status", connector="verif", status="running") == 1.0
        assert not matching(series, "kafka_connect_worker_rebalance_rebalancing"), (
            "Java's standalone has none"
        )
        assert not matching(series, "kafka_connect_coordinator_assigned_tasks")
        assert value(series, "process_open_fds")
    finally:
        worker.stop(timeout=30)


QUERIES = (
    "kafka_connect_worker_connector_count",
    "kafka_connect_worker_task_count",
    "kafka_connect_coordinator_assigned_connectors",
    "kafka_connect_coordinator_assigned_tasks",
    "kafka_connect_worker_rebalance_rebalancing",
    'kafka_connect_connector_status{status="running"}',
    "kafka_connect_worker_connector_failed_task_count",
    "kafka_connect_connector_task_offset_commit_avg_time_ms",
    "kafka_connect_source_task_source_record_active_count",
    'kafka_producer_outgoing_byte_total{clientid=~"connector-producer-verif-.*"} > 0',
    'kafka_producer_buffer_available_bytes{clientid=~"connector-producer-verif-.*"}',
    "process_resident_memory_bytes",
    "python_eventloop_lag_seconds",
)


def test_a_real_prometheus_scrapes_a_worker(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    [worker] = python_workers(cluster_a.bootstrap_servers, tmp_path, unique("prom"), 1)
    with fleet([worker]):
        assert (
            worker.rest("POST", "/connectors", {"name": "verif", "config": verifiable(unique("out"), 1)})[0]
            == 201
        )
        wait_for("1 RUNNING task", lambda: running_tasks(worker, "verif", 1), 60)
        target = urllib.parse.urlsplit(worker.rest_url).netloc
        with prometheus_server(tmp_path, [target]) as port:
            up = wait_for(
                "Prometheus to scrape the worker", lambda: prometheus_query(port, "up == 1"), 45, 0.5
            )
            assert up[0]["metric"]["instance"] == target  # type: ignore[index]
            found = {
                query: wait_for(query, lambda q=query: prometheus_query(port, q), 20, 0.5)
                for query in QUERIES
            }  # type: ignore[misc]
            assert float(found["kafka_connect_worker_task_count"][0]["value"][1]) == 1.0  # type: ignore[index]
            [running] = found['kafka_connect_connector_status{status="running"}']
            assert running["metric"]["connector"] == "verif"  # type: ignore[index]
            print("\nPrometheus returned series for: " + ", ".join(found))
