"""A flow's liveness on real Kafka, asked of every worker of a two-worker fleet (the one that runs a
task and the one that does not):

- heartbeats written on A every second by a MirrorHeartbeatConnector (flow B->A, as dedicated mode runs
  it for the reverse pair) cross the A->B MirrorSourceConnector as ``A.heartbeats``; ``GET /mirrors``
  shows their age while every other topic is idle, the flow stays IN_SYNC, and once the heartbeats stop
  (the heartbeat connector paused) the flow has ``HEARTBEATS_MISSING`` and is STALLED within the bound,
  and IN_SYNC again within seconds of their return;
- a healthy flow at 1,000 records/s with idle topics beside the busy one raises no condition and never
  leaves IN_SYNC (1 minute here; 10 minutes in ``make chaos``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from pyconnect.testing.backends import ClusterHandle
from tests.alert_watch import AlertWatch
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_source import mirror_config
from tests.integration.test_mirror_status import create_topics

pytestmark = pytest.mark.kafka

HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
BOUND_MS = 5_000


def heartbeat_config(a: ClusterHandle, b: ClusterHandle) -> dict[str, str]:
    """Heartbeats written on A (the target of the reverse pair B->A): the task's records go to the
    worker's producer, so it is pointed at A as a Connect cluster beside A would have it."""
    return {
        "producer.override.bootstrap.servers": a.bootstrap_servers,
        "connector.class": HEARTBEAT,
        "tasks.max": "1",
        "source.cluster.alias": "B",
        "target.cluster.alias": "A",
        "source.cluster.bootstrap.servers": b.bootstrap_servers,
        "target.cluster.bootstrap.servers": a.bootstrap_servers,
        "emit.heartbeats.interval.seconds": "1",
        "heartbeats.topic.replication.factor": "1",
    }


def flows(worker: Any) -> dict[str, Any]:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    found = [f for f in body["flows"] if f["flow"] == "A->B"]
    assert found, body
    return found[0]


def same_on_every_worker(
    workers: Any, probe: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]] | None:
    views = [flows(w) for w in workers]
    LAST_VIEWS[0] = views
    return views if all(probe(v) for v in views) else None


LAST_VIEWS: list[list[dict[str, Any]]] = [[]]
"""The views last read (printed after each test, for a wait that timed out)."""


@pytest.fixture(autouse=True)
def _show_last_views() -> Any:
    yield
    if LAST_VIEWS[0]:
        keys = ("status", "reasons", "conditions", "heartbeat_age_ms", "topics")
        print(f"last views: {[{k: v.get(k) for k in keys} for v in LAST_VIEWS[0]]}")
        LAST_VIEWS[0] = []


def codes(view: dict[str, Any]) -> list[str]:
    return [c["code"] for c in view["conditions"]]


def test_heartbeats_show_an_idle_flow_alive_and_their_absence_stalls_it(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
    alerts: AlertWatch,
) -> None:
    idle = unique("live-idle")
    asyncio.run(create_topics(cluster_a.bootstrap_servers, idle))
    config = mirror_config(
        cluster_a,
        cluster_b,
        idle,
        **{"tasks.max": "1", "pyconnect.mirror.heartbeats.max.age.ms": str(BOUND_MS)},
    )
    with fleet(python_workers(cluster_b.bootstrap_servers, tmp_path, unique("live-group"), 2)) as workers:
        first = workers[0]
        alerts.scrape([w.rest_url for w in workers])
        code, body = first.rest(
            "PUT", "/connectors/mirror/config", {**config, "pyconnect.mirror.heartbeats.max.age.ms": "0"}
        )
        assert code == 400 and "pyconnect.mirror.heartbeats.max.age.ms" in body["message"], body
        assert first.rest("PUT", "/connectors/hb/config", heartbeat_config(cluster_a, cluster_b))[0] == 201
        assert first.rest("PUT", "/connectors/mirror/config", config)[0] == 201
        wait_for(
            "both connectors RUNNING",
            lambda: running_tasks(first, "hb", 1) and running_tasks(first, "mirror", 1),
            60,
        )

        alive = wait_for(
            "A->B IN_SYNC with a fresh heartbeat on both workers",
            lambda: same_on_every_worker(
                workers,
                lambda v: (
                    v["status"] == "IN_SYNC"
                    and v["heartbeat_age_ms"] is not None
                    and v["heartbeat_age_ms"] < BOUND_MS
                ),
            ),
            90,
        )
        assert all(v["conditions"] == [] and v["heartbeats_max_age_ms"] == BOUND_MS for v in alive), alive
        print(f"\nheartbeat age while alive: {[v['heartbeat_age_ms'] for v in alive]} ms")

        assert first.rest("PUT", "/connectors/hb/pause")[0] == 202
        paused = time.monotonic()
        missing = wait_for(
            "HEARTBEATS_MISSING on both workers",
            lambda: same_on_every_worker(
                workers, lambda v: v["status"] == "STALLED" and "HEARTBEATS_MISSING" in codes(v)
            ),
            60,
        )
        to_condition = time.monotonic() - paused
        (condition,) = [c for c in missing[0]["conditions"] if c["code"] == "HEARTBEATS_MISSING"]
        assert condition["cluster"] == "A" and condition["subject"].endswith("heartbeats"), condition
        assert any(
            r.startswith("HEARTBEATS_MISSING: the newest heartbeat copied from A is")
            for r in missing[1]["reasons"]
        )

        to_alert, fired = alerts.wait_firing("HEARTBEATS_MISSING", 30)
        assert [(a["alertname"], a["flow"], a["cluster"]) for a in fired] == [
            ("PyconnectMirrorHeartbeatsMissing", "A->B", "A")
        ], fired

        assert first.rest("PUT", "/connectors/hb/resume")[0] == 202
        resumed = time.monotonic()
        wait_for(
            "IN_SYNC again on both workers",
            lambda: same_on_every_worker(
                workers, lambda v: v["status"] == "IN_SYNC" and v["conditions"] == []
            ),
            30,
        )
        to_clear = time.monotonic() - resumed
        resolved = alerts.wait_resolved("HEARTBEATS_MISSING", 30)
        print(
            f"alert PyconnectMirrorHeartbeatsMissing firing {to_alert:.1f} s after the condition, "
            f"resolved {resolved:.1f} s after it cleared"
        )
        print(
            f"HEARTBEATS_MISSING {to_condition:.1f} s after the pause (bound {BOUND_MS / 1000:g} s); "
            f"cleared {to_clear:.1f} s after the resume"
        )
        assert to_condition < BOUND_MS / 1000 + 15, to_condition
        assert to_clear < 10, to_clear


