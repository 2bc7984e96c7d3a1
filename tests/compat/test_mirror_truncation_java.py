"""What Java's MirrorSourceConnector does with the gaps connectors.mirror.truncation reports.

A Java Connect worker (the 4.3.1 jars) runs MirrorSourceConnector A->B; each case stops the connector
(``PUT /stop``: its task commits its offsets), breaks the flow and resumes. Java copies on as if
nothing happened: records deleted before they were copied are skipped, a recreated source topic is
read from its log start, a target rebuilt empty is not refilled; the task stays RUNNING and Java's own
log has no line at WARN or above about it (its consumer logs the reset at INFO). These are the data
flows our ``continue`` policy keeps; tests/integration/test_mirror_truncation.py checks that we
report them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import RecordsToDelete

from pyconnect.kafka.topic_reads import end_offsets
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaConnectWorker
from tests.integration.fleet import running_tasks, wait_for
from tests.integration.test_mirror_source import mirror_config
from tests.integration.test_mirror_truncation import (
    admin_call,
    create_topic,
    created_ok,
    fill,
    held,
    resume_connector,
    stop_connector,
    wait_held,
)

pytestmark = [pytest.mark.kafka, pytest.mark.java, pytest.mark.long]


def test_java_mirror_skips_every_gap_in_silence(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    deleted, recreated = unique("jtrunc"), unique("jrecreate")
    for topic in (deleted, recreated):
        create_topic(a, topic)
        fill(a, topic, 0, 100)
    java = JavaConnectWorker(b, tmp_path / "java", group_id=unique("jtrunc-group"), die_with_parent=True)
    java.start()
    try:
        java.wait_ready(timeout=300)
        config = mirror_config(
            cluster_a,
            cluster_b,
            f"{deleted}|{recreated}",
            **{"tasks.max": "1", "offset.flush.interval.ms": "1000"},
        )
        code, body = java.rest("POST", "/connectors", {"name": "mirror", "config": config})
        assert code == 201, body
        wait_for("1 RUNNING task", lambda: running_tasks(java, "mirror", 1), 120)
        for topic in (deleted, recreated):
            wait_held(b, f"A.{topic}", {0: list(range(100)), 1: list(range(100))}, 120)
        stop_connector(java, "mirror")

        fill(a, deleted, 100, 100)
        asyncio.run(
            admin_call(a, lambda ad: ad.delete_records({TopicPartition(deleted, 0): RecordsToDelete(150)}))
        )
        asyncio.run(admin_call(a, lambda ad: ad.delete_topics([recreated])))
        wait_for(
            "the topic deleted",
            lambda: recreated not in asyncio.run(admin_call(a, lambda ad: ad.list_topics())) or None,
            30,
        )
        wait_for("the topic created again", lambda: created_ok(a, recreated), 30, 0.5)
        fill(a, recreated, 1000, 30)
        resume_connector(java, "mirror")
        wait_held(b, f"A.{deleted}", {0: [*range(100), *range(150, 200)], 1: list(range(200))}, 120)
        wait_held(b, f"A.{recreated}", {p: [*range(100), *range(1000, 1030)] for p in (0, 1)}, 120)
        stop_connector(java, "mirror")

        remote = f"A.{deleted}"
        asyncio.run(admin_call(b, lambda ad: ad.delete_topics([remote])))
        wait_for(
            "the remote topic deleted",
            lambda: remote not in asyncio.run(admin_call(b, lambda ad: ad.list_topics())) or None,
            30,
        )
        wait_for("the remote topic created empty", lambda: created_ok(b, remote), 30, 0.5)
        wait_for(
            "the new remote topic to answer",
            lambda: asyncio.run(end_offsets(b, remote, [0, 1], "read_uncommitted")) == {0: 0, 1: 0} or None,
            30,
        )
        fill(a, deleted, 200, 10)
        resume_connector(java, "mirror")
        wait_held(b, remote, {p: list(range(200, 210)) for p in (0, 1)}, 120)
        assert held(b, remote) == {p: list(range(200, 210)) for p in (0, 1)}, "Java never refills the target"
        assert running_tasks(java, "mirror", 1), "the task stays RUNNING"
        log = java.log_file.read_text(errors="replace")
        loud = [
            line
            for line in log.splitlines()
            if (" WARN " in line or " ERROR " in line) and (deleted in line or recreated in line)
        ]
        assert loud == [], loud
    finally:
        java.stop(timeout=60)
