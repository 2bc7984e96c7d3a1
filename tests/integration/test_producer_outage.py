"""A source task rides out a broker outage longer than its producer's request timeout, as in Java.

Java's Connect gives every task producer ``delivery.timeout.ms=Integer.MAX_VALUE`` and
``max.block.ms=Long.MAX_VALUE``: a retriable send error (no leader, a request timed out, a full
buffer, a partition missing from stale metadata) is retried by the producer, never handed to the task.
Here the only node of the cluster the task writes to is killed for ``OUTAGE_S``, four times the
producer's ``request.timeout.ms``, while the worker's group and internal topics stay reachable. Afterwards the task is RUNNING and was never FAILED, keeps writing, and its
records have no gap (duplicates are allowed: at-least-once).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiokafka.errors import KafkaConnectionError

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster
from tests.integration.fleet import (
    fleet,
    gaps_and_duplicates,
    own_cluster,
    python_workers,
    read_topic,
    running_tasks,
    status,
    verifiable,
    wait_for,
)

pytestmark = pytest.mark.kafka

REQUEST_TIMEOUT_MS = 3000
OUTAGE_S = 4 * REQUEST_TIMEOUT_MS / 1000


@pytest.fixture(scope="module")
def lone_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with own_cluster(tmp_path_factory.mktemp("outage"), "O", brokers=1) as cluster:
        yield cluster


@pytest.mark.long  # 40 s; its sibling in make test is tests/integration/test_target_waits.py (a target that
# acknowledges nothing: TARGET_UNREACHABLE, the task RUNNING, every record there once after the fix)
def test_a_source_task_outlives_an_outage_longer_than_its_request_timeout(
    cluster_a: ClusterHandle, lone_node: KafkaCluster, unique: Callable[[str], str], tmp_path: Path
) -> None:
    # The worker's group and internal topics live on cluster A; only the task's producer writes to the
    # lone node (a connector client override), so the outage reaches the data path alone.
    (worker,) = python_workers(cluster_a.bootstrap_servers, tmp_path, unique("outage"), 1)
    bootstrap = lone_node.bootstrap_servers
    topic = unique("out")
    config = verifiable(
        topic,
        1,
        200,
        **{
            "producer.override.bootstrap.servers": bootstrap,
            "producer.override.request.timeout.ms": str(REQUEST_TIMEOUT_MS),
        },
    )
    with fleet([worker]):
        code, body = worker.rest("POST", "/connectors", {"name": "v", "config": config})
        assert code == 201, body
        wait_for("the task RUNNING", lambda: running_tasks(worker, "v", 1), 60)
        time.sleep(2)

        (node,) = lone_node.nodes
        node.kill()
        time.sleep(OUTAGE_S)
        node.start()

        def seqnos_past_the_outage() -> list[int] | None:
            try:
                records = asyncio.run(read_topic(bootstrap, topic, max_s=10, idle_reads=1))
            except KafkaConnectionError:  # the node is still starting
                return None
            seqnos = [json.loads(value)["payload"] for _p, _o, _k, value in records if value is not None]
            return seqnos if len(set(seqnos)) > 200 * 6 else None

        seqnos = wait_for("records written after the outage", seqnos_past_the_outage, 120, interval=2.0)
        body = status(worker, "v")
        assert body is not None
        (task,) = body["tasks"]
        assert task["state"] == "RUNNING" and "trace" not in task, task
        worker.check_alive()
        gaps, duplicates = gaps_and_duplicates(seqnos)
        print(f"\noutage of {OUTAGE_S:.0f} s: {len(seqnos)} records, {gaps} gaps, {duplicates} duplicates")
        assert gaps == 0, (gaps, duplicates)
        log = worker.log_file.read_text(errors="replace")
        assert "FAILED" not in log and "Task threw an uncaught" not in log, log[-4000:]
