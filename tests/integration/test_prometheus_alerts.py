"""The shipped alert rules (deploy/prometheus/pyconnect-alerts.yml) on a real Prometheus against a live
worker: a MirrorSourceConnector S -> B (target latency 4 s, so the source counts as unreachable after
2 s) runs on a pyconnect worker, Prometheus scrapes the worker's ``GET /metrics`` every second and
evaluates the rules every second. The source cluster S is the test's own, one broker:

- with the broker stopped, ``PyconnectMirrorSourceUnreachable`` (the ``SOURCE_UNREACHABLE`` condition of
  the flow, cluster S) is firing in ``/api/v1/alerts``, then ``PyconnectMirrorFlowNotInSync`` once the
  flow has been out of sync for its rule's 30 s; meanwhile the Grafana dashboard's fault panels
  (``Conditions``) answer with the condition;
- with the broker started again, both alerts resolve (leave the list).

The times from the stop and from the start are printed.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import fleet, own_cluster, python_workers, running_tasks, wait_for
from tests.integration.test_grafana_dashboard import dashboard_queries
from tests.integration.test_mirror_status import create_topics, produce
from tests.promtool import prometheus_query, prometheus_server

pytestmark = pytest.mark.kafka

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "pyconnect-alerts.yml"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
UNREACHABLE = "PyconnectMirrorSourceUnreachable"
NOT_IN_SYNC = "PyconnectMirrorFlowNotInSync"


@pytest.fixture(scope="module")
def lone_source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with own_cluster(tmp_path_factory.mktemp("alert-source"), "S", brokers=1) as cluster:
        yield cluster


def source_config(source: str, target: str, topic: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "S",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.acls.enabled": "false",
        "pyconnect.mirror.target.latency.ms": "4000",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }


def alerts(port: int) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/alerts"
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", body
    return list(body["data"]["alerts"])


def firing(port: int, name: str) -> list[dict[str, Any]]:
    return [a for a in alerts(port) if a["labels"]["alertname"] == name and a["state"] == "firing"]


def listed(port: int, name: str) -> list[dict[str, Any]]:
    return [a for a in alerts(port) if a["labels"]["alertname"] == name]


def in_sync(worker: Any) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    flows = [f for f in body["flows"] if f["flow"] == "S->B" and f["status"] == "IN_SYNC"]
    return flows[0] if flows and flows[0]["topics"] else None


@pytest.mark.long  # ~50 s; tests/unit/metrics/test_prometheus_alerts.py runs the rules through promtool in make test
def test_a_source_outage_fires_and_resolves_the_shipped_alerts(
    cluster_b: ClusterHandle,
    lone_source: KafkaCluster,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    source, target = lone_source.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("alerted")
    asyncio.run(create_topics(source, topic))
    with fleet(python_workers(target, tmp_path, unique("alerts"), 1)) as (worker,):
        code, body = worker.rest(
            "POST", "/connectors", {"name": "mirror", "config": source_config(source, target, topic)}
        )
        assert code == 201, body
        wait_for("the source task RUNNING", lambda: running_tasks(worker, "mirror", 1), 60)
        asyncio.run(produce(source, topic, 50))
        wait_for("S->B IN_SYNC with its topic", lambda: in_sync(worker), 60, 0.5)
        scrape = urllib.parse.urlsplit(worker.rest_url).netloc
        with prometheus_server(tmp_path, [scrape], rules=[RULES]) as port:
            wait_for(
                "Prometheus to see S->B in sync",
                lambda: prometheus_query(port, 'pyconnect_mirror_flow_in_sync{flow="S->B"} == 1'),
                45,
                0.5,
            )
            assert not alerts(port), alerts(port)

            (node,) = lone_source.nodes
            stopped = time.monotonic()
            node.stop(timeout=20)
            (alert,) = wait_for(f"{UNREACHABLE} firing", lambda: firing(port, UNREACHABLE), 45, 0.5)
            fired = time.monotonic() - stopped
            assert alert["labels"] == {
                "alertname": UNREACHABLE,
                "flow": "S->B",
                "source": "S",
                "target": "B",
                "code": "SOURCE_UNREACHABLE",
                "cluster": "S",
                "severity": "critical",
            }, alert
            assert alert["annotations"]["summary"] == "S->B: the source cluster S answers no fetch", alert
            for title, query in dashboard_queries(fault=True):
                shown = prometheus_query(port, query)
                codes = {cast(dict[str, str], s["metric"]).get("code") for s in shown}
                assert "SOURCE_UNREACHABLE" in codes, (title, query, shown)
            (flow_alert,) = wait_for(f"{NOT_IN_SYNC} firing", lambda: firing(port, NOT_IN_SYNC), 60, 0.5)
            out_of_sync = time.monotonic() - stopped
            assert flow_alert["labels"]["flow"] == "S->B", flow_alert
            assert len(listed(port, UNREACHABLE)) == 1

            started = time.monotonic()
            node.start()
            wait_for(f"{UNREACHABLE} resolved", lambda: not listed(port, UNREACHABLE), 60, 0.5)
            resolved = time.monotonic() - started
            wait_for(f"{NOT_IN_SYNC} resolved", lambda: not listed(port, NOT_IN_SYNC), 60, 0.5)
            back_in_sync = time.monotonic() - started
    print(
        f"\nbroker stopped: {UNREACHABLE} firing after {fired:.1f} s, {NOT_IN_SYNC} after {out_of_sync:.1f} s;"
        f" broker started: resolved after {resolved:.1f} s and {back_in_sync:.1f} s"
    )
