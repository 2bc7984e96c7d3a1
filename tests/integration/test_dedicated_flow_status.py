"""Dedicated MirrorMaker's metrics listener serves the flows' ``pyconnect_mirror_*`` series as a worker's
``GET /metrics`` does (pyconnect.metrics.flow_status): one ``pyconnect mirror-maker`` process mirrors
A -> B with ``metrics.listener`` on a free port of 127.0.0.1; once records produced after the start are
copied, its ``/metrics`` holds the flow's status state set (IN_SYNC at 1, every other status at 0), its
in-sync gauge, the topic's partition record lag and lag in seconds and the heartbeat age, and promtool
accepts the exposition."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pyconnect.mirror_status.core import STATUSES
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker
from tests.integration.fleet import wait_for
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2
from tests.integration.test_dedicated_metrics import end_offsets_total, get
from tests.integration.test_metrics_endpoint import Series, matching, parse
from tests.integration.test_mirror_dedicated import QUICK_REFRESH, fast_group, render
from tests.integration.test_mirror_status import create_topics, produce
from tests.promtool import check_metrics

pytestmark = pytest.mark.kafka

_LISTENING = re.compile(r"Metrics listener serving /metrics, /mirrors and /mirrors/ui at (\S+)")
AB = {"flow": "A->B", "source": "A", "target": "B"}


def test_the_metrics_listener_serves_the_flow_status_series(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("dfs")
    asyncio.run(create_topics(a, topic))
    path = tmp_path / "mm2.properties"
    path.write_text(
        render(
            {
                "clusters": "A, B",
                "A.bootstrap.servers": a,
                "B.bootstrap.servers": b,
                "A->B.enabled": "true",
                "A->B.topics": topic,
                "groups": f"{topic}-none",
                "A->B.pyconnect.mirror.target.latency.ms": "10000",
                "metrics.listener": "http://127.0.0.1:0",
                **SINGLE_BROKER_MM2,
                **QUICK_REFRESH,
                **fast_group("B"),
            }
        )
    )
    process = PyconnectMirrorMaker(path, tmp_path / "node", die_with_parent=True)
    process.start()
    try:
        process.wait_started()
        found = _LISTENING.search(process.log_since_start())
        assert found, process.log_tail()
        url = found.group(1).rstrip("/")
        asyncio.run(produce(a, topic, 30))
        wait_for(f"B/A.{topic} to hold 30", lambda: end_offsets_total(b, f"A.{topic}") == 30, 45, 0.5)

        def flow_series() -> tuple[str, Series] | None:
            _, text = get(url + "/metrics")
            series = parse(text)
            statuses = {
                dict(labels)["status"]: value
                for labels, value in matching(series, "pyconnect_mirror_flow_status", **AB).items()
            }
            partition = {"topic": f"A.{topic}", "partition": "0", **AB}
            ready = (
                statuses == {s: (1.0 if s == "IN_SYNC" else 0.0) for s in STATUSES}
                and matching(series, "pyconnect_mirror_partition_record_lag", **partition)
                and matching(series, "pyconnect_mirror_partition_lag_seconds", **partition)
                and matching(series, "pyconnect_mirror_heartbeat_age_seconds", **AB)
            )
            return (text, series) if ready else None

        def flow_view() -> object:
            _, body = get(url + "/mirrors")
            return [{k: f.get(k) for k in ("status", "reasons", "topics")} for f in json.loads(body)["flows"]]

        text, series = wait_for("the flow series of A->B IN_SYNC", flow_series, 60, 0.5, flow_view)
        assert list(matching(series, "pyconnect_mirror_flow_in_sync", **AB).values()) == [1.0]
        partition = {"topic": f"A.{topic}", "partition": "0", **AB}
        assert list(matching(series, "pyconnect_mirror_partition_record_lag", **partition).values()) == [0.0]
        assert not matching(series, "pyconnect_mirror_condition", **AB)
        check_metrics(text)
    finally:
        process.stop(timeout=30)
