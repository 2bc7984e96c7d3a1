"""Exactly-once source support on a cluster that refuses it: clear errors, a worker that keeps serving,
recovery once the cause is fixed (issue 13, point 6).

One SASL_PLAINTEXT cluster T enforces ACLs. The pyconnect worker runs as ``worker``, a principal with
every ACL on topics, groups and the cluster and WRITE/DESCRIBE on the tasks' transactional ids
(``<group.id>-`` prefixed, which the leader needs to fence them), but, until the first scenario grants
it, not on the leader's own ``connect-cluster-<group.id>``. Tasks write as ``tasker``
(``producer.override.*``), granted per scenario. The scenarios:

- (a) the leader cannot claim the config topic's write privileges: ``/health`` answers 500 naming the
  transactional id and the operations, a create answers 500 with the same reason, REST keeps serving;
  once granted, the leader claims them and the create succeeds;
- (b) a task's principal lacks WRITE on its transactional id ``<group.id>-<connector>-<task>``: the task
  is FAILED with a trace naming the id and the operations; granted and restarted, it runs;
- (c) a task's principal lacks WRITE on the topic: FAILED naming the topic and WRITE; likewise fixed;
- Java's ``testTasksFailOnInabilityToFence``: a two-task connector whose admin client (``fencer``,
  ``admin.override.*``) may not fence its tasks' transactional ids starts (a fresh connector needs no
  fencing), then, reconfigured, its tasks fail naming the ids; granted, the restarted tasks run;
- (d) brokers that cannot run transactions (``transaction.state.log.replication.factor`` above the
  number of brokers: every ``InitProducerId`` answers COORDINATOR_NOT_AVAILABLE), on a plaintext
  cluster of its own: ``/health`` and a create name the setting; with the broker fixed the worker
  recovers by itself;
- (long) what a Java worker does in case (a), recorded for comparison.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition

from pyconnect.kafka.clients import create_consumer
from pyconnect.testing.backends import BackendUnavailable, chosen_backend
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.kafka import KafkaCluster, render_properties, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, status, verifiable, wait_for
from tests.integration.secured_fleet import client_security, grant_sync, secured_worker_properties

pytestmark = pytest.mark.kafka

MECHANISM = "SCRAM-SHA-512"
USERS = (ADMIN_USER, "worker", "tasker", "fencer")
GROUP = "eos-acl"
LEADER_ID = f"connect-cluster-{GROUP}"
FAIL_S = 30.0
FLOW_S = 45.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    backend = chosen_backend()
    if backend != "local":
        raise BackendUnavailable(
            f"test_exactly_once_failures starts its own secured cluster and needs the local backend; "
            f"PYCONNECT_TEST_BACKEND is {backend!r}"
        )
    started = start_clusters(
        ["T"],
        tmp_path_factory.mktemp("kafka-eos-acl"),
        security="sasl_plaintext",
        users=USERS,
        die_with_parent=True,
    )
    try:
        yield started["T"]
    finally:
        stop_clusters(started.values())


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def client(cluster: KafkaCluster, user: str) -> dict[str, str]:
    return cluster.client_properties(user, MECHANISM)


@pytest.fixture(scope="module")
def worker(cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PyconnectWorker]:
    for rtype, name in (("topic", "*"), ("group", "*"), ("cluster", "kafka-cluster")):
        grant_sync(cluster, "worker", rtype, name, ["all"])
    grant_sync(cluster, "worker", "transactional_id", f"{GROUP}-", ["write", "describe"], "PREFIXED")
    props = secured_worker_properties(
        client_security(client(cluster, "worker")), **{"exactly.once.source.support": "enabled"}
    )
    w = PyconnectWorker(
        cluster.bootstrap_servers,
        tmp_path_factory.mktemp("eos-acl-worker"),
        group_id=GROUP,
        extra=props,
        die_with_parent=True,
    )
    w.start()
    try:
        w.wait_ready(healthy=False)  # the leader cannot claim its privileges until (a) grants them
        yield w
    finally:
        w.stop(timeout=20)


def serves_rest(worker: PyconnectWorker) -> None:
    assert worker.running
    assert worker.rest("GET", "/")[0] == 200


def first_line(trace: str) -> str:
    return trace.splitlines()[0]


def tasker_config(cluster: KafkaCluster, topic: str) -> dict[str, str]:
    tasker = {k: v for k, v in client(cluster, "tasker").items() if k != "bootstrap.servers"}
    return {
        **verifiable(topic, 1, throughput=20),
        **{f"producer.override.{k}": v for k, v in tasker.items()},
    }


def failed_task(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        body = status(worker, name)
        tasks = body["tasks"] if body else []
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    return wait_for(f"task 0 of {name} FAILED", probe, FAIL_S)


def running(worker: PyconnectWorker, name: str) -> None:
    def probe() -> bool:
        body = status(worker, name)
        return bool(
            body
            and body["connector"]["state"] == "RUNNING"
            and body["tasks"]
            and all(t["state"] == "RUNNING" for t in body["tasks"])
        )

    wait_for(f"{name} and its task RUNNING", probe, FLOW_S)


async def committed_count(cluster: KafkaCluster, topic: str) -> int:
    consumer = create_consumer(
        {**client(cluster, ADMIN_USER), "auto.offset.reset": "earliest", "isolation.level": "read_committed"}
    )
    await consumer.start()
    try:
        if topic not in await consumer.topics():
            return 0
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        count = 0
        deadline = time.monotonic() + 10
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for records in (await consumer.getmany(tp, timeout_ms=500)).values():
                count += len(records)
        return count
    finally:
        await consumer.stop()


def records_arrive(cluster: KafkaCluster, topic: str) -> None:
    wait_for(f"committed records on {topic}", lambda: run(committed_count(cluster, topic)) >= 5, FLOW_S, 1.0)


def test_a_leader_without_its_transactional_id_says_so_and_recovers_once_granted(
    cluster: KafkaCluster, worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    def unhealthy() -> dict[str, Any] | None:
        code, body = worker.rest("GET", "/health")
        return body if code == 500 and LEADER_ID in str(body.get("message")) else None

    health = wait_for("/health naming the leader's transactional id", unhealthy, FAIL_S)
    print(f"\n(a) /health: {health['message']}")
    assert f"TransactionalId {LEADER_ID}" in health["message"], health
    assert "WRITE" in health["message"] and "DESCRIBE" in health["message"], health

    topic = unique("eos-a")
    name = unique("eos-a")
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": verifiable(topic, 1)})
    print(f"(a) create: {code} {body}")
    assert code == 500, body
    assert f"TransactionalId {LEADER_ID}" in body["message"], body
    serves_rest(worker)

    grant_sync(cluster, "worker", "transactional_id", LEADER_ID, ["write", "describe"])
    wait_for("/health 200 after the grant", lambda: worker.rest("GET", "/health")[0] == 200, FLOW_S, 1.0)
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": verifiable(topic, 1)})
    assert code == 201, body
    running(worker, name)
    records_arrive(cluster, topic)
    worker.rest("DELETE", f"/connectors/{name}")


@pytest.fixture
def leader_granted(cluster: KafkaCluster, worker: PyconnectWorker) -> PyconnectWorker:
    grant_sync(cluster, "worker", "transactional_id", LEADER_ID, ["write", "describe"])
    wait_for("/health 200", lambda: worker.rest("GET", "/health")[0] == 200, FLOW_S, 1.0)
    return worker


def tasker_grants(cluster: KafkaCluster, topic: str, *, topic_write: bool = True) -> None:
    """What a task's producer needs besides its transactional id: WRITE on its topic and on the worker's
    offsets topic (the offsets go in the same transaction); DESCRIBE to look them up."""
    grant_sync(cluster, "tasker", "topic", topic, ["describe", "create"] + (["write"] if topic_write else []))
    grant_sync(cluster, "tasker", "topic", f"{GROUP}-offsets", ["describe", "write"])


def test_b_a_task_without_its_transactional_id_fails_naming_it(
    cluster: KafkaCluster, leader_granted: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    worker = leader_granted
    topic = unique("eos-b")
    name = unique("eos-b")
    tasker_grants(cluster, topic)
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": tasker_config(cluster, topic)})
    assert code == 201, body
    task_id = f"{GROUP}-{name}-0"
    line = first_line(failed_task(worker, name)["trace"])
    print(f"\n(b) task trace: {line}")
    assert f"TransactionalId {task_id}" in line and "WRITE" in line, line
    serves_rest(worker)

    grant_sync(cluster, "tasker", "transactional_id", task_id, ["write", "describe"])
    assert worker.rest("POST", f"/connectors/{name}/tasks/0/restart")[0] == 204
    running(worker, name)
    records_arrive(cluster, topic)
    worker.rest("DELETE", f"/connectors/{name}")


def test_c_a_task_without_write_on_its_topic_fails_naming_it(
    cluster: KafkaCluster, leader_granted: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    worker = leader_granted
    topic = unique("eos-c")
    name = unique("eos-c")
    tasker_grants(cluster, topic, topic_write=False)
    grant_sync(cluster, "tasker", "transactional_id", f"{GROUP}-{name}-0", ["write", "describe"])
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": tasker_config(cluster, topic)})
    assert code == 201, body
    line = first_line(failed_task(worker, name)["trace"])
    print(f"\n(c) task trace: {line}")
    assert f"Topic {topic}" in line and "WRITE" in line, line
    serves_rest(worker)

    grant_sync(cluster, "tasker", "topic", topic, ["write"])
    assert worker.rest("POST", f"/connectors/{name}/tasks/0/restart")[0] == 204
    running(worker, name)
    records_arrive(cluster, topic)
    worker.rest("DELETE", f"/connectors/{name}")


def test_tasks_fail_on_inability_to_fence_and_run_once_granted(
    cluster: KafkaCluster, leader_granted: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    """Java's ``ExactlyOnceSourceIntegrationTest.testTasksFailOnInabilityToFence``: the round of zombie
    fencing before a new generation of tasks fails, every task is FAILED naming the transactional id
    and the operation, the connector stays RUNNING; once the connector's admin principal may write the
    ids, restarting the failed tasks brings them up."""
    worker = leader_granted
    topic, name = unique("eos-fence"), unique("eos-fence")
    grant_sync(cluster, "fencer", "topic", topic, ["all"])
    grant_sync(cluster, "fencer", "topic", f"{GROUP}-offsets", ["all"])
    fencer = {k: v for k, v in client(cluster, "fencer").items() if k != "bootstrap.servers"}
    config = {**verifiable(topic, 2, throughput=20), **{f"admin.override.{k}": v for k, v in fencer.items()}}
    code, body = worker.rest("PUT", f"/connectors/{name}/config", config)
    assert code == 201, body
    running(worker, name)

    code, body = worker.rest(
        "PUT", f"/connectors/{name}/config", {**config, "message.in.a.bottle": "19e1844"}
    )
    assert code == 200, body

    def tasks_failed() -> list[dict[str, Any]] | None:
        body = status(worker, name)
        if not body or body["connector"]["state"] != "RUNNING" or len(body["tasks"]) != 2:
            return None
        return body["tasks"] if all(t["state"] == "FAILED" for t in body["tasks"]) else None

    tasks = wait_for("both tasks FAILED by the failed fencing round", tasks_failed, FAIL_S)
    for task in tasks:
        line = first_line(task["trace"])
        print(f"\nfencing impossible, task {task['id']}: {line}")
        assert "zombie fencing" in line and "Write on TransactionalId" in line, line
        assert f"{GROUP}-{name}-" in line, line
    serves_rest(worker)

    for task in (0, 1):
        grant_sync(cluster, "fencer", "transactional_id", f"{GROUP}-{name}-{task}", ["all"])
    code, _ = worker.rest("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
    assert code in (202, 204), code
    running(worker, name)
    records_arrive(cluster, topic)
    worker.rest("DELETE", f"/connectors/{name}")


@pytest.mark.long
def test_java_leader_without_its_transactional_id_for_comparison(
    cluster: KafkaCluster, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """What Java's worker does in scenario (a), recorded (not copied): same principal, same cluster, a
    group whose ``connect-cluster-<group.id>`` the principal may not write."""
    group = unique("java-eos")
    props = secured_worker_properties(
        client_security(client(cluster, "worker")), **{"exactly.once.source.support": "enabled"}
    )
    java = JavaConnectWorker(
        cluster.bootstrap_servers, tmp_path / "java", group_id=group, extra=props, die_with_parent=True
    )
    java.start()
    try:
        refusal = "Transactional Id authorization failed"
        wait_for(
            f"{refusal} in Java's log", lambda: refusal in java.log_file.read_text(errors="replace"), 120, 1.0
        )
        root = java.rest("GET", "/", timeout=30)
        health = java.rest("GET", "/health", timeout=30)
        topic = unique("java-eos")
        created = java.rest(
            "POST", "/connectors", {"name": topic, "config": verifiable(topic, 1)}, timeout=100
        )
        lines = [line for line in java.log_file.read_text(errors="replace").splitlines() if refusal in line]
        print(
            f"\nJava GET /: {root}\nJava /health: {health}\nJava create: {created}\n"
            f"Java log ({len(lines)} lines), first: {lines[0][:400]}"
        )
        assert created[0] != 201, created
    finally:
        java.stop(timeout=20)


@pytest.mark.parametrize(
    "recover", [False, pytest.param(True, marks=pytest.mark.long)], ids=["refused", "refused-then-fixed"]
)
def test_d_brokers_without_transaction_support_say_which_setting_and_recover_once_fixed(
    recover: bool, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """One broker with ``transaction.state.log.replication.factor=3``: ``__transaction_state`` cannot be
    created and every ``InitProducerId`` answers COORDINATOR_NOT_AVAILABLE. The leader's claim gives up
    after its ``max.block.ms`` (5 s here) naming the setting; once the broker runs with a factor it
    can meet, the worker recovers by itself and an exactly-once connector runs (the long variant: a
    broker restart and a recovery cost a minute)."""
    started = start_clusters(
        ["D"],
        tmp_path / "kafka",
        overrides={"transaction.state.log.replication.factor": 3},
        die_with_parent=True,
    )
    d = started["D"]
    w = PyconnectWorker(
        d.bootstrap_servers,
        tmp_path / "worker",
        group_id="eos-no-txn",
        extra={**FAST_GROUP, "exactly.once.source.support": "enabled", "max.block.ms": 5000},
        die_with_parent=True,
    )
    try:
        w.start()
        w.wait_ready(healthy=False)

        def unhealthy() -> dict[str, Any] | None:
            code, body = w.rest("GET", "/health")
            return body if code == 500 and "InitProducerId" in str(body.get("message")) else None

        health = wait_for("/health naming InitProducerId", unhealthy, 120, 1.0)
        print(f"\n(d) /health: {health['message']}")
        assert "TransactionalId connect-cluster-eos-no-txn" in health["message"], health
        assert "transaction.state.log.replication.factor" in health["message"], health
        serves_rest(w)
        topic, name = unique("eos-d"), unique("eos-d")
        code, body = w.rest(
            "POST", "/connectors", {"name": name, "config": verifiable(topic, 1)}, timeout=120
        )
        print(f"(d) create: {code} {body}")
        assert code == 500 and "transaction.state.log.replication.factor" in body["message"], body
        serves_rest(w)
        if not recover:
            return

        d.overrides.pop("transaction.state.log.replication.factor")
        node = d.nodes[0]
        node.stop()
        node.config_file.write_text(render_properties(node.properties()))
        node.start()
        d.wait_ready()
        wait_for(
            "/health 200 once the broker can run transactions",
            lambda: w.rest("GET", "/health")[0] == 200,
            120,
            1.0,
        )
        code, body = w.rest("POST", "/connectors", {"name": name, "config": verifiable(topic, 1)})
        assert code == 201, body
        running(w, name)
        wait_for(
            f"committed records on {topic}", lambda: run(plain_committed_count(d, topic)) >= 5, FLOW_S, 1.0
        )
    finally:
        w.stop(timeout=20)
        stop_clusters(started.values(), timeout=15)


async def plain_committed_count(cluster: KafkaCluster, topic: str) -> int:
    consumer = create_consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    await consumer.start()
    try:
        if topic not in await consumer.topics():
            return 0
        tp = TopicPartition(topic, 0)
        return int((await consumer.end_offsets([tp]))[tp])
    finally:
        await consumer.stop()
