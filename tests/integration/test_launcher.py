"""The local KRaft launcher itself, on clusters these tests start (not the session clusters).

A three-node cluster survives kill -9 of a partition leader and a graceful stop, and a restarted
node rejoins; the ``python -m pyconnect.testing.kafka`` CLI starts, reports and stops a cluster.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.kafka.probe import broker_ids
from pyconnect.testing.java_process import pid_alive, pid_has_tag
from pyconnect.testing.kafka import STATE_FILE, BrokerNode, KafkaCluster, down, start_clusters, stop_clusters

pytestmark = pytest.mark.kafka

TOPIC = "replicated"
PARTITIONS = 3
CLI_TIMEOUT_S = 150.0


@pytest.fixture
def three_nodes(tmp_path: Path) -> Iterator[KafkaCluster]:
    clusters = start_clusters(["T"], tmp_path, brokers=3, die_with_parent=True)
    try:
        yield clusters["T"]
    finally:
        stop_clusters(clusters.values(), timeout=15)
        assert not any(n.running for n in clusters["T"].nodes)


async def topic_partitions(cluster: KafkaCluster) -> list[dict]:
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)
    await admin.start()
    try:
        (topic,) = await admin.describe_topics([TOPIC])
    finally:
        await admin.close()
    return sorted(topic["partitions"], key=lambda p: p["partition"])


async def wait_until(what: str, check: Callable[[], Awaitable[object]], within: float = 60.0) -> object:
    """Poll the async ``check`` until it returns a truthy value; fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    last: object = None
    for _ in range(1000):
        try:
            last = await check()
        except Exception as exc:  # a node may be down or not yet answering: keep polling
            last = exc
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out after {within:.0f}s waiting for {what} (last: {last!r})")


async def produce(cluster: KafkaCluster, values: list[bytes]) -> None:
    producer = AIOKafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        enable_idempotence=True,
        request_timeout_ms=60000,
    )
    await producer.start()
    try:
        futures = [await producer.send(TOPIC, v, partition=i % PARTITIONS) for i, v in enumerate(values)]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def consume_all(cluster: KafkaCluster, expected: int) -> list[bytes]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    got: list[bytes] = []
    try:
        consumer.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
        deadline = time.monotonic() + 60
        for _ in range(1000):
            if len(got) >= expected or time.monotonic() > deadline:
                break
            batches = await consumer.getmany(timeout_ms=500)
            got.extend(r.value for records in batches.values() for r in records)
    finally:
        await consumer.stop()
    return got


@pytest.mark.long  # ~30 s; the short chaos run kills a broker of a three-node cluster in make test
async def test_three_nodes_survive_kill_and_graceful_stop(three_nodes: KafkaCluster) -> None:
    cluster = three_nodes
    assert await broker_ids(cluster.bootstrap_servers) == {1, 2, 3}
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    await admin.start()
    try:
        response = await admin.create_topics(
            [NewTopic(TOPIC, PARTITIONS, 3, topic_configs={"min.insync.replicas": "2"})]
        )
    finally:
        await admin.close()
    assert response.topic_errors[0][1] == 0, response
    produced = [f"before-{i}".encode() for i in range(60)]
    await produce(cluster, produced)

    leader_id = (await topic_partitions(cluster))[0]["leader"]
    victim = cluster.node(leader_id)
    crashed_pid = victim.pid
    victim.kill()
    assert not victim.running and crashed_pid is not None and not pid_alive(crashed_pid)

    produced += [f"after-kill-{i}".encode() for i in range(60)]
    await produce(cluster, produced[60:])
    assert sorted(await consume_all(cluster, len(produced))) == sorted(produced)
    survivors = {1, 2, 3} - {leader_id}
    await wait_until(f"node {leader_id} to leave metadata", lambda: _brokers_are(cluster, survivors))
    assert all(p["leader"] in survivors for p in await topic_partitions(cluster))

    victim.start()
    await asyncio.to_thread(cluster.wait_ready, 90)
    assert await broker_ids(cluster.bootstrap_servers) == {1, 2, 3}
    await wait_until(f"node {leader_id} back in every ISR", lambda: _all_isrs_are(cluster, {1, 2, 3}))

    graceful = cluster.node(next(iter(survivors)))
    started = time.monotonic()
    await asyncio.to_thread(graceful.stop, 20.0)
    assert exit_codes([graceful]) == [143], "SIGTERM should end a broker without SIGKILL"
    assert time.monotonic() - started < 20
    remaining = {1, 2, 3} - {graceful.node_id}
    await wait_until(f"node {graceful.node_id} to leave metadata", lambda: _brokers_are(cluster, remaining))
    produced += [f"after-stop-{i}".encode() for i in range(60)]
    await produce(cluster, produced[120:])
    assert sorted(await consume_all(cluster, len(produced))) == sorted(produced)

    started = time.monotonic()
    await asyncio.to_thread(cluster.stop, 20.0)  # the nodes stop together, so none loses its quorum
    assert exit_codes(cluster.nodes) == [143, 143, 143], "a node needed SIGKILL"
    assert time.monotonic() - started < 20


def exit_codes(nodes: list[BrokerNode]) -> list[int | None]:
    """143 = 128 + SIGTERM: the JVM ran its shutdown hooks; -9 would mean the stop escalated to SIGKILL."""
    return [n.process.exit_code() if n.process else None for n in nodes]


async def _brokers_are(cluster: KafkaCluster, ids: set[int]) -> bool:
    return await broker_ids(cluster.bootstrap_servers) == ids


async def _all_isrs_are(cluster: KafkaCluster, ids: set[int]) -> bool:
    return all(set(p["isr"]) == ids for p in await topic_partitions(cluster))


def cli(*args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyconnect.testing.kafka", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def test_cli_up_status_down(tmp_path: Path) -> None:
    work = tmp_path / "clusters"
    try:
        up = await asyncio.to_thread(cli, "up", "--clusters", "X", "--dir", str(work))
        assert up.returncode == 0, up.stderr
        lines = up.stdout.splitlines()
        assert len(lines) == 1, up.stdout
        bootstrap = json.loads(lines[0])
        assert list(bootstrap) == ["X"] and bootstrap["X"].startswith("127.0.0.1:")
        assert await broker_ids(bootstrap["X"]) == {1}

        (node,) = json.loads((work / STATE_FILE).read_text())["X"]["nodes"]
        pid, tag = node["pid"], node["tag"]
        assert pid_alive(pid) and pid_has_tag(pid, tag)

        status = await asyncio.to_thread(cli, "status", "--dir", str(work))
        assert status.returncode == 0, status.stderr
        assert status.stdout.strip() == f"X: {bootstrap['X']} running nodes [1]"

        stopped = await asyncio.to_thread(cli, "down", "--dir", str(work))
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.strip() == "stopped 1 broker process(es)"
        assert not pid_alive(pid)
        status = await asyncio.to_thread(cli, "status", "--dir", str(work))
        assert status.stdout.strip() == f"X: {bootstrap['X']} running nodes []"
    finally:
        if (work / STATE_FILE).exists():
            down(work, timeout=10)


def test_cli_down_on_empty_dir_fails_with_one_line(tmp_path: Path) -> None:
    result = cli("down", "--dir", str(tmp_path), timeout=60)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and STATE_FILE in lines[0], result.stderr
