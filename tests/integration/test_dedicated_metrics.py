"""Dedicated MirrorMaker's metrics listener (``metrics.listener``) against real clusters.

One ``pyconnect mirror-maker`` process runs two flows, A->B and B->A, with the listener on a free port of
127.0.0.1. Records produced on each side after the start are mirrored; then:

- ``GET /metrics`` passes ``promtool check metrics`` and holds one series set for both flows: the
  worker-level series once per flow (``source``/``target`` labels), the MirrorSource record counts
  equal to what was mirrored per flow;
- a real Prometheus scraping the listener finds ``record_count``, ``record_rate``,
  ``replication_latency_ms`` (+ ``_avg``) for the topic of each flow with its labels;
- ``GET /mirrors`` lists both flows ``IN_SYNC``; the status page loads in headless Chromium showing
  both (the screenshot is kept under the test's tmp dir).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyconnect.kafka.clients import create_consumer
from pyconnect.kafka.log import TopicPartition
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker
from tests.headless_browser import chromium
from tests.integration.fleet import wait_for
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2
from tests.integration.test_metrics_endpoint import CONTENT_TYPE, matching, parse
from tests.integration.test_mirror_dedicated import QUICK_REFRESH, fast_group, render
from tests.integration.test_mirror_status import create_topics, produce, render_page
from tests.promtool import check_metrics, prometheus_query, prometheus_server

pytestmark = pytest.mark.kafka

_LISTENING = re.compile(r"Metrics listener serving /metrics, /mirrors and /mirrors/ui at (\S+)")


async def _end_offsets_total(bootstrap: str, topic: str) -> int:
    consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer._client.force_metadata_update()
        partitions = consumer.partitions_for_topic(topic) or set()
        if not partitions:
            return 0
        ends = await consumer.end_offsets([TopicPartition(topic, p) for p in partitions])
        return int(sum(ends.values()))
    finally:
        await consumer.stop()


def end_offsets_total(bootstrap: str, topic: str) -> int:
    """The sum of ``topic``'s end offsets (0 while it does not exist)."""
    return asyncio.run(_end_offsets_total(bootstrap, topic))


def get(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.headers["Content-Type"], response.read().decode("utf-8")


def test_two_flows_on_one_listener(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    chromium()
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("dm")
    ta, tb = f"{prefix}-a", f"{prefix}-b"
    asyncio.run(create_topics(a, ta))
    asyncio.run(create_topics(b, tb))
    path = tmp_path / "mm2.properties"
    path.write_text(
        render(
            {
                "clusters": "A, B",
                "A.bootstrap.servers": a,
                "B.bootstrap.servers": b,
                "A->B.enabled": "true",
                "B->A.enabled": "true",
                "topics": f".*{prefix}.*",
                "groups": f"{prefix}-none",
                "metrics.listener": "http://127.0.0.1:0",
                **SINGLE_BROKER_MM2,
                **QUICK_REFRESH,
                **fast_group("A", "B"),
            }
        )
    )
    process = PyconnectMirrorMaker(path, tmp_path / "node", die_with_parent=True)
    started = time.monotonic()
    process.start()
    try:
        process.wait_started()
        found = _LISTENING.search(process.log_since_start())
        assert found, process.log_tail()
        url = found.group(1).rstrip("/")
        # each side's heartbeats topic is a new topic for the other flow's task (a reconfiguration that
        # restarts it, and its metrics start over): produce once both are being mirrored
        wait_for("B/A.heartbeats", lambda: end_offsets_total(b, "A.heartbeats") > 0, 45, 0.5)
        wait_for("A/B.heartbeats", lambda: end_offsets_total(a, "B.heartbeats") > 0, 45, 0.5)
        asyncio.run(produce(a, ta, 120))
        asyncio.run(produce(b, tb, 80))
        wait_for(f"B/A.{ta} to hold 120", lambda: end_offsets_total(b, f"A.{ta}") == 120, 45, 0.5)
        wait_for(f"A/B.{tb} to hold 80", lambda: end_offsets_total(a, f"B.{tb}") == 80, 45, 0.5)

        def counted() -> dict[str, Any] | None:
            content_type, text = get(url + "/metrics")
            assert content_type == CONTENT_TYPE
            series = parse(text)
            counts = {
                (dict(labels)["source"], dict(labels)["target"]): value
                for labels, value in matching(
                    series, "kafka_connect_mirror_mirrorsourceconnector_record_count"
                ).items()
                if dict(labels)["topic"] in (f"A.{ta}", f"B.{tb}")
            }
            return {"text": text, "series": series} if counts == {("A", "B"): 120, ("B", "A"): 80} else None

        scraped = wait_for("record counts of both flows in /metrics", counted, 30, 0.5)
        check_metrics(scraped["text"])
        series = scraped["series"]
        task_counts = matching(series, "kafka_connect_worker_task_count")
        assert {(dict(ls)["source"], dict(ls)["target"]) for ls in task_counts} == {("A", "B"), ("B", "A")}
        assert all(v >= 1 for v in task_counts.values()), task_counts
        statuses = matching(series, "kafka_connect_connector_status", status="running")
        assert {(dict(ls)["connector"], dict(ls)["source"], dict(ls)["target"]) for ls in statuses} >= {
            ("MirrorSourceConnector", "A", "B"),
            ("MirrorSourceConnector", "B", "A"),
        }
        assert matching(series, "process_resident_memory_bytes")

        target = url.split("://", 1)[1]
        with prometheus_server(tmp_path, [target]) as port:
            wait_for("Prometheus to scrape the listener", lambda: prometheus_query(port, "up == 1"), 45, 0.5)
            for name in (
                "record_count",
                "record_rate",
                "replication_latency_ms",
                "replication_latency_ms_avg",
            ):
                for (source, dest), topic in ((("A", "B"), f"A.{ta}"), (("B", "A"), f"B.{tb}")):
                    query = (
                        f"kafka_connect_mirror_mirrorsourceconnector_{name}"
                        f'{{source="{source}",target="{dest}",topic="{topic}",partition="0"}}'
                    )
                    result = wait_for(query, lambda q=query: prometheus_query(port, q), 20, 0.5)
                    value = float(result[0]["value"][1])  # type: ignore[index]
                    if name == "record_count":
                        assert value == (120 if source == "A" else 80), result
                    elif name.startswith("replication_latency"):
                        assert 0 <= value < 60_000, (query, value)
            print("\nPrometheus returned MirrorSource series of A->B and B->A")

        def in_sync() -> dict[str, Any] | None:
            _, text = get(url + "/mirrors")
            flows = {f["flow"]: f for f in json.loads(text)["flows"]}
            ok = set(flows) == {"A->B", "B->A"} and all(f["status"] == "IN_SYNC" for f in flows.values())
            return flows if ok else None

        flows = wait_for("both flows IN_SYNC in /mirrors", in_sync, 30, 0.5)
        assert {t["topic"] for t in flows["A->B"]["topics"]} >= {f"A.{ta}"}
        assert {t["topic"] for t in flows["B->A"]["topics"]} >= {f"B.{tb}"}
        assert {c["name"] for c in flows["A->B"]["connectors"]} >= {"MirrorSourceConnector"}

        shot = tmp_path / "dedicated-status.png"
        dom = render_page(url + "/mirrors/ui", shot)
        for flow in ("A-&gt;B", "B-&gt;A"):
            assert f'data-flow="{flow}" data-status="IN_SYNC"' in dom, dom[-3000:]
        print(f"screenshot of the dedicated status page: {shot}; took {time.monotonic() - started:.1f} s")
    finally:
        process.stop(timeout=30)
