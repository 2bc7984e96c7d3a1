"""Retries and error tolerance (``errors.retry.timeout``, ``errors.tolerance``) of sink and source tasks
on one ``pyconnect distributed`` worker and real Kafka, seen through ``task-error-metrics`` in
``GET /metrics``.

A transformation that raises a retriable error the first N times it sees chosen records
(tests/plugins/flaky.py) stands in for a flaky schema registry: with a retry timeout every record
arrives, in order, after Java's backoff (300 ms, then 600 ms); with no retry and ``errors.tolerance=all``
the record goes to the dead-letter queue; with no retry and ``errors.tolerance=none`` the task fails
(Java 4.3.1, KAFKA-18073) instead of dropping it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import fleet, read_seqnos_sync, status, verifiable, wait_for
from tests.integration.test_metrics_endpoint import parse, scrape, value
from tests.integration.test_sink_tasks import (
    FAILING_SINK,
    STRINGS,
    _read_dlq,
    create,
    create_topic,
    lines,
    produce,
    sink_workers,
)
from tests.plugins.flaky import MESSAGE

pytestmark = pytest.mark.kafka

FLAKY = "org.pyconnect.test.FlakyTransformation"  # its Java twin: tests/compat/java/FlakyTransformation.java


@pytest.fixture(scope="module")
def worker(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PyconnectWorker]:
    started = sink_workers(kafka_clusters["A"].bootstrap_servers, tmp_path_factory.mktemp("retries"), 1)
    with fleet(started):
        yield started[0]


def flaky(values: str, failures: int, attempts: Path) -> dict[str, str]:
    return {
        "transforms": "flaky",
        "transforms.flaky.type": FLAKY,
        "transforms.flaky.values": values,
        "transforms.flaky.failures": str(failures),
        "transforms.flaky.attempts.file": str(attempts),
    }


def errors_of(worker: PyconnectWorker, name: str) -> dict[str, float | None]:
    """The task's ``kafka_connect_task_error_*`` series, as the JMX-exporter rules name them."""
    series = parse(scrape(worker))
    names = (
        "total_record_failures",
        "total_record_errors",
        "total_records_skipped",
        "total_retries",
        "total_errors_logged",
        "deadletterqueue_produce_requests",
        "deadletterqueue_produce_failures",
        "last_error_timestamp",
    )
    return {n: value(series, f"kafka_connect_task_error_{n}", connector=name, task="0") for n in names}


def sink_config(topic: str, sink_dir: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": FAILING_SINK,
        "tasks.max": "1",
        "topics": topic,
        "fail.dir": str(sink_dir),
        **STRINGS,
        **extra,
    }


def test_a_sink_retries_a_flaky_transformation_and_delivers_every_record(
    worker: PyconnectWorker, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, dlq, name = unique("in"), unique("dlq"), unique("retrysink")
    sink_dir, attempts = tmp_path / "sink", tmp_path / "attempts"
    sink_dir.mkdir()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(1, 7))
    started = time.monotonic()
    create(
        worker,
        name,
        sink_config(
            topic,
            sink_dir,
            **flaky("2,5", 2, attempts),
            **{
                "errors.retry.timeout": "10000",
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
            },
        ),
    )
    wait_for("every record", lambda: len(lines(sink_dir / "records")) >= 6, 30)
    elapsed = time.monotonic() - started
    assert lines(sink_dir / "records") == ["1", "2", "3", "4", "5", "6"]
    assert lines(attempts) == ["2", "2", "2", "5", "5", "5"]  # two failures, then success, each
    assert elapsed >= 2 * 0.9  # each flaky record waited 300 ms + 600 ms
    found = wait_for("the error metrics", lambda: (m := errors_of(worker, name))["total_retries"] and m, 20)
    assert found == {
        "total_record_failures": 4.0,
        "total_record_errors": 0.0,
        "total_records_skipped": 0.0,
        "total_retries": 4.0,
        "total_errors_logged": 0.0,
        "deadletterqueue_produce_requests": 0.0,
        "deadletterqueue_produce_failures": 0.0,
        "last_error_timestamp": 0.0,
    }
    worker.rest("DELETE", f"/connectors/{name}")
    wait_for("the task's metrics removed", lambda: errors_of(worker, name)["total_retries"] is None, 20)