class Steady:
    """``rate`` records/s into ``topic`` (3 partitions) from a thread, at most ``seconds`` long."""

    def __init__(self, bootstrap: str, topic: str, rate: int, seconds: float) -> None:
        self._stop = threading.Event()
        self.sent = 0
        self._args = (bootstrap, topic, rate, seconds)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        bootstrap, topic, rate, seconds = self._args
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        await producer.start()
        try:
            started = time.monotonic()
            while not self._stop.is_set() and time.monotonic() - started < seconds:
                tick = time.monotonic()
                for i in range(rate // 10):
                    await producer.send(topic, b"v" * 100, partition=i % 3)
                self.sent += rate // 10
                await asyncio.sleep(max(0.0, 0.1 - (time.monotonic() - tick)))
            await producer.flush()
        finally:
            await producer.stop()

    def __enter__(self) -> Steady:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def healthy_run(
    a: ClusterHandle, b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path, seconds: int
) -> None:
    busy, quiet, silent = unique("live-busy"), unique("live-quiet"), unique("live-silent")
    asyncio.run(create_topics(a.bootstrap_servers, quiet, silent))
    asyncio.run(_create_partitioned(a.bootstrap_servers, busy, 3))
    config = mirror_config(
        a, b, f"{busy},{quiet},{silent}", **{"pyconnect.mirror.heartbeats.max.age.ms": "10000"}
    )
    with fleet(python_workers(b.bootstrap_servers, tmp_path, unique("live-healthy"), 2)) as workers:
        first = workers[0]
        for name, body in (("hb", heartbeat_config(a, b)), ("mirror", config)):
            code, answer = first.rest("PUT", f"/connectors/{name}/config", body)
            assert code == 201, answer
        with Steady(a.bootstrap_servers, busy, 1_000, seconds + 120) as load:
            wait_for(
                "A->B IN_SYNC with heartbeats",
                lambda: same_on_every_worker(
                    workers, lambda v: v["status"] == "IN_SYNC" and v["heartbeat_age_ms"] is not None
                ),
                120,
            )
            seen: list[tuple[str, list[str], list[str]]] = []
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                for worker in workers:
                    view = flows(worker)
                    seen.append((view["status"], codes(view), view["reasons"]))
                time.sleep(1.0)
            sent = load.sent
        bad = [s for s in seen if s[:2] != ("IN_SYNC", [])]
        print(
            f"\nhealthy run: {len(seen)} status reads over {seconds} s, {sent} records sent, {len(bad)} not IN_SYNC"
        )
        assert not bad, bad[:5]
        assert sent >= 1_000 * seconds * 0.8, sent


async def _create_partitioned(bootstrap: str, topic: str, partitions: int) -> None:
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


def test_a_healthy_flow_with_idle_topics_raises_nothing_for_a_quarter_minute(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    healthy_run(cluster_a, cluster_b, unique, tmp_path, 15)


@pytest.mark.long
def test_a_healthy_flow_with_idle_topics_raises_nothing_for_ten_minutes(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    healthy_run(cluster_a, cluster_b, unique, tmp_path, 600)
