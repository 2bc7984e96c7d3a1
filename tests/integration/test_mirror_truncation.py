"""Truncated and recreated sources, and a target rebuilt behind committed offsets, on real Kafka.

Java's MirrorSourceTask skips such gaps in silence (its consumer's ``auto.offset.reset`` moves the
position; a rebuilt target is never noticed). Ours reports each gap (a WARN line with the exact
offsets, ``kafka_connect_mirror_mirrorsourceconnector_truncated_record_count`` and ``..._truncation_count``
in ``/metrics``, ``records_lost`` and a warning on ``/mirrors``) and follows
``pyconnect.mirror.truncation.policy``. Each test mirrors a two-partition topic, stops the connector
(``PUT /stop``: the tasks commit their offsets), breaks one partition, resumes, and checks that the
other partition and everything after the gap are copied exactly once.

Record values are ``<partition>:<n>`` so that a target partition reads as the sequence it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete

from pyconnect.kafka.topic_reads import end_offsets
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import Worker, fleet, python_workers, running_tasks, status, wait_for
from tests.integration.test_metrics_endpoint import matching, parse, scrape
from tests.integration.test_mirror_source import mirror_config, read_all

pytestmark = pytest.mark.kafka

PREFIX = "kafka_connect_mirror_mirrorsourceconnector_"
POLICY = "pyconnect.mirror.truncation.policy"


async def produce(bootstrap: str, topic: str, partition: int, first: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for n in range(first, first + count):
            await producer.send(topic, f"{partition}:{n}".encode(), partition=partition)
        await producer.flush()
    finally:
        await producer.stop()


async def admin_call(bootstrap: str, call: Callable[[AIOKafkaAdminClient], Any]) -> Any:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return await call(admin)
    finally:
        await admin.close()


def create_topic(bootstrap: str, topic: str, partitions: int = 2) -> None:
    asyncio.run(admin_call(bootstrap, lambda a: a.create_topics([NewTopic(topic, partitions, 1)])))


def fill(bootstrap: str, topic: str, first: int, count: int, partitions: tuple[int, ...] = (0, 1)) -> None:
    for p in partitions:
        asyncio.run(produce(bootstrap, topic, p, first, count))


def held(bootstrap: str, topic: str) -> dict[int, list[int]]:
    rows = asyncio.run(read_all(bootstrap, topic, 20))
    return {p: [int((r[3] or b"0:-1").split(b":")[1]) for r in partition] for p, partition in rows.items()}


def wait_held(bootstrap: str, topic: str, expected: dict[int, list[int]], timeout: float = 60) -> None:
    wait_for(
        f"{topic} to hold { ({p: len(v) for p, v in expected.items()}) } records",
        lambda: (
            (found := held(bootstrap, topic))
            and all(len(found.get(p, ())) >= len(v) for p, v in expected.items())
        ),
        timeout,
        0.5,
    )
    found = held(bootstrap, topic)
    assert found == expected, {
        p: (
            len(found.get(p, [])),
            len(v),
            next((i for i, (x, y) in enumerate(zip(found.get(p, []), v, strict=False)) if x != y), None),
        )
        for p, v in expected.items()
        if found.get(p) != v
    }


def connector_state(worker: Worker, name: str) -> str | None:
    found = status(worker, name)
    return found["connector"]["state"] if found else None


def stop_connector(worker: Worker, name: str) -> None:
    """``PUT /stop``, then wait for STOPPED and for task 0 itself to have stopped: the task logs
    "Stopping <name>-0 took N ms." (Java: "Stopping task-thread-<name>-0 took ...") once its consumer is
    closed, which a worker may do after it reports STOPPED."""
    marker = f"{name}-0 took"
    before = worker.log_file.read_text(errors="replace").count(marker)
    code, body = worker.rest("PUT", f"/connectors/{name}/stop")
    assert code == 204, body
    wait_for(f"{name} STOPPED", lambda: connector_state(worker, name) == "STOPPED" or None, 60)
    wait_for(
        f"task {name}-0 stopped",
        lambda: worker.log_file.read_text(errors="replace").count(marker) > before or None,
        60,
    )


def resume_connector(worker: Worker, name: str) -> None:
    code, body = worker.rest("PUT", f"/connectors/{name}/resume")
    assert code == 202, body


def series(worker: Worker, name: str, remote: str) -> dict[str, float]:
    """partition -> value of ``PREFIX + name`` for the remote topic."""
    return {
        dict(ls)["partition"]: v
        for ls, v in matching(parse(scrape(worker)), PREFIX + name, topic=remote).items()
    }


def topic_row(worker: Worker, remote: str) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    for flow in body["flows"]:
        for row in flow["topics"]:
            if row["topic"] == remote:
                return {**row, "warnings": flow["warnings"]}
    return None


def start_mirror(worker: Worker, a: ClusterHandle, b: ClusterHandle, topic: str, **extra: str) -> None:
    config = mirror_config(a, b, topic, **{"tasks.max": "1", "offset.flush.interval.ms": "1000", **extra})
    code, body = worker.rest("POST", "/connectors", {"name": "mirror", "config": config})
    assert code == 201, body
    wait_for("1 RUNNING task", lambda: running_tasks(worker, "mirror", 1), 60)


def test_records_deleted_before_copied_are_reported_and_skipped(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("trunc")
    remote = f"A.{topic}"
    create_topic(a, topic)
    fill(a, topic, 0, 100)
    with fleet(python_workers(b, tmp_path, unique("trunc-group"), 1)) as (worker,):
        start_mirror(worker, cluster_a, cluster_b, topic)
        wait_held(b, remote, {0: list(range(100)), 1: list(range(100))})
        stop_connector(worker, "mirror")
        fill(a, topic, 100, 100)
        asyncio.run(
            admin_call(a, lambda ad: ad.delete_records({TopicPartition(topic, 0): RecordsToDelete(150)}))
        )
        resume_connector(worker, "mirror")
        wait_held(b, remote, {0: [*range(100), *range(150, 200)], 1: list(range(200))})
        log = worker.log_file.read_text(errors="replace")
        assert (
            f"records 100..149 of {topic}-0 were deleted before they were copied (50 records lost" in log
        ), log[-3000:]
        assert f"resuming at offset 150 ({POLICY}=continue)" in log
        assert f"of {topic}-1 " not in log, "only the truncated partition is reported"
        lost = wait_for(
            "the truncation metric", lambda: series(worker, "truncated_record_count", remote) or None, 30
        )
        assert lost == {"0": 50.0, "1": 0.0}
        assert series(worker, "truncation_count", remote) == {"0": 1.0, "1": 0.0}
        row = wait_for("the status row", lambda: topic_row(worker, remote), 30)
        assert row["records_lost"] == 50 and row["truncations"] == 1, row
        assert any("50 records lost" in w for w in row["warnings"]), row
        fill(a, topic, 200, 10)
        wait_held(b, remote, {0: [*range(100), *range(150, 210)], 1: list(range(210))})


def test_recreated_source_topic_fails_the_task_under_the_fail_policy_then_continues(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("recreate")
    remote = f"A.{topic}"
    create_topic(a, topic)
    fill(a, topic, 0, 100)
    with fleet(python_workers(b, tmp_path, unique("recreate-group"), 1)) as (worker,):
        start_mirror(worker, cluster_a, cluster_b, topic, **{POLICY: "fail"})
        wait_held(b, remote, {0: list(range(100)), 1: list(range(100))})
        stop_connector(worker, "mirror")
        asyncio.run(admin_call(a, lambda ad: ad.delete_topics([topic])))
        wait_for(
            "the topic deleted",
            lambda: topic not in asyncio.run(admin_call(a, lambda ad: ad.list_topics())) or None,
            30,
        )
        wait_for("the topic created again", lambda: created_ok(a, topic), 30, 0.5)
        fill(a, topic, 1000, 30)
        resume_connector(worker, "mirror")

        def failed() -> dict[str, Any] | None:
            found = status(worker, "mirror")
            tasks = (found or {}).get("tasks") or []
            return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

        task = wait_for("the task FAILED", failed, 60)
        trace = task["trace"]
        first = trace.splitlines()[0]
        assert "ConnectError" in first and f"{POLICY}=fail" in first, trace
        assert (
            "ends at 30, before the next offset to copy 100: the topic was recreated (or its log truncated); "
            "its records 0..29 are copied from the log start"
        ) in first, trace
        assert held(b, remote) == {0: list(range(100)), 1: list(range(100))}, "nothing copied past the gap"

        config = {
            **mirror_config(
                cluster_a, cluster_b, topic, **{"tasks.max": "1", "offset.flush.interval.ms": "1000"}
            ),
            POLICY: "continue",
        }
        code, body = worker.rest("PUT", "/connectors/mirror/config", config)
        assert code == 200, body
        wait_held(b, remote, {0: [*range(100), *range(1000, 1030)], 1: [*range(100), *range(1000, 1030)]})
        assert wait_for(
            "the gap counted", lambda: series(worker, "truncation_count", remote) or None, 30
        ) == {"0": 1.0, "1": 1.0}
        assert series(worker, "truncated_record_count", remote) == {"0": 0.0, "1": 0.0}


def created_ok(bootstrap: str, topic: str) -> bool | None:
    try:
        create_topic(bootstrap, topic)
    except Exception:
        return None
    return True


def test_target_rebuilt_behind_committed_offsets_is_reported(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("rebuilt")
    remote = f"A.{topic}"
    create_topic(a, topic)
    fill(a, topic, 0, 100)
    with fleet(python_workers(b, tmp_path, unique("rebuilt-group"), 1)) as (worker,):
        start_mirror(worker, cluster_a, cluster_b, topic)
        wait_held(b, remote, {0: list(range(100)), 1: list(range(100))})
        stop_connector(worker, "mirror")
        asyncio.run(admin_call(b, lambda ad: ad.delete_topics([remote])))
        wait_for(
            "the remote topic deleted",
            lambda: remote not in asyncio.run(admin_call(b, lambda ad: ad.list_topics())) or None,
            30,
        )
        wait_for("the remote topic created empty", lambda: created_ok(b, remote), 30, 0.5)
        wait_for(
            "the new remote topic to answer its end offsets",
            lambda: asyncio.run(end_offsets(b, remote, [0, 1], "read_uncommitted")) == {0: 0, 1: 0} or None,
            30,
        )
        fill(a, topic, 100, 20)
        resume_connector(worker, "mirror")
        wait_held(b, remote, {0: list(range(100, 120)), 1: list(range(100, 120))})
        lines = [
            f"the target partition of {topic}-{p} is empty while source offsets up to 99 are committed as "
            f"copied: the target was rebuilt; source records 0..99 (100 records) are not on the target; "
            f"resuming at offset 100 ({POLICY}=continue)"
            for p in (0, 1)
        ]
        wait_for(  # the check is a task of its own: start never waits for the target
            "both rebuilt partitions reported",
            lambda: all(line in worker.log_file.read_text(errors="replace") for line in lines) or None,
            30,
        )
        lost = wait_for(
            "the truncation metric", lambda: series(worker, "truncated_record_count", remote) or None, 30
        )
        assert lost == {"0": 100.0, "1": 100.0}
