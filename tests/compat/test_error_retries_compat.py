"""Retries and error tolerance side by side: a Java worker and a pyconnect worker (each its own
one-worker cluster on cluster A) run Java's VerifiableSinkConnector with the same flaky transformation
(tests/compat/java/FlakyTransformation.java on the Java worker's ``plugin.path``, its Python twin
tests/plugins/flaky.py on ours) and answer the same: with ``errors.tolerance=none`` and no retry the
task fails with "Tolerance exceeded in error handler" caused by the transformation's error (Java
4.3.1, KAFKA-18073); with ``all`` the record goes to the dead-letter queue with the same stage, class
and message headers; with ``errors.retry.timeout`` the task consumes every record (its group offsets,
read through KIP-875 once stopped, are the same)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, status, wait_for
from tests.integration.test_sink_tasks import _read_dlq, create_topic, produce
from tests.plugins import PYTHON_PATH

pytestmark = [pytest.mark.kafka, pytest.mark.java]

VERIFIABLE_SINK = "org.apache.kafka.connect.tools.VerifiableSinkConnector"
FLAKY = "org.pyconnect.test.FlakyTransformation"
JAVA_SOURCE = Path(__file__).parent / "java" / "FlakyTransformation.java"

Workers = tuple[JavaConnectWorker, PyconnectWorker, str, str]


def compile_plugin(plugins: Path) -> None:
    javac = shutil.which("javac")
    assert javac, "javac (JDK 17+) is needed on PATH to compile java/FlakyTransformation.java"
    done = subprocess.run(
        [javac, "-cp", ensure_distribution().classpath, "-d", str(plugins / "flaky"), str(JAVA_SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def workers(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workers]:
    bootstrap = kafka_clusters["A"].bootstrap_servers
    base: Path = tmp_path_factory.mktemp("retries-compat")
    compile_plugin(base / "plugins")
    suffix = uuid.uuid4().hex[:8]
    topic = f"retries-compat-in-{suffix}"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(1, 4))
    java = JavaConnectWorker(
        bootstrap,
        base / "java",
        group_id=f"retries-java-{suffix}",
        extra={**FAST_GROUP, "plugin.path": str(base / "plugins")},
        die_with_parent=True,
    )
    ours = PyconnectWorker(
        bootstrap,
        base / "py",
        group_id=f"retries-py-{suffix}",
        extra=FAST_GROUP,
        die_with_parent=True,
        python_path=PYTHON_PATH,
    )
    with fleet([java, ours]):
        yield java, ours, bootstrap, topic


def sink(topic: str, failures: int, **errors: str) -> dict[str, str]:
    return {
        "connector.class": VERIFIABLE_SINK,
        "tasks.max": "1",
        "topics": topic,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "transforms": "flaky",
        "transforms.flaky.type": FLAKY,
        "transforms.flaky.values": "2",
        "transforms.flaky.failures": str(failures),
        **errors,
    }


def create(worker: Any, name: str, config: dict[str, str]) -> None:
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body


def failed_trace(worker: Any, name: str) -> str:
    def probe() -> str | None:
        body = status(worker, name)
        tasks = body["tasks"] if body else []
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    return wait_for(f"{name} FAILED", probe, 60)


def test_tolerance_none_fails_and_all_writes_the_same_dlq_record(workers: Workers) -> None:
    java, ours, bootstrap, topic = workers
    suffix = uuid.uuid4().hex[:6]
    traces, dlq_records = [], []
    for runtime, worker in (("java", java), ("py", ours)):
        strict, tolerant, dlq = (
            f"strict-{runtime}-{suffix}",
            f"tolerant-{runtime}-{suffix}",
            f"dlq-{runtime}-{suffix}",
        )
        create(worker, strict, sink(topic, 1000, **{"errors.retry.timeout": "0"}))
        create(
            worker,
            tolerant,
            sink(
                topic,
                1000,
                **{
                    "errors.retry.timeout": "0",
                    "errors.tolerance": "all",
                    "errors.deadletterqueue.topic.name": dlq,
                    "errors.deadletterqueue.topic.replication.factor": "1",
                    "errors.deadletterqueue.context.headers.enable": "true",
                },
            ),
        )
        traces.append(failed_trace(worker, strict))
        dlq_records.append(asyncio.run(_read_dlq(bootstrap, dlq, 1)))
    for trace in traces:
        assert trace.splitlines()[0].endswith("Tolerance exceeded in error handler"), trace[:300]
        assert "flaky on demand: 2 (attempt 1)" in trace
    headers = []
    for found in dlq_records:
        assert [r.value for r in found] == [b"2"]
        all_headers = dict(found[0].headers)
        headers.append(
            {
                k: all_headers[f"__connect.errors.{k}"]
                for k in (
                    "topic",
                    "partition",
                    "offset",
                    "task.id",
                    "stage",
                    "class.name",
                    "exception.message",
                )
            }
        )
    assert headers[1] == headers[0], headers
    assert headers[0]["stage"] == b"TRANSFORMATION" and headers[0]["class.name"] == FLAKY.encode()


def test_a_retried_record_is_consumed_by_both(workers: Workers) -> None:
    java, ours, _, topic = workers
    suffix = uuid.uuid4().hex[:6]
    bodies = []
    for runtime, worker in (("java", java), ("py", ours)):
        name = f"retry-{runtime}-{suffix}"
        create(worker, name, sink(topic, 2, **{"errors.retry.timeout": "10000"}))

        def consumed(worker: Any = worker, name: str = name) -> dict[str, Any] | None:
            code, body = worker.rest("GET", f"/connectors/{name}/offsets")
            offsets = body.get("offsets", []) if code == 200 else []
            return body if sum(o["offset"]["kafka_offset"] for o in offsets) == 3 else None

        wait_for(f"{name} committed all 3 records", consumed, 60)
        assert status(worker, name)["tasks"][0]["state"] == "RUNNING"  # type: ignore[index]
        assert worker.rest("PUT", f"/connectors/{name}/stop")[0] == 204
        wait_for(
            f"{name} STOPPED",
            lambda w=worker, n=name: (
                (s := status(w, n)) and s["connector"]["state"] == "STOPPED" and not s["tasks"]
            ),
            60,
        )
        bodies.append(worker.rest("GET", f"/connectors/{name}/offsets")[1])
    assert bodies[1] == bodies[0], bodies
