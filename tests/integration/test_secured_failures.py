"""A mirror on secured clusters fails visibly, boundedly and recoverably: wrong credentials and missing ACLs.

The module starts two SASL_PLAINTEXT clusters, S (source) and T (target), with SCRAM-SHA-512 users of
its own, so that each scenario's principal starts without ACLs whatever the other tests granted:

- ``reader`` on S, granted the guide's source set per topic: READ, DESCRIBE, DESCRIBE_CONFIGS on the
  mirrored topic, DESCRIBE on the cluster and on the groups;
- on T, the guide's target set (CREATE, DESCRIBE, WRITE, ALTER, ALTER_CONFIGS, READ on the remote,
  offset-syncs and checkpoints topics; DESCRIBE, READ on groups; DESCRIBE, ALTER on the cluster) for
  ``target``, and the same set with one piece missing for ``nowrite`` (WRITE on the remote topic),
  ``noidem`` (any WRITE: the idempotent producer's InitProducerId needs IDEMPOTENT_WRITE or a WRITE)
  and ``checker`` (READ and DESCRIBE on the synced group).

One pyconnect worker (its own group on T as the super user ``admin``) runs every connector; the tasks
write to T as the scenario's principal (``producer.override.*``), as a mirror's producer would. Each
scenario waits for FAILED with a one-line message naming the cluster and what was refused, checks that
the worker still serves REST and that neither status nor log holds a password, then fixes the cause
(PUT a good config, or grant the ACL and restart the task) and sees records arrive on T. Nothing is
created on S. The leak guard (tests/leak_guard.py) checks the worker's log for unclosed clients and
pending tasks after each scenario. One test runs the wrong password on a Java Connect worker, to
record what Java says: the connector stays RUNNING without tasks, the reason only in its log.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import NewTopic

from pyconnect.errors import AuthenticationError
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.probe import SSL_CLOSE_S
from pyconnect.testing.backends import BackendUnavailable, chosen_backend
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.kafka import (
    KafkaCluster,
    free_ports,
    render_properties,
    start_clusters,
    stop_clusters,
)
from pyconnect.testing.kafka_security import (
    ADMIN_USER,
    BROKER_USER,
    expired_server_material,
    untrusted_material,
)
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import fleet, status, wait_for
from tests.integration.secured_fleet import client_security, grant_sync, secured_worker_properties

pytestmark = pytest.mark.kafka

MECHANISM = "SCRAM-SHA-512"
USERS = (ADMIN_USER, "reader", "target", "nowrite", "noidem", "checker")
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
OFFSET_SYNCS = "mm2-offset-syncs.S.internal"
"""On T: the offset syncs of the flow S->T live on the target (``offset-syncs.topic.location``)."""
CHECKPOINTS = "S.checkpoints.internal"
FAIL_S = 20.0
"""A refusal is seen within a poll or a start: seconds, not minutes."""
FLOW_S = 30.0
TARGET_TOPIC_OPS = ["create", "describe", "write", "alter", "alter_configs", "read"]


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, KafkaCluster]]:
    backend = chosen_backend()
    if backend != "local":
        raise BackendUnavailable(
            f"test_secured_failures starts its own secured clusters and needs the local backend; "
            f"PYCONNECT_TEST_BACKEND is {backend!r}"
        )
    started = start_clusters(
        ["S", "T"],
        tmp_path_factory.mktemp("kafka-failures"),
        security="sasl_plaintext",
        users=USERS,
        die_with_parent=True,
    )
    try:
        yield started
    finally:
        stop_clusters(started.values())


def client(cluster: KafkaCluster, user: str) -> dict[str, str]:
    return cluster.client_properties(user, MECHANISM)


def worker_properties(t: KafkaCluster) -> dict[str, object]:
    """The worker's own clients and its default producer/consumer/admin: ``admin`` on T."""
    return secured_worker_properties(client_security(client(t, ADMIN_USER)))


@pytest.fixture(scope="module")
def worker(
    clusters: dict[str, KafkaCluster], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PyconnectWorker]:
    t = clusters["T"]
    w = PyconnectWorker(
        t.bootstrap_servers,
        tmp_path_factory.mktemp("failures-worker"),
        group_id="failures",
        extra=worker_properties(t),
        die_with_parent=True,
    )
    with fleet([w]):
        yield w


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def create_topic(cluster: KafkaCluster, topic: str) -> None:
    admin = create_admin(client(cluster, ADMIN_USER))
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()