def test_without_retries_tolerance_all_sends_the_record_to_the_dlq_and_none_fails_the_task(
    worker: PyconnectWorker, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, dlq, tolerant, strict = unique("in"), unique("dlq"), unique("tolerant"), unique("strict")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(1, 4))
    tolerant_dir, strict_dir = tmp_path / "tolerant", tmp_path / "strict"
    tolerant_dir.mkdir()
    strict_dir.mkdir()
    create(
        worker,
        tolerant,
        sink_config(
            topic,
            tolerant_dir,
            **flaky("2", 1000, tmp_path / "tolerant-attempts"),
            **{
                "errors.retry.timeout": "0",
                "errors.tolerance": "all",
                "errors.log.enable": "true",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
            },
        ),
    )
    create(worker, strict, sink_config(topic, strict_dir, **flaky("2", 1000, tmp_path / "strict-attempts")))
    wait_for("the tolerant sink's records", lambda: len(lines(tolerant_dir / "records")) >= 2, 30)
    assert lines(tolerant_dir / "records") == ["1", "3"]
    found = asyncio.run(_read_dlq(bootstrap, dlq, 1))
    assert [r.value for r in found] == [b"2"]
    headers = dict(found[0].headers)
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert headers["__connect.errors.class.name"] == FLAKY.encode()
    assert headers["__connect.errors.exception.class.name"] == b"pyconnect.errors.RetriableError"
    assert headers["__connect.errors.exception.message"].startswith(MESSAGE.encode())
    metrics = wait_for(
        "the error metrics",
        lambda: (m := errors_of(worker, tolerant))["deadletterqueue_produce_requests"] and m,
        20,
    )
    assert metrics["total_records_skipped"] == 1.0 and metrics["deadletterqueue_produce_requests"] == 1.0
    # Java 4.3.1 counts a retriable error that is not retried twice (in the retry loop and in the handler)
    assert metrics["total_record_failures"] == 2.0 and metrics["total_record_errors"] == 1.0
    assert metrics["total_retries"] == 0.0 and metrics["total_errors_logged"] == 1.0
    assert metrics["deadletterqueue_produce_failures"] == 0.0
    assert metrics["last_error_timestamp"] and abs(metrics["last_error_timestamp"] / 1000 - time.time()) < 120

    def strict_failed() -> str | None:
        body = status(worker, strict)
        tasks = body["tasks"] if body else []
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    trace = wait_for("the strict sink's task FAILED", strict_failed, 30)
    assert "Tolerance exceeded in error handler" in trace and MESSAGE in trace
    assert lines(strict_dir / "records") in ([], ["1"])  # never "2", never past it
    strict_errors = errors_of(worker, strict)
    assert strict_errors["total_record_errors"] == 1.0 and strict_errors["total_records_skipped"] == 0.0
    for name in (tolerant, strict):
        worker.rest("DELETE", f"/connectors/{name}")


def test_a_source_retries_a_flaky_transformation_and_writes_every_record(
    worker: PyconnectWorker, cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, name = unique("src"), unique("retrysource")
    attempts = tmp_path / "attempts"
    config = verifiable(
        topic,
        1,
        throughput=50,
        **flaky("3,7", 2, attempts),
        **{"errors.retry.timeout": "10000", "errors.log.enable": "true"},
    )
    create(worker, name, config)

    def written() -> float | None:
        series = parse(scrape(worker))
        total = value(series, "kafka_connect_source_task_source_record_write_total", connector=name, task="0")
        return total if total is not None and total >= 12 else None

    wait_for("twelve records written", written, 30)
    metrics = errors_of(worker, name)
    worker.rest("DELETE", f"/connectors/{name}")
    assert lines(attempts) == ["3", "3", "3", "7", "7", "7"]
    assert metrics["total_retries"] == 4.0 and metrics["total_record_failures"] == 4.0
    assert metrics["total_record_errors"] == 0.0 and metrics["total_records_skipped"] == 0.0
    assert metrics["total_errors_logged"] == 0.0 and metrics["last_error_timestamp"] == 0.0
    seqnos = read_seqnos_sync(bootstrap, topic)[0]
    assert seqnos == list(range(len(seqnos))) and len(seqnos) >= 12  # 3 and 7 in place, nothing lost
