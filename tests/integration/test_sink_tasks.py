"""Sink connectors on a fleet of ``pyconnect distributed`` workers and real Kafka.

FileStreamSink writes every record of its topics; a worker killed with -9 mid-stream loses nothing
(at least once: every sequence number appears); a sink whose ``put`` fails goes FAILED with its trace
while the worker serves on; ``topics`` with ``topics.regex`` is refused with Java's message; the
offsets of a stopped sink are read, altered and reset through REST (KIP-875, the ``connect-<name>``
consumer group).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, status, wait_for
from tests.plugins import PYTHON_PATH
from tests.plugins.failing_sink import FAILURE_MESSAGE

pytestmark = pytest.mark.kafka

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
FAILING_SINK = "org.apache.kafka.connect.integration.FailingSinkConnector"
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}
SINK_WORKER = {
    **FAST_GROUP,
    "consumer.session.timeout.ms": 6000,  # the worker's consumer.* keys reach every sink consumer
    "consumer.heartbeat.interval.ms": 1000,
    "scheduled.rebalance.max.delay.ms": 0,
}


def sink_workers(bootstrap: str, base: Path, count: int) -> list[PyconnectWorker]:
    group = f"sink-fleet-{uuid.uuid4().hex[:8]}"
    return [
        PyconnectWorker(
            bootstrap,
            base / f"py-{i}",
            group_id=group,
            extra=dict(SINK_WORKER),
            die_with_parent=True,
            python_path=PYTHON_PATH,
        )
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def workers(
    kafka_clusters: dict[str, ClusterHandle], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sequence[PyconnectWorker]]:
    started = sink_workers(kafka_clusters["A"].bootstrap_servers, tmp_path_factory.mktemp("sink-fleet"), 3)
    with fleet(started):
        yield started


async def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


async def _produce(
    bootstrap: str, topic: str, values: Sequence[int], partitions: int, rate: float | None
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for i, value in enumerate(values):
            await producer.send(
                topic, str(value).encode(), key=str(value).encode(), partition=value % partitions
            )
            if rate is not None and i % 50 == 49:
                await producer.flush()
                await asyncio.sleep(50 / rate)
        await producer.flush()
    finally:
        await producer.stop()


def produce(
    bootstrap: str, topic: str, values: Sequence[int], partitions: int = 1, rate: float | None = None
) -> None:
    asyncio.run(_produce(bootstrap, topic, values, partitions, rate))


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    asyncio.run(_create_topic(bootstrap, topic, partitions))


def lines(path: Path) -> list[str]:
    """Complete lines of ``path`` (a worker killed mid-write may leave a cut last line)."""
    if not path.exists():
        return []
    text = path.read_text()
    return text.split("\n")[:-1]


def file_sink(topic: str, path: Path, **extra: str) -> dict[str, str]:
    return {
        "connector.class": FILE_SINK,
        "tasks.max": "1",
        "topics": topic,
        "file": str(path),
        **STRINGS,
        **extra,
    }


def create(worker: PyconnectWorker, name: str, config: dict[str, str]) -> None:
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body


def task_states(worker: PyconnectWorker, name: str) -> list[str]:
    body = status(worker, name)
    return [t["state"] for t in body["tasks"]] if body else []


def test_file_sink_writes_every_record(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, name, out = unique("in"), unique("fsink"), tmp_path / "out.txt"
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, range(600), partitions=3)
    create(workers[0], name, file_sink(topic, out, **{"tasks.max": "2"}))
    # two tasks append to one file: each put is one write of whole lines, so lines stay whole
    wait_for("two RUNNING tasks", lambda: task_states(workers[1], name) == ["RUNNING", "RUNNING"], 30)
    wait_for("600 values", lambda: len({int(v) for v in lines(out)}) >= 600, 30)
    assert {int(v) for v in lines(out)} == set(range(600))  # at least once: a rebalance may repeat some
    workers[1].rest("DELETE", f"/connectors/{name}")


def test_topics_and_regex_together_are_refused(workers: Sequence[PyconnectWorker], tmp_path: Path) -> None:
    both = "topics and topics.regex are mutually exclusive options, but both are set."
    config = {**file_sink("a", tmp_path / "x"), "topics.regex": "a.*"}
    code, body = workers[0].rest("POST", "/connectors", {"name": "both", "config": config})
    assert code == 400, body
    assert body["message"].startswith(
        f"Connector configuration is invalid and contains the following 2 error(s):\n{both}\n{both}\n"
    ), body
    code, body = workers[1].rest(
        "PUT", "/connector-plugins/FileStreamSinkConnector/config/validate", {"name": "both", **config}
    )
    assert code == 200 and body["error_count"] == 2, body
    errors = {
        c["value"]["name"]: c["value"]["errors"]
        for c in body["configs"]
        if c["value"] and c["value"]["errors"]
    }
    assert errors == {"topics": [both], "topics.regex": [both]}
    code, body = workers[1].rest("GET", "/connector-plugins")
    sinks = [p for p in body if p["type"] == "sink"]
    assert {"class": FILE_SINK, "type": "sink", "version": "4.3.1"} in sinks, body


def test_a_failing_put_fails_the_task_not_the_worker(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, name = unique("in"), unique("failing")
    fail_dir = tmp_path / "fail"
    fail_dir.mkdir()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(10))
    create(
        workers[0],
        name,
        {
            "connector.class": FAILING_SINK,
            "tasks.max": "1",
            "topics": topic,
            "fail.dir": str(fail_dir),
            **STRINGS,
        },
    )
    wait_for("10 records delivered", lambda: len(lines(fail_dir / "records")) >= 10, 30)
    (fail_dir / "retry").touch()  # retriable: the batch comes again, the task stays RUNNING
    produce(bootstrap, topic, range(10, 15))
    time.sleep(1.0)
    assert task_states(workers[1], name) == ["RUNNING"]
    assert len(lines(fail_dir / "records")) == 10
    (fail_dir / "retry").unlink()
    wait_for("the retried batch delivered", lambda: len(lines(fail_dir / "records")) >= 15, 15)
    (fail_dir / "fail").touch()
    produce(bootstrap, topic, range(15, 20))
    body = wait_for(
        "the task FAILED",
        lambda: (s := status(workers[0], name)) and s["tasks"] and s["tasks"][0]["state"] == "FAILED" and s,
        30,
    )
    trace = body["tasks"][0]["trace"]
    assert FAILURE_MESSAGE in trace.splitlines()[0], trace
    assert "put" in trace
    for worker in workers:
        code, root = worker.rest("GET", "/")
        assert code == 200 and root["kafka_cluster_id"], root
    assert body["connector"]["state"] == "RUNNING"
    workers[0].rest("DELETE", f"/connectors/{name}")


def wait_stopped(worker: PyconnectWorker, name: str) -> None:
    wait_for(
        f"{name} STOPPED without tasks",
        lambda: (s := status(worker, name)) and s["connector"]["state"] == "STOPPED" and not s["tasks"],
        30,
    )


def offsets(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    code, body = worker.rest("GET", f"/connectors/{name}/offsets")
    assert code == 200, body
    return body


def test_offsets_of_a_stopped_sink(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, name, out = unique("in"), unique("osink"), tmp_path / "out.txt"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(20))
    create(workers[0], name, file_sink(topic, out))
    wait_for("20 lines", lambda: len(lines(out)) >= 20, 30)
    assert workers[1].rest("PUT", f"/connectors/{name}/stop")[0] == 204
    wait_stopped(workers[0], name)
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    assert offsets(workers[1], name) == {
        "offsets": [{"partition": partition, "offset": {"kafka_offset": 20}}]
    }

    code, body = workers[0].rest(
        "PATCH",
        f"/connectors/{name}/offsets",
        {"offsets": [{"partition": partition, "offset": {"kafka_offset": 15}}]},
    )
    assert (code, body) == (200, {"message": "The offsets for this connector have been altered successfully"})
    assert offsets(workers[0], name)["offsets"][0]["offset"] == {"kafka_offset": 15}
    code, body = workers[0].rest(
        "PATCH",
        f"/connectors/{name}/offsets",
        {"offsets": [{"partition": {"kafka_topic": topic}, "offset": None}]},
    )
    assert code == 400 and "must contain the keys 'kafka_topic' and 'kafka_partition'" in body["message"], (
        body
    )

    assert workers[1].rest("PUT", f"/connectors/{name}/resume")[0] == 202
    wait_for("records 15..19 written again", lambda: len(lines(out)) >= 25, 30)
    assert lines(out)[20:] == [str(v) for v in range(15, 20)]

    code, body = workers[0].rest("DELETE", f"/connectors/{name}/offsets")
    assert code == 400 and "must be in the STOPPED state" in body["message"], body
    assert workers[1].rest("PUT", f"/connectors/{name}/stop")[0] == 204
    wait_stopped(workers[0], name)
    code, body = workers[1].rest("DELETE", f"/connectors/{name}/offsets")
    assert (code, body) == (200, {"message": "The offsets for this connector have been reset successfully"})
    assert offsets(workers[0], name) == {"offsets": []}
    workers[0].rest("DELETE", f"/connectors/{name}")


async def _read_dlq(bootstrap: str, topic: str, expected: int) -> list[Any]:
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    found: list[Any] = []
    try:
        deadline = time.monotonic() + 30
        while len(found) < expected and time.monotonic() < deadline:
            for batch in (await consumer.getmany(timeout_ms=500)).values():
                found += batch
    finally:
        await consumer.stop()
    return found


def test_poison_records_go_to_the_dead_letter_queue(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, dlq, name = unique("in"), unique("dlq"), unique("dlqsink")
    sink_dir = tmp_path / "sink"
    sink_dir.mkdir()
    create_topic(bootstrap, topic, 1)
    values = [b"1", b"2", b"{not json", b"3", b'"errant"', b"4"]

    async def produce_raw() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for value in values:
                await producer.send(topic, value, key=b"k", headers=[("h", b"v")])
            await producer.flush()
        finally:
            await producer.stop()

    asyncio.run(produce_raw())
    config = {
        "connector.class": FAILING_SINK,
        "tasks.max": "1",
        "topics": topic,
        "fail.dir": str(sink_dir),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "errors.tolerance": "all",
        "errors.log.enable": "true",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    create(workers[0], name, config)
    wait_for("the good records", lambda: len(lines(sink_dir / "records")) >= 4, 30)
    assert lines(sink_dir / "records") == ["1", "2", "3", "4"]
    found = asyncio.run(_read_dlq(bootstrap, dlq, 2))
    assert [r.value for r in found] == [b"{not json", b'"errant"']
    converter, put = ({k: v for k, v in r.headers} for r in found)
    assert found[0].key == b"k" and converter["h"] == b"v"  # the original record, its headers first
    assert [k for k, _ in found[0].headers][1:] == [
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.message",
        "__connect.errors.exception.stacktrace",
    ]
    assert converter["__connect.errors.topic"] == topic.encode()
    assert (converter["__connect.errors.partition"], converter["__connect.errors.offset"]) == (b"0", b"2")
    assert converter["__connect.errors.connector.name"] == name.encode()
    assert converter["__connect.errors.task.id"] == b"0"
    assert converter["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert converter["__connect.errors.class.name"] == b"org.apache.kafka.connect.json.JsonConverter"
    assert put["__connect.errors.stage"] == b"TASK_PUT"
    assert put["__connect.errors.class.name"] == b"org.apache.kafka.connect.sink.SinkTask"
    assert put["__connect.errors.offset"] == b"4"
    assert put["__connect.errors.exception.message"] == b"errant on demand"
    assert task_states(workers[1], name) == ["RUNNING"]
    workers[0].rest("DELETE", f"/connectors/{name}")


def test_topics_regex_and_pause_resume(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    prefix, name, out = unique("rx"), unique("rxsink"), tmp_path / "out.txt"
    for suffix in ("a", "b"):
        create_topic(bootstrap, f"{prefix}.{suffix}", 1)
    create_topic(bootstrap, f"{prefix}-other", 1)
    produce(bootstrap, f"{prefix}.a", range(0, 10))
    produce(bootstrap, f"{prefix}.b", range(10, 20))
    produce(bootstrap, f"{prefix}-other", range(100, 110))
    config = {**file_sink("", out), "topics.regex": f"{prefix}\\.[a-z]"}
    del config["topics"]
    create(workers[1], name, config)
    wait_for("20 lines", lambda: len(lines(out)) >= 20, 30)
    assert workers[0].rest("PUT", f"/connectors/{name}/pause")[0] == 202
    wait_for("the task PAUSED", lambda: task_states(workers[0], name) == ["PAUSED"], 30)
    produce(bootstrap, f"{prefix}.a", range(20, 25))
    time.sleep(1.5)
    assert len(lines(out)) == 20
    assert workers[0].rest("PUT", f"/connectors/{name}/resume")[0] == 202
    wait_for("25 lines", lambda: len(lines(out)) >= 25, 30)
    assert sorted(int(v) for v in lines(out)) == list(range(25))  # the other topic never matched
    workers[0].rest("DELETE", f"/connectors/{name}")


def test_kill_9_mid_stream_loses_nothing(
    workers: Sequence[PyconnectWorker], cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """Last in the module: it kills one of the module's workers (the fixture stops what is left)."""
    bootstrap = cluster_a.bootstrap_servers
    topic, name, out = unique("in"), unique("ksink"), tmp_path / "out.txt"
    create_topic(bootstrap, topic, 2)
    total = 2000
    producer = threading.Thread(target=produce, args=(bootstrap, topic, range(total), 2, 500.0), daemon=True)
    create(workers[0], name, file_sink(topic, out))
    body = wait_for(
        "the task RUNNING",
        lambda: (s := status(workers[0], name)) and task_states(workers[0], name) == ["RUNNING"] and s,
        30,
    )
    owner = body["tasks"][0]["worker_id"]
    victim = next(w for w in workers if w.worker_id == owner)
    survivor = next(w for w in workers if w is not victim)
    producer.start()
    wait_for("the sink mid-stream", lambda: len(lines(out)) >= 300, 30)
    victim.kill()
    killed_at = time.monotonic()
    producer.join(30)
    seen = wait_for(
        "every record after the failover",
        lambda: (values := {v for v in lines(out) if v.isdigit()}) and len(values) >= total and values,
        60,
    )
    print(
        f"\nkill -9 to all {total} records in the file: {time.monotonic() - killed_at:.1f} s; "
        f"{len(lines(out)) - total} written twice"
    )
    assert {int(v) for v in seen} == set(range(total))
    assert task_states(survivor, name) == ["RUNNING"]
