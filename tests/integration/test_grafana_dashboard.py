"""The Grafana dashboard in deploy/grafana answers on real data: a worker mirrors a topic of A to B
with MirrorSourceConnector and MirrorCheckpointConnector (a consumer group committed on A), a real
Prometheus scrapes it with the scrape settings of deploy/prometheus, and every query of every panel
returns at least one series, but those of :data:`FAULT_PANELS`, which show only what is wrong
(tests/integration/test_prometheus_alerts.py checks them during a source outage). promtool accepts the
scrape example."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_checkpoint import commit_group, quick_checkpoints
from tests.integration.test_mirror_source import create_and_fill, mirror_config, source_rows, wait_mirrored
from tests.promtool import prometheus_query, prometheus_server, promtool

pytestmark = pytest.mark.kafka

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
DASHBOARD = DEPLOY / "grafana" / "pyconnect-mirror.json"
RECORDS = 200
FAULT_PANELS = frozenset({"Conditions"})


def dashboard_queries(fault: bool = False) -> list[tuple[str, str]]:
    """(panel title, PromQL) for every target of every panel: of the :data:`FAULT_PANELS` with
    ``fault``, of the others without."""
    dashboard = json.loads(DASHBOARD.read_text())
    return [
        (panel["title"], target["expr"])
        for panel in dashboard["panels"]
        if (panel["title"] in FAULT_PANELS) == fault
        for target in panel["targets"]
    ]


def test_the_scrape_example_is_a_valid_prometheus_config() -> None:
    done = subprocess.run(
        [promtool(), "check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")


def test_every_dashboard_panel_returns_series_for_a_live_mirror(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    queries = dashboard_queries()
    assert len(queries) >= 20, queries
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("dash")
    topic, group = f"{prefix}-t", unique("dash-group")
    asyncio.run(create_and_fill(a, topic, 2, RECORDS))
    expected = source_rows(a, topic, RECORDS)
    asyncio.run(commit_group(a, group, topic))
    with fleet(python_workers(b, tmp_path, unique("dash-worker"), 1)) as (worker,):
        connectors = {
            "mirror-source": mirror_config(cluster_a, cluster_b, f"{prefix}-.*"),
            "mirror-checkpoint": quick_checkpoints(cluster_a, cluster_b, group, f"{prefix}-.*"),
        }
        for name, config in connectors.items():
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        wait_for("the source tasks RUNNING", lambda: running_tasks(worker, "mirror-source", 2), 60)
        wait_mirrored(b, f"A.{topic}", expected, 60)
        target = urllib.parse.urlsplit(worker.rest_url).netloc
        with prometheus_server(tmp_path, [target]) as port:
            wait_for("Prometheus to scrape the worker", lambda: prometheus_query(port, "up == 1"), 45, 0.5)
            answered: dict[str, int] = {}
            for title, query in queries:
                found = wait_for(
                    f"series for panel {title!r}: {query}", lambda q=query: prometheus_query(port, q), 60, 1.0
                )
                answered[query] = len(found)
            checkpoint = prometheus_query(
                port, "kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms_avg"
            )
            assert {s["metric"]["group"] for s in checkpoint} == {group}, checkpoint  # type: ignore[index]
    print(f"\n{len(answered)} dashboard queries answered: " + ", ".join(f"{n}" for n in answered.values()))
