"""KIP-618 zombie fencing on real Kafka (``exactly.once.source.support=enabled``).

- ``fence_producers`` bumps the epoch of a transactional id: a producer that initialised the id before
  cannot commit its open transaction, and nothing it wrote becomes visible to ``read_committed``;
- a VerifiableSource connector scaled 1 -> 3 -> 2 -> 1 tasks while it produces on a fleet of two
  workers: each new generation is preceded by a ``tasks-fencing-C`` record with its task count (Java's
  bytes), and a ``read_committed`` reader sees every task's seqnos once, without a gap;
- a zombie: the worker running a task is frozen (SIGSTOP) and at once the connector gets a new
  generation (more tasks); the leader fences the old generation's producers, records it, and runs all
  tasks once the zombie's session expired; woken (SIGCONT), the zombie's task fails on its next commit
  (ProducerFenced): still every seqno exactly once;
- the internal ``PUT /connectors/{c}/fence`` answers as Java's (signature first, 404, 204), and an
  offset reset of a stopped connector fences its last generation first (KIP-875 under EOS).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.herder.signing import sign
from pyconnect.kafka.batch_sender import OutgoingRecord
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.producer_fencing import fence_producers
from pyconnect.kafka.task_transactions import TaskTransactions, TransactionCommitError
from pyconnect.protocol.internal_records import (
    TaskCountRecord,
    encode_config_record,
    encode_offset_key,
    encode_offset_value,
)
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.connect_worker import ConnectWorkerProcess, group_leader_url
from tests.integration.fleet import (
    fleet,
    gaps_and_duplicates,
    python_workers,
    read_topic,
    running_tasks,
    status,
    verifiable,
    wait_for,
)

pytestmark = pytest.mark.kafka

EOS = {"exactly.once.source.support": "enabled", "scheduled.rebalance.max.delay.ms": 0}


def config_records(worker: ConnectWorkerProcess) -> list[tuple[bytes | None, bytes | None]]:
    assert worker.config_topic is not None
    records = asyncio.run(read_topic(worker.bootstrap_servers, worker.config_topic, max_s=10))
    return [(k, v) for _, _, k, v in records]


def task_counts(worker: ConnectWorkerProcess, connector: str) -> list[int]:
    assert worker.config_topic is not None
    return task_counts_in(worker.bootstrap_servers, worker.config_topic, connector)


def task_counts_in(bootstrap: str, config_topic: str, connector: str) -> list[int]:
    """The ``tasks-fencing-<connector>`` values in topic order (asserting Java's bytes for each)."""
    counts = []
    records = asyncio.run(read_topic(bootstrap, config_topic, max_s=10))
    for key, value in [(k, v) for _, _, k, v in records]:
        if key == f"tasks-fencing-{connector}".encode():
            assert value is not None
            count = json.loads(value)["task-count"]
            assert (key, value) == encode_config_record(TaskCountRecord(connector, count))
            counts.append(count)
    return counts


def seqnos_per_task(bootstrap: str, topic: str) -> dict[int, list[int]]:
    per_task: dict[int, list[int]] = {}
    for _, _, key, value in asyncio.run(read_topic(bootstrap, topic)):
        assert key is not None and value is not None
        per_task.setdefault(json.loads(key)["payload"], []).append(json.loads(value)["payload"])
    return per_task


def assert_exactly_once(per_task: dict[int, list[int]], tasks: int, label: str) -> None:
    assert sorted(per_task) == list(range(tasks)), per_task.keys()
    for task, values in sorted(per_task.items()):
        gaps, duplicates = gaps_and_duplicates(values)
        print(f"{label}: task {task}: {len(values)} records, {gaps} lost, {duplicates} duplicated")
        assert min(values) == 0 and (gaps, duplicates) == (0, 0), (
            f"task {task}: {gaps} lost, {duplicates} repeated"
        )


async def log_end(bootstrap: str, topic: str, partition: int) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        tp = TopicPartition(topic, partition)
        return (await consumer.end_offsets([tp]))[tp]
    finally:
        await consumer.stop()


def reconfigure(worker: ConnectWorkerProcess, name: str, config: dict[str, str]) -> None:
    code, body = worker.rest("PUT", f"/connectors/{name}/config", config)
    assert code == 200, body


async def test_fence_producers_bumps_the_epoch_of_every_id(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("out"), unique("offsets")
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, 1, 1) for t in (topic, offsets_topic)])
    finally:
        await admin.close()
    prefix = unique("group") + "-c-"
    producers = [
        create_producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": "true", "transactional.id": f"{prefix}{n}"}
        )
        for n in range(2)
    ]
    try:
        zombies = []
        for n, producer in enumerate(producers):
            await producer.start()
            zombie = TaskTransactions(producer, offsets_topic, f"c-{n}")
            await zombie.initialize()
            await zombie.send([OutgoingRecord(topic, b"k", f"committed-{n}".encode(), 0)])
            await zombie.commit([])
            await zombie.send([OutgoingRecord(topic, b"k", f"open-{n}".encode(), 0)])
            zombies.append(zombie)
        started = time.monotonic()
        await fence_producers({"bootstrap.servers": bootstrap}, [f"{prefix}0", f"{prefix}1", f"{prefix}9"])
        print(f"\nfenced 3 transactional ids in {time.monotonic() - started:.2f}s")
        for zombie in zombies:
            with pytest.raises(TransactionCommitError):
                await zombie.commit([])
    finally:
        for producer in producers:
            await producer.stop()
    values = sorted(v for _, _, _, v in await read_topic(bootstrap, topic) if v is not None)
    assert values == [b"committed-0", b"committed-1"]


