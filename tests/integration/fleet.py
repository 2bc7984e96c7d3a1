"""Helpers shared by the fleet tests: start worker processes, wait on REST state, read what tasks wrote."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters
from pyconnect.testing.worker_process import PyconnectWorker

T = TypeVar("T")

# Record timestamps for test data: an hour ago, fixed for the session. Never a constant date: a broker
# rolls a segment whose newest timestamp is older than segment.ms and deletes it once it passes
# retention.ms (7 days by default), so records stamped in the distant past vanish mid-test.
RECENT_MS = (int(time.time()) - 3600) * 1000
Worker = ConnectWorkerProcess


async def create_topic(
    bootstrap: str, topic: str, partitions: int = 1, configs: dict[str, str] | None = None
) -> None:
    """Create ``topic`` (replication factor 1) on the cluster at ``bootstrap``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=configs or {})])
    finally:
        await admin.close()


FAST_GROUP = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "offset.flush.interval.ms": 1000,
}


def wait_for(
    what: str,
    probe: Callable[[], T | None],
    timeout: float,
    interval: float = 0.25,
    describe: Callable[[], object] | None = None,
) -> T:
    """Call ``probe`` until it returns something truthy; AssertionError naming ``what`` on timeout,
    with what ``describe`` answers then (the state that kept the probe false)."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except OSError:
            last = None
        if last:
            return last
        time.sleep(interval)
    seen = f"; {describe()!r}" if describe is not None else ""
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r}{seen})")


@contextmanager
def own_cluster(base: Path, alias: str, brokers: int) -> Iterator[KafkaCluster]:
    """A cluster of the caller's own, started fresh under ``base`` (one a test may stop, kill or
    restart without disturbing the shared clusters A and B), stopped at the end."""
    clusters = start_clusters([alias], base, brokers=brokers, die_with_parent=True)
    try:
        yield clusters[alias]
    finally:
        stop_clusters(clusters.values(), timeout=15)


@contextmanager
def fleet(workers: Sequence[Worker]) -> Iterator[Sequence[Worker]]:
    """Start every worker, wait until each is ready, and stop them all (by PID) at the end."""
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready()
        yield workers
    finally:
        for w in workers:
            w.stop(timeout=20)


def python_workers(
    bootstrap: str, base: Path, group: str, count: int, **extra: object
) -> list[PyconnectWorker]:
    return [
        PyconnectWorker(
            bootstrap, base / f"py-{i}", group_id=group, extra={**FAST_GROUP, **extra}, die_with_parent=True
        )
        for i in range(count)
    ]


def status(worker: Worker, connector: str) -> dict[str, Any] | None:
    code, body = worker.rest("GET", f"/connectors/{connector}/status")
    return body if code == 200 else None


def running_tasks(worker: Worker, connector: str, expected: int) -> dict[int, str] | None:
    """task id -> worker id once the connector and ``expected`` tasks are RUNNING, else None."""
    body = status(worker, connector)
    if not body or body["connector"]["state"] != "RUNNING" or len(body["tasks"]) != expected:
        return None
    if any(t["state"] != "RUNNING" for t in body["tasks"]):
        return None
    return {t["id"]: t["worker_id"] for t in body["tasks"]}


def verifiable(topic: str, tasks: int, throughput: int = 50, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": str(tasks),
        "topic": topic,
        "throughput": str(throughput),
        **extra,
    }


async def read_seqnos(bootstrap: str, topic: str) -> dict[int, list[int]]:
    """Every VerifiableSource record of ``topic``: task id -> seqnos in topic order."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    per_task: dict[int, list[int]] = {}
    try:
        await consumer.start()
        idle = 0
        while idle < 3:
            got = await consumer.getmany(timeout_ms=1000)
            idle = 0 if got else idle + 1
            for messages in got.values():
                for m in messages:
                    task = json.loads(m.key)["payload"]
                    per_task.setdefault(task, []).append(json.loads(m.value)["payload"])
    finally:
        await consumer.stop()
    return per_task


def gaps_and_duplicates(seqnos: list[int]) -> tuple[int, int]:
    present = set(seqnos)
    return len(set(range(min(present), max(present) + 1)) - present), len(seqnos) - len(present)


def read_seqnos_sync(bootstrap: str, topic: str) -> dict[int, list[int]]:
    return asyncio.run(read_seqnos(bootstrap, topic))


TopicRecord = tuple[int, int, bytes | None, bytes | None]


async def read_topic(
    bootstrap: str,
    topic: str,
    isolation: str = "read_committed",
    max_s: float = 30.0,
    *,
    idle_reads: int = 3,
    poll_ms: int = 1000,
) -> list[TopicRecord]:
    """The records of ``topic`` as (partition, offset, key, value), read from the beginning until
    ``idle_reads`` empty polls of ``poll_ms`` in a row, or for at most ``max_s`` seconds."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level=isolation,
    )
    try:
        await consumer.start()
    except BaseException:  # a cluster still starting: the consumer is closed all the same
        await consumer.stop()
        raise
    records: list[TopicRecord] = []
    try:
        idle = 0
        deadline = time.monotonic() + max_s
        while idle < idle_reads and time.monotonic() < deadline:
            got = await consumer.getmany(timeout_ms=poll_ms)
            idle = 0 if got else idle + 1
            records += [(r.partition, r.offset, r.key, r.value) for batch in got.values() for r in batch]
    finally:
        await consumer.stop()
    return records