async def topics_of(cluster: KafkaCluster) -> set[str]:
    admin = create_admin(client(cluster, ADMIN_USER))
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def produce(cluster: KafkaCluster, topic: str, values: list[bytes]) -> None:
    producer = create_producer(client(cluster, ADMIN_USER))
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()


async def read_values(cluster: KafkaCluster, topic: str) -> list[bytes]:
    """The values of partition 0 of ``topic`` on ``cluster`` up to its end ([] when there is none)."""
    consumer = create_consumer({**client(cluster, ADMIN_USER), "auto.offset.reset": "earliest"})
    await consumer.start()
    try:
        if topic not in await consumer.topics():
            return []
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        got: list[bytes] = []
        deadline = time.monotonic() + 10
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for records in (await consumer.getmany(tp, timeout_ms=500)).values():
                got.extend(r.value for r in records)
        return got
    finally:
        await consumer.stop()


def source_grants(s: KafkaCluster, topic: str, *, read: bool = True) -> None:
    """The guide's source ACLs for ``reader`` on ``topic`` (without READ when told)."""
    grant_sync(s, "reader", "topic", topic, ["describe", "describe_configs"] + (["read"] if read else []))
    grant_sync(s, "reader", "cluster", "kafka-cluster", ["describe"])


def target_grants(
    t: KafkaCluster,
    user: str,
    topic: str,
    *,
    remote_write: bool = True,
    any_write: bool = True,
    groups: bool = True,
) -> None:
    """The guide's target ACLs for ``user`` on the remote topic of ``topic`` and the internal topics;
    ``remote_write=False`` leaves out WRITE on the remote topic, ``any_write=False`` every WRITE,
    ``groups=False`` the group ACLs."""
    for name in (f"S.{topic}", OFFSET_SYNCS, CHECKPOINTS):
        write = any_write and (remote_write or name != f"S.{topic}")
        grant_sync(t, user, "topic", name, [op for op in TARGET_TOPIC_OPS if write or op != "write"])
    grant_sync(t, user, "cluster", "kafka-cluster", ["describe", "alter"])
    if groups:
        grant_sync(t, user, "group", "*", ["describe", "read"])


def mirror_config(
    clusters: dict[str, KafkaCluster], topic: str, target_user: str, source: dict[str, str] | None = None
) -> dict[str, str]:
    s, t = clusters["S"], clusters["T"]
    target = client(t, target_user)
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": "S",
        "target.cluster.alias": "T",
        **{f"source.cluster.{k}": v for k, v in (source or client(s, "reader")).items()},
        **{f"target.cluster.{k}": v for k, v in target.items()},
        **{f"producer.override.{k}": v for k, v in target.items() if k != "bootstrap.servers"},
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.configs.interval.seconds": "2",
        "offset.lag.max": "0",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }


def post(worker: PyconnectWorker, name: str, config: dict[str, str]) -> None:
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body


