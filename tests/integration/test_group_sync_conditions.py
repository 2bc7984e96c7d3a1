"""GROUP_SYNC_BLOCKED on real Kafka: a MirrorCheckpointConnector syncing a group's offsets to B while a
consumer of that group is active on B. The checkpoint task never overwrites an active group (Java's
rule); the flow shows the warning condition naming the group and cluster B, stays IN_SYNC (the copy is
healthy: no false alarm), and the condition clears within seconds of the consumer leaving, when the
offsets are synced.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer

from pyconnect.testing.backends import ClusterHandle
from tests.alert_watch import AlertWatch
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_checkpoint import flow
from tests.integration.test_mirror_source import create_and_fill, mirror_config
from tests.integration.test_mirror_status import commit_group

pytestmark = pytest.mark.kafka


class ActiveMember:
    """A consumer of ``group`` subscribed to ``topic`` on ``bootstrap``, polling until ``__exit__``."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.joined = threading.Event()
        self._stop = threading.Event()
        self._args = (bootstrap, group, topic)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        bootstrap, group, topic = self._args
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="latest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
        )
        await consumer.start()
        try:
            deadline = time.monotonic() + 180
            while not self._stop.is_set() and time.monotonic() < deadline:
                await consumer.getmany(timeout_ms=300)
                if consumer.assignment():
                    self.joined.set()
        finally:
            await consumer.stop()

    def __enter__(self) -> ActiveMember:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def ab_flow(worker: Any) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    return next((f for f in body["flows"] if f["flow"] == "A->B"), None)


def test_a_group_active_on_the_target_is_shown_and_cleared_once_it_leaves(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
    alerts: AlertWatch,
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("gsb")
    topic, remote, group = f"{prefix}-t", f"A.{prefix}-t", unique("gsb-group")
    asyncio.run(create_and_fill(a, topic, 1, 50))
    asyncio.run(commit_group(a, group, topic))
    connectors = {
        "mirror-source": mirror_config(cluster_a, cluster_b, topic, **{"tasks.max": "1"}),
        "mirror-checkpoint": flow(
            cluster_a,
            cluster_b,
            "MirrorCheckpointConnector",
            groups=group,
            topics=topic,
            **{
                "emit.checkpoints.interval.seconds": "1",
                "refresh.groups.interval.seconds": "2",
                "sync.group.offsets.enabled": "true",
                "sync.group.offsets.interval.seconds": "1",
                "checkpoints.topic.replication.factor": "1",
            },
        ),
    }
    with fleet(python_workers(b, tmp_path, unique("gsb-worker"), 1)) as (worker,):
        alerts.scrape([worker.rest_url])
        code, body = worker.rest(
            "POST", "/connectors", {"name": "mirror-source", "config": connectors["mirror-source"]}
        )
        assert code == 201, body
        wait_for("the remote topic on B", lambda: running_tasks(worker, "mirror-source", 1), 60)
        wait_for("the remote topic on B", lambda: (f := ab_flow(worker)) and f["topics"], 60)
        with ActiveMember(b, group, remote) as member:
            assert member.joined.wait(60), "the consumer never got its partition on B"
            code, body = worker.rest(
                "POST",
                "/connectors",
                {"name": "mirror-checkpoint", "config": connectors["mirror-checkpoint"]},
            )
            assert code == 201, body
            posted = time.monotonic()

            def blocked() -> dict[str, Any] | None:
                found = ab_flow(worker)
                if not found:
                    return None
                hits = [c for c in found["conditions"] if c["code"] == "GROUP_SYNC_BLOCKED"]
                return found if hits else None

            seen = wait_for("GROUP_SYNC_BLOCKED for the active group", blocked, 90)
            to_condition = time.monotonic() - posted
            (condition,) = [c for c in seen["conditions"] if c["code"] == "GROUP_SYNC_BLOCKED"]
            assert (condition["subject"], condition["cluster"], condition["severity"]) == (
                group,
                "B",
                "warning",
            )
            assert condition["connector"] == "mirror-checkpoint", condition
            assert seen["status"] == "IN_SYNC", seen  # a warning: the copy itself is healthy
            assert any(
                w.startswith("GROUP_SYNC_BLOCKED: offsets of consumer group") for w in seen["warnings"]
            )
            code, status = worker.rest("GET", "/connectors/mirror-checkpoint/status")
            assert code == 200 and status["tasks"][0]["state"] == "RUNNING", status
            assert status["tasks"][0]["trace"].startswith("GROUP_SYNC_BLOCKED: "), status
            # the shipped rule waits 10 minutes before it fires (a warning): its alert is pending
            _, pending = alerts.wait_firing("GROUP_SYNC_BLOCKED", 30, state="pending")
            assert [(a["alertname"], a["flow"], a["cluster"]) for a in pending] == [
                ("PyconnectMirrorGroupSyncBlocked", "A->B", "B")
            ], pending
        left = time.monotonic()
        wait_for(
            "the condition cleared once the group is empty",
            lambda: (
                (f := ab_flow(worker))
                and not [c for c in f["conditions"] if c["code"] == "GROUP_SYNC_BLOCKED"]
            ),
            30,
        )
        to_clear = time.monotonic() - left
        alerts.wait_resolved("GROUP_SYNC_BLOCKED", 30)
        print(
            f"\nGROUP_SYNC_BLOCKED {to_condition:.1f} s after the checkpoint connector was created; "
            f"cleared {to_clear:.1f} s after the consumer left"
        )
        assert to_clear < 10, to_clear