@pytest.mark.long
def test_scaling_a_connector_fences_each_generation_with_every_record_exactly_once(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fence-scale"), unique("out")
    bootstrap = cluster_a.bootstrap_servers
    workers = python_workers(bootstrap, tmp_path, group, 2, **EOS)
    with fleet(workers):
        config = verifiable(topic, 1, throughput=100)
        code, body = workers[0].rest("POST", "/connectors", {"name": "verif", "config": config})
        assert code == 201, body
        wait_for("1 task RUNNING", lambda: running_tasks(workers[0], "verif", 1), 60)
        wait_for("the first task-count record", lambda: task_counts(workers[0], "verif") == [1], 30)
        for tasks in (3, 2, 1):
            time.sleep(2)  # the current generation produces for a while
            reconfigure(workers[1], "verif", {**config, "tasks.max": str(tasks)})
            wait_for(f"{tasks} tasks RUNNING", lambda n=tasks: running_tasks(workers[0], "verif", n), 60)
            wait_for(
                f"the task-count record {tasks}",
                lambda n=tasks: task_counts(workers[0], "verif")[-1:] == [n],
                30,
            )
        time.sleep(2)
        counts = task_counts(workers[0], "verif")
        logs = "".join(w.log_file.read_text(errors="replace") for w in workers)
    assert counts == [1, 3, 2, 1], counts
    # 1 -> 3 needs no fencing by the leader (one task's own initialisation fences its older self);
    # 3 -> 2 and 2 -> 1 fence every producer of the 3 and 2 older tasks
    assert "Fencing out 3 task producers for source connector verif" in logs
    assert "Fencing out 2 task producers for source connector verif" in logs
    assert_exactly_once(seqnos_per_task(bootstrap, topic), 3, "scaled 1->3->2->1")


@pytest.mark.long  # ~25 s; the fence endpoint and producer-epoch tests of this module stay in make test
def test_a_frozen_workers_task_is_fenced_by_the_round_and_commits_nothing(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fence-zombie"), unique("out")
    bootstrap = cluster_a.bootstrap_servers
    workers = python_workers(bootstrap, tmp_path, group, 2, **EOS)
    zombie: ConnectWorkerProcess | None = None
    with fleet(workers):
        config = verifiable(topic, 2, throughput=100)
        code, body = workers[0].rest("POST", "/connectors", {"name": "verif", "config": config})
        assert code == 201, body
        owners = wait_for("2 tasks RUNNING", lambda: running_tasks(workers[0], "verif", 2), 60)
        leader_url = wait_for("the leader", lambda: group_leader_url(bootstrap, group), 30)
        leader = next(w for w in workers if w.rest_url == leader_url)
        zombie = next(w for w in workers if w is not leader)
        assert zombie.worker_id in owners.values(), owners
        wait_for("the task-count record 2", lambda: task_counts(leader, "verif") == [2], 30)
        time.sleep(2)
        assert zombie.pid is not None
        os.kill(zombie.pid, signal.SIGSTOP)
        try:
            # At once, within the zombie's session: the round fences its producers before anything else
            # could (the leader takes its tasks only once the session of 6 s expires)
            reconfigure(leader, "verif", {**config, "tasks.max": "3"})
            wait_for(
                "3 tasks RUNNING on the leader",
                lambda: (
                    (o := running_tasks(leader, "verif", 3)) and set(o.values()) == {leader.worker_id} and o
                ),
                60,
            )
            assert task_counts(leader, "verif") == [2, 3]
            time.sleep(2)
        finally:
            os.kill(zombie.pid, signal.SIGCONT)
        wait_for("the zombie back in the group", lambda: running_tasks(leader, "verif", 3), 60)
        time.sleep(5)
        leader_log = leader.log_file.read_text(errors="replace")
        zombie_log = zombie.log_file.read_text(errors="replace")
    assert "Fencing out 2 task producers for source connector verif" in leader_log
    (frozen_task,) = [task for task, owner in owners.items() if owner == zombie.worker_id]
    task_lines = [line for line in zombie_log.splitlines() if f"verif-{frozen_task}" in line]
    print("\n".join(task_lines))
    failures = [line for line in task_lines if f"Task verif-{frozen_task} failed" in line]
    held_back = [line for line in task_lines if "holding polled records back" in line]
    # Woken, the zombie either tries to commit and is refused by the broker (its producer was fenced),
    # or first sees its membership lapsed and holds its polled records back until it is stopped:
    # which comes first is a race between its commit and its heartbeat. Nothing else may happen.
    assert all("ProducerFenced" in line for line in failures), failures
    assert failures or held_back, "woken, the zombie neither was refused its commit nor held back"
    assert_exactly_once(seqnos_per_task(bootstrap, topic), 3, "zombie fenced")


def test_the_fence_endpoint_checks_the_signature_first_then_fences(
    cluster_a: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    group, topic = unique("fence-rest"), unique("out")
    bootstrap = cluster_a.bootstrap_servers
    workers = python_workers(bootstrap, tmp_path, group, 2, **EOS)
    with fleet(workers):
        code, body = workers[0].rest("POST", "/connectors", {"name": "verif", "config": verifiable(topic, 2)})
        assert code == 201, body
        wait_for("2 tasks RUNNING", lambda: running_tasks(workers[0], "verif", 2), 60)
        for worker in workers:
            assert worker.rest("PUT", "/connectors/nope/fence") == (
                400,
                {"error_code": 400, "message": "Internal request missing required signature"},
            )
        headers = signed_empty_body(workers[0])
        leader_url = wait_for("the leader", lambda: group_leader_url(bootstrap, group), 30)
        leader = next(w for w in workers if w.rest_url == leader_url)
        follower = next(w for w in workers if w is not leader)
        not_found = {"error_code": 404, "message": "Connector nope not found"}
        assert put_fence(leader, "nope", headers) == (404, not_found)
        assert put_fence(leader, "verif", headers) == (204, None)
        assert put_fence(leader, "verif", {**headers, "X-Connect-Authorization": "AAAA"}) == (
            403,
            {"error_code": 403, "message": "Internal request contained invalid signature."},
        )
        # A follower checks the signature, then forwards as Java's RestClient does: with the
        # Authorization header only, so the leader refuses the unsigned copy.
        assert put_fence(follower, "verif", {**headers, "X-Connect-Authorization": "AAAA"})[0] == 403
        assert put_fence(follower, "verif", headers) == (
            400,
            {"error_code": 400, "message": "Internal request missing required signature"},
        )
        assert task_counts(workers[0], "verif") == [2], "nothing pending: no new record"

        # KIP-875 under EOS: a fencing round before the offsets of the stopped connector change
        assert follower.rest("PUT", "/connectors/verif/stop")[0] == 204
        wait_for(
            "verif STOPPED",
            lambda: (s := status(leader, "verif")) and s["connector"]["state"] == "STOPPED",
            30,
        )
        code, body = follower.rest("DELETE", "/connectors/verif/offsets")
        assert code == 200, body
        assert task_counts(leader, "verif") == [2, 0]
        assert "Fencing out 2 task producers for source connector verif" in leader.log_file.read_text(
            errors="replace"
        )
        # ... and written in one transaction of task 0's producer (a commit marker follows them)
        assert follower.rest("GET", "/connectors/verif/offsets") == (200, {"offsets": []})
        altered = {"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 5}}]}
        code, body = follower.rest("PATCH", "/connectors/verif/offsets", altered)
        assert code == 200, body
        assert follower.rest("GET", "/connectors/verif/offsets") == (200, altered)
        assert leader.offset_topic is not None
        offsets = asyncio.run(read_topic(bootstrap, leader.offset_topic, max_s=10))
        key = encode_offset_key("verif", {"id": 0})
        mine = [(p, o, v) for p, o, k, v in offsets if k == key]
        assert mine[-1][2] == encode_offset_value({"seqno": 5})
        partition, position = mine[-1][0], mine[-1][1]
        later = [o for p, o, _, _ in offsets if p == partition and o > position]
        assert not later, "nothing after it but its transaction's commit marker"
        assert asyncio.run(log_end(bootstrap, leader.offset_topic, partition)) == position + 2


def signed_empty_body(worker: ConnectWorkerProcess) -> dict[str, str]:
    """Signature headers over an empty body with the cluster's current session key."""
    key = None
    for k, v in config_records(worker):
        if k == b"session-key" and v is not None:
            key = json.loads(v)
    assert key is not None, "no session key in the config topic"
    return sign(base64.b64decode(key["key"]), b"", key["algorithm"])


def put_fence(worker: ConnectWorkerProcess, connector: str, headers: dict[str, str]) -> tuple[int, object]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        worker.rest_url + f"connectors/{connector}/fence", data=b"", method="PUT", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None