def failed_connector(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    return wait_for(
        f"{name} FAILED",
        lambda: (s := status(worker, name)) and s["connector"]["state"] == "FAILED" and s["connector"],
        FAIL_S,
    )


def refused_connector(worker: PyconnectWorker, name: str, code: str) -> dict[str, Any]:
    """The connector once it is RUNNING with the condition ``code`` first in its trace (a refusal is a
    condition the connector retries through, connectors.mirror.scheduler)."""
    return wait_for(
        f"{name} RUNNING with {code}",
        lambda: (
            (s := status(worker, name))
            and s["connector"]["state"] == "RUNNING"
            and (s["connector"].get("trace") or "").startswith(f"{code}: ")
            and s["connector"]
        ),
        FAIL_S,
    )


def failed_task(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        body = status(worker, name)
        tasks = body["tasks"] if body else []
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    return wait_for(f"task 0 of {name} FAILED", probe, FAIL_S)


def running(worker: PyconnectWorker, name: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        body = status(worker, name)
        if not body or body["connector"]["state"] != "RUNNING" or not body["tasks"]:
            return None
        return body if all(t["state"] == "RUNNING" for t in body["tasks"]) else None

    return wait_for(f"{name} and its tasks RUNNING", probe, FLOW_S)


def arrives(cluster: KafkaCluster, topic: str, values: list[bytes]) -> None:
    wait_for(
        f"{values} on {topic}", lambda: set(values) <= set(run(read_values(cluster, topic))), FLOW_S, 1.0
    )


def first_line(trace: str) -> str:
    return trace.splitlines()[0]


def assert_no_secret(clusters: dict[str, KafkaCluster], *texts: str) -> None:
    secrets = [p for c in clusters.values() for p in c.security.passwords.values()]  # type: ignore[union-attr]
    secrets.append(WRONG_PASSWORD)
    for text in texts:
        leaked = [s for s in secrets if s in text]
        assert not leaked, "a password is shown"


def worker_log(worker: PyconnectWorker) -> str:
    return worker.log_file.read_text(errors="replace")


def serves_rest(worker: PyconnectWorker) -> None:
    assert worker.running
    assert worker.rest("GET", "/")[0] == 200


WRONG_PASSWORD = "wrong-secret-4711"


def with_password(config: dict[str, str], password: str) -> dict[str, str]:
    jaas = config["sasl.jaas.config"]
    start = jaas.index('password="') + len('password="')
    return {**config, "sasl.jaas.config": jaas[:start] + password + jaas[jaas.index('"', start) :]}


def with_user(config: dict[str, str], user: str) -> dict[str, str]:
    jaas = config["sasl.jaas.config"]
    start = jaas.index('username="') + len('username="')
    return {**config, "sasl.jaas.config": jaas[:start] + user + jaas[jaas.index('"', start) :]}


REFUSED_LOGIN = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
)
LOGIN_CASES: dict[str, tuple[Callable[[dict[str, str]], dict[str, str]], str]] = {
    "wrong-password": (lambda c: with_password(c, WRONG_PASSWORD), REFUSED_LOGIN),
    "unknown-user": (lambda c: with_user(c, "mallory"), REFUSED_LOGIN),
    "gssapi-without-kerberos": (
        lambda c: {**c, "sasl.mechanism": "GSSAPI"},
        "Invalid value GSSAPI for configuration sasl.mechanism: GSSAPI (Kerberos) needs the Python package 'gssapi'"
        if importlib.util.find_spec("gssapi") is None
        else "Client SASL mechanism 'GSSAPI' not enabled in the server",
    ),
    "unknown-mechanism": (
        lambda c: {**c, "sasl.mechanism": "SCRAM-SHA-1"},
        "Invalid value SCRAM-SHA-1 for configuration sasl.mechanism: unknown SASL mechanism",
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=pytest.mark.long) if case in ("unknown-user", "unknown-mechanism") else case
        for case in LOGIN_CASES
    ],
)
def test_refused_login_is_a_condition_of_the_connector_until_a_good_config_is_put(
    case: str, clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    s, t = clusters["S"], clusters["T"]
    topic = unique("login")
    run(create_topic(s, topic))
    source_grants(s, topic)
    target_grants(t, "target", topic)
    spoil, reason = LOGIN_CASES[case]
    name = unique("login")
    good = mirror_config(clusters, topic, "target")
    bad = mirror_config(clusters, topic, "target", source=spoil(client(s, "reader")))
    log_before = len(worker_log(worker))
    started = time.monotonic()
    post(worker, name, bad)

    if reason.startswith("Invalid value"):  # a config the client cannot use: no refusal to wait in
        connector = failed_connector(worker, name)
        line = first_line(connector["trace"])
        assert reason in line, line
        serves_rest(worker)
        assert_no_secret(clusters, connector["trace"], worker_log(worker)[log_before:])
        print(f"\n{case}: FAILED: {line}")
    else:
        connector = refused_connector(worker, name, "SOURCE_AUTH_FAILED")
        took = time.monotonic() - started
        line = first_line(connector["trace"])
        assert reason in line, line
        assert f"source cluster S ({s.bootstrap_servers})" in line, line
        serves_rest(worker)
        assert status(worker, name)["tasks"] == []  # type: ignore[index]
        time.sleep(6)  # retried with backoff, but the reason is logged at ERROR once, not per try
        log = worker_log(worker)[log_before:]
        errors = [x for x in log.splitlines() if " ERROR " in x and "caught exception" in x and name in x]
        assert len(errors) == 1, errors
        assert reason in errors[0] and f"source cluster S ({s.bootstrap_servers})" in errors[0], errors
        assert_no_secret(clusters, connector["trace"], log)
        print(f"\n{case}: RUNNING with SOURCE_AUTH_FAILED after {took:.1f} s: {line}")

    code, body = worker.rest("PUT", f"/connectors/{name}/config", good)
    assert code == 200, body
    running(worker, name)
    run(produce(s, topic, [b"after " + case.encode()]))
    arrives(t, f"S.{topic}", [b"after " + case.encode()])
    worker.rest("DELETE", f"/connectors/{name}")


def test_source_task_without_read_shows_acl_denied_until_granted(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    """A refused READ is the condition ACL_DENIED on a RUNNING task (connectors.mirror.source_watch),
    which copies by itself once READ is granted."""
    s, t = clusters["S"], clusters["T"]
    topic = unique("noread")
    run(create_topic(s, topic))
    run(produce(s, topic, [b"r0", b"r1"]))
    source_grants(s, topic, read=False)
    target_grants(t, "target", topic)
    name = unique("noread")
    post(worker, name, mirror_config(clusters, topic, "target"))

    def running_task() -> dict[str, Any] | None:
        body = status(worker, name)
        tasks = body["tasks"] if body else []
        return tasks[0] if tasks and tasks[0]["state"] == "RUNNING" else None

    def denied() -> dict[str, Any] | None:
        task = running_task()
        return task if task and (task.get("trace") or "").startswith("ACL_DENIED: ") else None

    task = wait_for(f"task 0 of {name} RUNNING with ACL_DENIED", denied, FAIL_S)
    line = first_line(task["trace"])
    assert line.startswith(
        f"ACL_DENIED: READ on topic {topic} refused for principal User:reader on source cluster S "
        f"({s.bootstrap_servers})"
    ), line
    print(f"\nno READ: {line}")
    serves_rest(worker)
    assert_no_secret(clusters, task["trace"])

    source_grants(s, topic)
    arrives(t, f"S.{topic}", [b"r0", b"r1"])
    wait_for("ACL_DENIED cleared", lambda: (task := running_task()) and not task.get("trace"), FAIL_S)
    worker.rest("DELETE", f"/connectors/{name}")


def denied_task(worker: PyconnectWorker, name: str, without: str = "\0") -> dict[str, Any]:
    """Task 0 of ``name`` once it is RUNNING with ACL_DENIED first in its trace (and ``without`` not in it)."""

    def probe() -> dict[str, Any] | None:
        body = status(worker, name)
        tasks = body["tasks"] if body else []
        task = tasks[0] if tasks and tasks[0]["state"] == "RUNNING" else None
        trace = (task or {}).get("trace") or ""
        return task if trace.startswith("ACL_DENIED: ") and without not in trace else None

    return wait_for(f"task 0 of {name} RUNNING with ACL_DENIED", probe, FAIL_S)


def test_task_producer_without_write_waits_with_acl_denied_until_granted(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    """A missing WRITE on the remote topic is the task's ACL_DENIED condition (pyconnect.kafka.target_waits):
    the task stays RUNNING, its batch waits, and once WRITE is granted the record arrives without a
    restart and the condition clears."""
    s, t = clusters["S"], clusters["T"]
    topic = unique("nowrite")
    run(create_topic(s, topic))
    run(produce(s, topic, [b"w0"]))
    source_grants(s, topic)
    target_grants(t, "nowrite", topic, remote_write=False)
    name = unique("nowrite")
    post(worker, name, mirror_config(clusters, topic, "nowrite"))

    line = first_line(denied_task(worker, name)["trace"])
    assert f"S.{topic}" in line and "WRITE" in line, line
    print(f"\nno WRITE: {line}")
    serves_rest(worker)

    grant_sync(t, "nowrite", "topic", f"S.{topic}", ["write"])
    arrives(t, f"S.{topic}", [b"w0"])
    wait_for(
        "the condition cleared",
        lambda: (body := status(worker, name)) and not (body["tasks"][0].get("trace") or ""),
        FLOW_S,
    )
    worker.rest("DELETE", f"/connectors/{name}")


def test_idempotent_producer_without_write_anywhere_fails_then_waits_for_write(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    s, t = clusters["S"], clusters["T"]
    topic = unique("noidem")
    run(create_topic(s, topic))
    run(produce(s, topic, [b"i0"]))
    source_grants(s, topic)
    target_grants(t, "noidem", topic, any_write=False)
    name = unique("noidem")
    post(worker, name, mirror_config(clusters, topic, "noidem"))

    line = first_line(failed_task(worker, name)["trace"])
    assert line == (
        "pyconnect.errors.AuthorizationError: Cluster authorization failed for InitProducerId (an idempotent "
        "producer needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic) on target cluster T "
        f"({t.bootstrap_servers})"
    ), line  # the offset-syncs producer (idempotent); Connect's task producers are not
    print(f"\nno IDEMPOTENT_WRITE: {line}")
    serves_rest(worker)

    # IDEMPOTENT_WRITE lets the producers start; the records then meet the missing WRITE on the topic,
    # which the task waits through (ACL_DENIED) until it is granted
    grant_sync(t, "noidem", "cluster", "kafka-cluster", ["idempotent_write"])
    assert worker.rest("POST", f"/connectors/{name}/tasks/0/restart")[0] == 204
    line = first_line(denied_task(worker, name, without="IDEMPOTENT")["trace"])
    assert f"S.{topic}" in line and "WRITE" in line, line
    print(f"no WRITE: {line}")

    for remote in (f"S.{topic}", OFFSET_SYNCS):
        grant_sync(t, "noidem", "topic", remote, ["write"])
    running(worker, name)
    arrives(t, f"S.{topic}", [b"i0"])
    worker.rest("DELETE", f"/connectors/{name}")


async def commit_group(cluster: KafkaCluster, group: str, topic: str) -> None:
    """``group`` reads ``topic`` on ``cluster`` to its end and commits (as ``admin``)."""
    consumer = create_consumer(
        {**client(cluster, ADMIN_USER), "group.id": group, "auto.offset.reset": "earliest"},
        topic,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + 20
        while not await consumer.getmany(timeout_ms=500) and time.monotonic() < deadline:
            pass
        await consumer.commit()
    finally:
        await consumer.stop()


async def group_offsets(cluster: KafkaCluster, group: str) -> dict[tuple[str, int], int]:
    admin = create_admin(client(cluster, ADMIN_USER))
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(group)
        return {(tp.topic, tp.partition): om.offset for tp, om in found.items()}
    finally:
        await admin.close()


def test_checkpoint_task_without_group_acls_on_the_target_fails_until_granted_and_restarted(
    clusters: dict[str, KafkaCluster], worker: PyconnectWorker, unique: Callable[[str], str]
) -> None:
    s, t = clusters["S"], clusters["T"]
    topic, group = unique("groups"), unique("app")
    run(create_topic(s, topic))
    run(produce(s, topic, [b"g0", b"g1", b"g2"]))
    run(commit_group(s, group, topic))
    source_topics = run(topics_of(s))
    source_grants(s, topic)
    grant_sync(s, "reader", "group", group, ["describe"])
    target_grants(t, "target", topic)
    target_grants(t, "checker", topic, groups=False)
    mirror = unique("flow")
    post(worker, mirror, mirror_config(clusters, topic, "target"))
    arrives(t, f"S.{topic}", [b"g0", b"g1", b"g2"])

    checker = client(t, "checker")
    name = unique("checkpoints")
    post(
        worker,
        name,
        {
            **{
                k: v
                for k, v in mirror_config(clusters, topic, "checker").items()
                if not k.startswith("producer.")
            },
            **{f"producer.override.{k}": v for k, v in checker.items() if k != "bootstrap.servers"},
            "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "groups": group,
            "emit.checkpoints.interval.seconds": "1",
            "sync.group.offsets.enabled": "true",
            "sync.group.offsets.interval.seconds": "1",
            "refresh.groups.interval.seconds": "2",
            "checkpoints.topic.replication.factor": "1",
        },
    )
    line = first_line(failed_task(worker, name)["trace"])
    assert line == (
        f"pyconnect.errors.AuthorizationError: Not authorized to access group: {group} on target cluster T "
        f"({t.bootstrap_servers})"
    ), line
    print(f"\nno group ACLs: {line}")
    serves_rest(worker)

    grant_sync(t, "checker", "group", group, ["describe", "read"])
    assert worker.rest("POST", f"/connectors/{name}/tasks/0/restart")[0] == 204
    running(worker, name)
    wait_for(
        f"offsets of {group} synced on T",
        lambda: run(group_offsets(t, group)).get((f"S.{topic}", 0)) == 3,
        FLOW_S,
        1.0,
    )
    assert run(topics_of(s)) == source_topics, "the mirrors created nothing on the source"
    for connector in (name, mirror):
        worker.rest("DELETE", f"/connectors/{connector}")


def test_java_worker_answers_a_wrong_password_with_a_running_connector_and_log_lines(
    clusters: dict[str, KafkaCluster], tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """What Java's Connect worker does with the same wrong-password config (recorded, not copied):
    Java's MM2 Scheduler logs the refused start and goes on, so the connector stays RUNNING without
    tasks and the reason is only in the log; pyconnect's connector stays RUNNING and retrying too, with
    the reason as its SOURCE_AUTH_FAILED condition (status trace, GET /mirrors, /metrics)."""
    s, t = clusters["S"], clusters["T"]
    topic = unique("java")
    run(create_topic(s, topic))
    source_grants(s, topic)
    target_grants(t, "target", topic)
    java = JavaConnectWorker(
        t.bootstrap_servers,
        tmp_path / "java",
        group_id=unique("java-failures"),
        extra=worker_properties(t),
        die_with_parent=True,
    )
    java.start()
    try:
        java.wait_ready()
        name = unique("java")
        bad = mirror_config(
            clusters, topic, "target", source=with_password(client(s, "reader"), WRONG_PASSWORD)
        )
        code, body = java.rest("POST", "/connectors", {"name": name, "config": bad})
        assert code == 201, body
        wait_for(
            "Java's refused login in its log",
            lambda: REFUSED_LOGIN in java.log_file.read_text(errors="replace"),
            60,
            0.5,
        )
        # Java's status can lag its log (a loaded machine, a status write still under way): wait for
        # RUNNING, then give it 2 s more to show that no task ever appears.
        wait_for(
            "Java's connector RUNNING",
            lambda: (a := status(java, name)) is not None and a["connector"]["state"] == "RUNNING",
            30,
            0.5,
        )
        time.sleep(2)
        answer = status(java, name)
        print(f"\nJava: {answer}")
        log = java.log_file.read_text(errors="replace")
        lines = [line for line in log.splitlines() if REFUSED_LOGIN in line]
        print(f"Java log ({len(lines)} lines with the reason), first: {lines[0][:300]}")
        assert answer is not None and answer["connector"]["state"] == "RUNNING" and answer["tasks"] == []
        assert WRONG_PASSWORD not in log
    finally:
        java.stop(timeout=20)


@pytest.fixture
def sasl_ssl(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_ssl")


@pytest.mark.parametrize("role", ["producer", "consumer"])
async def test_untrusted_broker_certificate_is_an_authentication_error_without_leaks(
    role: str, sasl_ssl: KafkaCluster, tmp_path: Path
) -> None:
    """Over SASL_SSL, a client that does not trust the broker's certificate fails its start with the
    handshake's reason, in this process, and leaves no socket or task behind (the leak guard checks)."""
    cluster = sasl_ssl
    _, foreign_ca = untrusted_material(tmp_path, ADMIN_USER)
    config = {**cluster.client_properties(ADMIN_USER, MECHANISM), "ssl.truststore.location": str(foreign_ca)}
    config["request.timeout.ms"] = "5000"
    made = create_producer(config) if role == "producer" else create_consumer(config)
    label = cluster_label(config, "X")
    with pytest.raises(AuthenticationError) as refused:
        await start_client(made, config, label)
    message = str(refused.value)
    assert message.startswith(f"Authentication to {label} failed: SSL handshake failed ("), message
    assert "certificate" in message, message
    print(f"\n{role}: {message}")
    await asyncio.sleep(SSL_CLOSE_S)  # TLS sockets are released on the loop


def handshake_refusal(port: int, ca: Path) -> str | None:
    """Why a TLS handshake with ``127.0.0.1:port``, trusting ``ca``, fails (None if it succeeds or
    nothing listens yet)."""
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=2) as sock,
            context.wrap_socket(sock, server_hostname="127.0.0.1"),
        ):
            return None
    except ssl.SSLCertVerificationError as exc:
        return str(exc.verify_message)
    except OSError:
        return None


def internal_listener(x: KafkaCluster, port: int) -> dict[str, object]:
    """Broker keys moving inter-broker traffic to a SASL_PLAINTEXT listener ``INTERNAL`` on ``port``.

    Kafka checks the keystore of its inter-broker listener at start with a handshake against its own
    truststore, and refuses to start when that fails (``validity check failed`` for an expired
    certificate); the client listener is not checked. So a broker can serve an expired certificate
    to clients only on a listener that is not the inter-broker one (or once its certificate expires
    while it runs, which a test cannot wait for)."""
    node = x.nodes[0]
    props = node.properties()
    name = str(props["inter.broker.listener.name"])
    return {
        "listeners": f"{props['listeners']},INTERNAL://127.0.0.1:{port}",
        "advertised.listeners": f"{props['advertised.listeners']},INTERNAL://127.0.0.1:{port}",
        "listener.security.protocol.map": f"{props['listener.security.protocol.map']},INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": props[
            f"listener.name.{name.lower()}.plain.sasl.jaas.config"
        ],
    }


@pytest.fixture(scope="module")
def expired(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A one-node SASL_SSL cluster ``X`` whose broker presents a certificate that expired yesterday,
    signed by a CA its clients trust (``X``'s ``ca.pem``): started, stopped, given the expired
    keystore and an inter-broker listener of its own (see :func:`internal_listener`) and restarted;
    ready once its client listener answers handshakes with that certificate."""
    base = tmp_path_factory.mktemp("kafka-expired")
    x = start_clusters(["X"], base, security="sasl_ssl", users=(ADMIN_USER,), die_with_parent=True)["X"]
    try:
        x.stop(timeout=20)
        keystore, ca = expired_server_material(base / "expired")
        assert x.security is not None
        shutil.copyfile(keystore, x.security.keystore(BROKER_USER))
        shutil.copyfile(ca, x.security.ca_file)
        x.overrides.update(internal_listener(x, free_ports(1)[0]))
        node = x.nodes[0]
        node.config_file.write_text(render_properties(node.properties()))
        x.start()
        wait_for(
            "X's listener presenting the expired certificate",
            lambda: (
                node.process is not None
                and node.process.running
                and handshake_refusal(node.port, ca) == "certificate has expired"
            ),
            90,
            0.5,
        )
        yield x
    finally:
        stop_clusters([x])


@pytest.mark.long
def test_expired_broker_certificate_is_a_condition_naming_the_cluster(
    expired: KafkaCluster,
    clusters: dict[str, KafkaCluster],
    worker: PyconnectWorker,
    unique: Callable[[str], str],
) -> None:
    """The source cluster presents an expired (but trusted) certificate: the connector is RUNNING with
    SOURCE_AUTH_FAILED, the handshake's reason and the cluster's name, logged once while it retries;
    the worker serves on; no password shown."""
    x, t = expired, clusters["T"]
    topic = unique("expired")
    target_grants(t, "target", topic)
    name = unique("expired")
    config = mirror_config(clusters, topic, "target", source=client(x, ADMIN_USER))
    config["source.cluster.request.timeout.ms"] = "5000"
    log_before = len(worker_log(worker))
    post(worker, name, config)

    connector = refused_connector(worker, name, "SOURCE_AUTH_FAILED")
    line = first_line(connector["trace"])
    assert "certificate has expired" in line, line
    assert f"source cluster S ({x.bootstrap_servers})" in line, line  # the alias of the config
    print(f"\nexpired certificate: {line}")
    serves_rest(worker)
    assert status(worker, name)["tasks"] == []  # type: ignore[index]
    time.sleep(3)
    repeats = worker_log(worker)[log_before:].count("certificate has expired")
    time.sleep(6)
    log = worker_log(worker)[log_before:]
    assert log.count("certificate has expired") == repeats, "retries are not logged again"
    assert_no_secret({**clusters, "X": x}, connector["trace"], log)
    worker.rest("DELETE", f"/connectors/{name}")
