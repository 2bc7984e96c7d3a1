"""Sink connectors side by side: a Java worker and a pyconnect worker (each its own one-worker cluster
on cluster A) answer the same for Java's VerifiableSinkConnector: its ``/connector-plugins`` entry, the
``topics``/``topics.regex`` validation errors, the task configs (``topics`` copied in), and the
KIP-875 offsets body once each consumed the same topic and was stopped.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, status, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.java]

VERIFIABLE_SINK = "org.apache.kafka.connect.tools.VerifiableSinkConnector"
RECORDS = 25


async def _topic_with_records(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for i in range(RECORDS):
            await producer.send(topic, str(i).encode(), key=b"0", partition=i % 2)
        await producer.flush()
    finally:
        await producer.stop()


@pytest.fixture(scope="module")
def workers(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[JavaConnectWorker, PyconnectWorker, str]]:
    bootstrap = kafka_clusters["A"].bootstrap_servers
    base: Path = tmp_path_factory.mktemp("sink-compat")
    suffix = uuid.uuid4().hex[:8]
    topic = f"sink-compat-in-{suffix}"
    asyncio.run(_topic_with_records(bootstrap, topic))
    java = JavaConnectWorker(
        bootstrap, base / "java", group_id=f"sink-java-{suffix}", extra=FAST_GROUP, die_with_parent=True
    )
    ours = PyconnectWorker(
        bootstrap, base / "py", group_id=f"sink-py-{suffix}", extra=FAST_GROUP, die_with_parent=True
    )
    with fleet([java, ours]):
        yield java, ours, topic


def sink_config(topic: str) -> dict[str, str]:
    return {
        "connector.class": VERIFIABLE_SINK,
        "tasks.max": "1",
        "topics": topic,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }


def test_plugin_entry_and_validation(workers: tuple[JavaConnectWorker, PyconnectWorker, str]) -> None:
    java, ours, topic = workers
    entries = []
    for worker in (java, ours):
        code, plugins = worker.rest("GET", "/connector-plugins")
        assert code == 200
        entries.append(next(p for p in plugins if p["class"] == VERIFIABLE_SINK))
    assert entries[1] == entries[0] and list(entries[1]) == list(entries[0]) and entries[0]["type"] == "sink"

    config = {**sink_config(topic), "name": "both", "topics.regex": "x.*"}
    answers = [
        w.rest("PUT", "/connector-plugins/VerifiableSinkConnector/config/validate", config)
        for w in (java, ours)
    ]
    errors = [
        {
            c["value"]["name"]: c["value"]["errors"]
            for c in body["configs"]
            if c["value"] and c["value"]["errors"]
        }
        for _, body in answers
    ]
    assert [code for code, _ in answers] == [200, 200]
    assert errors[1] == errors[0], errors
    assert answers[1][1]["error_count"] == answers[0][1]["error_count"] == 2
    created = [w.rest("POST", "/connectors", {"name": "both", "config": config}) for w in (java, ours)]
    assert created[1] == created[0], created


def offsets_after_stop(worker: Any, name: str, topic: str) -> dict[str, Any]:
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": sink_config(topic)})
    assert code == 201, body

    def consumed() -> dict[str, Any] | None:
        code, body = worker.rest("GET", f"/connectors/{name}/offsets")
        total = sum(o["offset"]["kafka_offset"] for o in body.get("offsets", [])) if code == 200 else 0
        return body if total == RECORDS else None

    wait_for(
        f"{name} RUNNING",
        lambda: (s := status(worker, name)) and s["tasks"] and s["tasks"][0]["state"] == "RUNNING",
        60,
    )
    wait_for(f"{name} committed all {RECORDS} records", consumed, 60)
    assert worker.rest("PUT", f"/connectors/{name}/stop")[0] == 204
    wait_for(
        f"{name} STOPPED",
        lambda: (s := status(worker, name)) and s["connector"]["state"] == "STOPPED" and not s["tasks"],
        60,
    )
    code, body = worker.rest("GET", f"/connectors/{name}/offsets")
    assert code == 200
    return body


def test_offsets_body_and_task_configs(workers: tuple[JavaConnectWorker, PyconnectWorker, str]) -> None:
    java, ours, topic = workers
    suffix = uuid.uuid4().hex[:6]
    java_body = offsets_after_stop(java, f"vsink-java-{suffix}", topic)
    our_body = offsets_after_stop(ours, f"vsink-py-{suffix}", topic)

    def ordered(body: dict[str, Any]) -> list[Any]:
        return sorted(body["offsets"], key=lambda o: o["partition"]["kafka_partition"])

    assert ordered(our_body) == ordered(java_body)
    assert [list(o["partition"]) for o in our_body["offsets"]] == [
        list(o["partition"]) for o in java_body["offsets"]
    ]
    assert list(our_body) == list(java_body) == ["offsets"]

    for worker, name in ((java, f"vsink-java-{suffix}"), (ours, f"vsink-py-{suffix}")):
        worker.rest("PUT", f"/connectors/{name}/resume")
    tasks = []
    for worker, name in ((java, f"vsink-java-{suffix}"), (ours, f"vsink-py-{suffix}")):
        # Resuming a stopped connector writes new task configs, which calls for a rebalance; until
        # it is done both runtimes answer 500 "Request cannot be completed because a rebalance is
        # expected" (Java's checkRebalanceNeeded), so only a 200 with tasks ends the wait.
        code, body = wait_for(
            "task configs",
            lambda w=worker, n=name: (r := w.rest("GET", f"/connectors/{n}/tasks"))[0] == 200 and r[1] and r,
            60,
        )
        assert code == 200, body
        tasks.append({k: v for k, v in body[0]["config"].items() if k != "name"})
    assert tasks[1] == tasks[0], tasks
