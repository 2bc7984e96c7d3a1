"""Source faults of a MirrorSourceTask are conditions on real Kafka, raised and cleared while the task
stays RUNNING (connectors.mirror.source_watch).

One pyconnect worker on cluster B runs every mirror; each test has a source alias of its own, so its
flow (``<alias>->B`` in ``GET /mirrors``) holds only its connector. Sources:

- the session's SASL_PLAINTEXT cluster (users ``admin`` and ``alice``; ``allow.everyone.if.no.acl.found``
  false, so ``alice`` reads only what she is granted and can create nothing): a wrong password put on
  the connector (SOURCE_AUTH_FAILED), READ revoked on one of two topics (ACL_DENIED, the other topic
  flowing), a topic deleted (TOPIC_DELETED until the topic refresh drops it);
- cluster A: records deleted before they were copied (TRUNCATED, a warning that does not stall the flow);
- a private one-broker cluster reached through a fault-proxy route: the broker stopped and started
  (SOURCE_UNREACHABLE within half the target latency, cleared after the restart) and 100 ms of delay on
  the route (no condition, the flow IN_SYNC).

Each test checks the code on the first line of the task's trace and in the flow's ``conditions``
(status STALLED for a critical code), then its clearing, and prints the time to condition and to clear.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete

from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.kafka import KafkaCluster, render_properties, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER
from pyconnect.testing.worker_process import PyconnectWorker
from tests.alert_watch import AlertWatch
from tests.integration.fleet import FAST_GROUP, fleet, status, wait_for
from tests.integration.secured_fleet import grant_sync
from tests.integration.test_mirror_status import Trickle

pytestmark = pytest.mark.kafka

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
MIRROR = "alice"
CLEAR_S = 10.0
"""A repaired fault leaves the status within this bound (the status page reads each second)."""


# -- clusters and the worker ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def secured(secured_cluster: Callable[[str], KafkaCluster]) -> KafkaCluster:
    return secured_cluster("sasl_plaintext")


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A private one-broker cluster P whose route ``mirror`` runs through fault proxies."""
    clusters = start_clusters(
        ["P"], tmp_path_factory.mktemp("kafka-routed"), routes=("mirror",), die_with_parent=True
    )
    try:
        yield clusters["P"]
    finally:
        stop_clusters(clusters.values(), timeout=15)


SCRAPED: list[AlertWatch] = []
"""The session's Prometheus, scraping this module's worker (set by the ``worker`` fixture)."""


def fires(code: str) -> None:
    """The shipped alert rule of ``code`` fires in Prometheus for the condition just shown (pending for a
    rule with a ``for`` longer than a test, such as TRUNCATED's)."""
    (watch,) = SCRAPED
    try:
        took, found = watch.wait_firing(code, 20)
    except AssertionError:
        took, found = watch.wait_firing(code, 5, state="pending")
    print(
        f"alert for {code}: {found[0]['alertname']} {found[0]['alertstate']} {took:.1f} s after the condition"
    )


def resolves(code: str) -> None:
    (watch,) = SCRAPED
    print(f"alert for {code} resolved {watch.wait_resolved(code, 30):.1f} s after the condition cleared")


@pytest.fixture(scope="module")
def worker(
    cluster_b: ClusterHandle, tmp_path_factory: pytest.TempPathFactory, alerts: AlertWatch
) -> Iterator[PyconnectWorker]:
    w = PyconnectWorker(
        cluster_b.bootstrap_servers,
        tmp_path_factory.mktemp("conditions-worker"),
        group_id=f"source-conditions-{uuid.uuid4().hex[:8]}",
        extra=dict(FAST_GROUP),
        die_with_parent=True,
    )
    with fleet([w]):
        alerts.scrape([w.rest_url])
        SCRAPED[:] = [alerts]
        yield w


def alias() -> str:
    return f"S{uuid.uuid4().hex[:6]}"


def mirror_config(
    source_alias: str, source: dict[str, str], target: str, topics: str, **extra: str
) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": source_alias,
        "target.cluster.alias": "B",
        **{f"source.cluster.{k}": v for k, v in source.items()},
        "target.cluster.bootstrap.servers": target,
        "topics": topics,
        "replication.factor": "1",
        "offset-syncs.topic.location": "target",
        "offset-syncs.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.configs.enabled": "false",
        "sync.topic.acls.enabled": "false",
        "offset.lag.max": "0",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        **extra,
    }


# -- Kafka helpers ---------------------------------------------------------------------------------


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def create_topics(config: dict[str, str], *topics: str, partitions: int = 1) -> None:
    admin = create_admin(config)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, partitions, 1) for t in topics])
    finally:
        await admin.close()


async def delete_topic(config: dict[str, str], topic: str) -> None:
    admin = create_admin(config)
    await admin.start()
    try:
        await admin.delete_topics([topic])
    finally:
        await admin.close()


async def produce(config: dict[str, str], topic: str, values: list[bytes], partition: int = 0) -> None:
    producer = create_producer(config)
    await producer.start()
    try:
        for value in values:
            await producer.send(topic, value, partition=partition)
        await producer.flush()
    finally:
        await producer.stop()


async def read_values(bootstrap: str, topic: str) -> list[bytes]:
    """The values of partition 0 of ``topic`` up to its end ([] when there is none)."""
    consumer = create_consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
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


def arrives(bootstrap: str, topic: str, values: list[bytes], timeout: float = 30) -> None:
    wait_for(
        f"{values} on {topic}", lambda: set(values) <= set(run(read_values(bootstrap, topic))), timeout, 0.5
    )


def grant_reader(cluster: KafkaCluster, *topics: str) -> None:
    for topic in topics:
        grant_sync(cluster, MIRROR, "topic", topic, ["read", "describe", "describe_configs"])
    grant_sync(cluster, MIRROR, "cluster", "kafka-cluster", ["describe"])


def revoke_read(cluster: KafkaCluster, topic: str, work: Path) -> None:
    """Remove ``alice``'s READ on ``topic`` with Kafka's own ``kafka-acls`` tool (as ``admin``)."""
    props = work / "admin.properties"
    props.write_text(
        render_properties(
            {k: v for k, v in cluster.client_properties(ADMIN_USER).items() if k != "bootstrap.servers"}
        )
    )
    command = cluster.dist.java_command(
        "org.apache.kafka.tools.AclCommand",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--command-config",
        str(props),
        "--remove",
        "--force",
        "--allow-principal",
        f"User:{MIRROR}",
        "--operation",
        "Read",
        "--topic",
        topic,
        heap="256m",
        jvm_opts=cluster.jvm_options,
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# -- what the operator sees ------------------------------------------------------------------------


def post(worker: PyconnectWorker, name: str, config: dict[str, str]) -> None:
    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body


def task0(worker: PyconnectWorker, name: str) -> dict[str, Any] | None:
    body = status(worker, name)
    tasks = body["tasks"] if body else []
    return tasks[0] if tasks else None


def flow(worker: PyconnectWorker, source_alias: str) -> dict[str, Any] | None:
    code, body = worker.rest("GET", "/mirrors")
    assert code == 200, body
    return next((f for f in body["flows"] if f["source"] == source_alias), None)


def shows(
    worker: PyconnectWorker, name: str, source_alias: str, code: str, subject: str | None = None
) -> dict[str, Any] | None:
    """The flow once the task is RUNNING with ``code`` first in its trace and the flow lists it
    (for ``subject`` if given) and, for a critical code, is STALLED; else None."""
    task = task0(worker, name)
    if not task or task["state"] != "RUNNING" or not (task.get("trace") or "").startswith(f"{code}: "):
        return None
    found = flow(worker, source_alias)
    if not found:
        return None
    listed = [c for c in found["conditions"] if c["code"] == code and subject in (None, c["subject"])]
    if not listed or (listed[0]["severity"] == "critical" and found["status"] != "STALLED"):
        return None
    return found


def cleared(worker: PyconnectWorker, name: str, source_alias: str, code: str) -> bool:
    task = task0(worker, name)
    if not task or task["state"] != "RUNNING" or code in (task.get("trace") or ""):
        return False
    found = flow(worker, source_alias)
    return found is not None and all(c["code"] != code for c in found["conditions"])


def timed(what: str, probe: Callable[[], Any], timeout: float, interval: float = 0.25) -> tuple[Any, float]:
    started = time.monotonic()
    found = wait_for(what, probe, timeout, interval)
    return found, time.monotonic() - started


def condition(found: dict[str, Any], code: str) -> dict[str, Any]:
    return next(c for c in found["conditions"] if c["code"] == code)


# -- the tests -------------------------------------------------------------------------------------


def test_wrong_source_password_is_source_auth_failed_until_the_right_one_is_put(
    secured: KafkaCluster, worker: PyconnectWorker, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    source_alias, topic, name = alias(), unique("auth"), unique("auth")
    admin = secured.client_properties(ADMIN_USER)
    run(create_topics(admin, topic))
    grant_reader(secured, topic)
    run(produce(admin, topic, [b"a0"]))
    good = mirror_config(source_alias, secured.client_properties(MIRROR), cluster_b.bootstrap_servers, topic)
    post(worker, name, good)
    remote = f"{source_alias}.{topic}"
    arrives(cluster_b.bootstrap_servers, remote, [b"a0"])

    jaas = good["source.cluster.sasl.jaas.config"]
    bad = {**good, "source.consumer.sasl.jaas.config": jaas.replace('password="', 'password="wrong-', 1)}
    put = time.monotonic()
    assert worker.rest("PUT", f"/connectors/{name}/config", bad)[0] == 200
    found, raised = timed(
        "SOURCE_AUTH_FAILED", lambda: shows(worker, name, source_alias, "SOURCE_AUTH_FAILED"), 40
    )
    fires("SOURCE_AUTH_FAILED")
    line = task0(worker, name)["trace"].splitlines()[0]  # type: ignore[index]
    assert "Authentication to source cluster" in line and "wrong-" not in line, line
    held = condition(found, "SOURCE_AUTH_FAILED")
    assert held["cluster"] == source_alias and held["client"].endswith("|replication-consumer"), held
    time.sleep(3)
    assert task0(worker, name)["state"] == "RUNNING", "retrying, not failed"  # type: ignore[index]

    run(produce(admin, topic, [b"a1"]))
    assert worker.rest("PUT", f"/connectors/{name}/config", good)[0] == 200
    _, clearing = timed(
        "SOURCE_AUTH_FAILED cleared", lambda: cleared(worker, name, source_alias, "SOURCE_AUTH_FAILED"), 40
    )
    resolves("SOURCE_AUTH_FAILED")
    assert clearing < CLEAR_S, clearing
    arrives(cluster_b.bootstrap_servers, remote, [b"a0", b"a1"])
    print(
        f"\nSOURCE_AUTH_FAILED: raised {raised:.1f} s after the bad PUT, cleared {clearing:.1f} s after the "
        f"good PUT ({time.monotonic() - put:.0f} s in all): {line}"
    )
    worker.rest("DELETE", f"/connectors/{name}")


@pytest.mark.parametrize(
    "raw", [pytest.param("true", marks=pytest.mark.long), "false"], ids=["raw-path", "record-path"]
)  # make test: the record path; make chaos: the raw path too
def test_read_acl_revoked_is_acl_denied_for_that_topic_while_the_other_flows(
    raw: str,
    secured: KafkaCluster,
    worker: PyconnectWorker,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    source_alias, denied, other, name = alias(), unique("denied"), unique("other"), unique("acl")
    admin = secured.client_properties(ADMIN_USER)
    run(create_topics(admin, denied, other))
    grant_reader(secured, denied, other)
    config = mirror_config(
        source_alias,
        secured.client_properties(MIRROR),
        cluster_b.bootstrap_servers,
        f"{denied},{other}",
        **{"pyconnect.mirror.raw.batches.enable": raw},
    )
    post(worker, name, config)
    run(produce(admin, denied, [b"d0"]))
    run(produce(admin, other, [b"o0"]))
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{denied}", [b"d0"])
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{other}", [b"o0"])

    revoke_read(secured, denied, tmp_path)
    run(produce(admin, denied, [b"d1"]))  # the next fetch of the topic meets the refusal
    found, raised = timed(
        "ACL_DENIED", lambda: shows(worker, name, source_alias, "ACL_DENIED", subject=denied), 30
    )
    fires("ACL_DENIED")
    held = condition(found, "ACL_DENIED")
    assert held["message"].startswith(f"READ on topic {denied} refused for principal User:{MIRROR} on "), held
    assert held["cluster"] == source_alias and held["client"].endswith("|replication-consumer"), held
    run(produce(admin, other, [b"o1"]))
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{other}", [b"o0", b"o1"])
    assert task0(worker, name)["state"] == "RUNNING"  # type: ignore[index]

    granted = time.monotonic()
    grant_sync(secured, MIRROR, "topic", denied, ["read"])
    _, clearing = timed(
        "ACL_DENIED cleared", lambda: cleared(worker, name, source_alias, "ACL_DENIED"), CLEAR_S + 5
    )
    resolves("ACL_DENIED")
    assert clearing < CLEAR_S, clearing
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{denied}", [b"d0", b"d1"])
    print(
        f"\nACL_DENIED ({'raw' if raw == 'true' else 'record'} path): raised {raised:.1f} s after the revoke, "
        f"cleared {clearing:.1f} s after the grant ({time.monotonic() - granted:.1f} s to d1 on B)"
    )
    worker.rest("DELETE", f"/connectors/{name}")


def test_deleted_source_topic_is_topic_deleted_until_the_refresh_drops_it(
    secured: KafkaCluster, worker: PyconnectWorker, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    source_alias, gone, kept, name = alias(), unique("gone"), unique("kept"), unique("deleted")
    admin = secured.client_properties(ADMIN_USER)
    run(create_topics(admin, gone, kept))
    grant_reader(secured, gone, kept)
    config = mirror_config(
        source_alias,
        secured.client_properties(MIRROR),
        cluster_b.bootstrap_servers,
        f"{gone},{kept}",
        **{"refresh.topics.interval.seconds": "15"},
    )
    post(worker, name, config)
    run(produce(admin, gone, [b"g0"]))
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{gone}", [b"g0"])

    run(delete_topic(admin, gone))
    found, raised = timed(
        "TOPIC_DELETED", lambda: shows(worker, name, source_alias, "TOPIC_DELETED", subject=gone), 20
    )
    fires("TOPIC_DELETED")
    held = condition(found, "TOPIC_DELETED")
    assert held["message"].startswith(f"topic {gone} no longer exists on source cluster {source_alias}"), held
    assert all(c["code"] != "SOURCE_UNREACHABLE" for c in found["conditions"]), found["conditions"]
    _, clearing = timed(
        "TOPIC_DELETED gone with the reconfigured task",
        lambda: cleared(worker, name, source_alias, "TOPIC_DELETED"),
        40,
    )
    run(produce(admin, kept, [b"k0"]))
    arrives(cluster_b.bootstrap_servers, f"{source_alias}.{kept}", [b"k0"])
    print(
        f"\nTOPIC_DELETED: raised {raised:.1f} s after the delete, gone {clearing:.1f} s later (topic refresh)"
    )
    worker.rest("DELETE", f"/connectors/{name}")


async def delete_records_before(bootstrap: str, topic: str, offset: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_records({TopicPartition(topic, 0): RecordsToDelete(offset)})
    finally:
        await admin.close()


def test_records_deleted_before_they_were_copied_are_a_truncated_warning(
    cluster_a: ClusterHandle, worker: PyconnectWorker, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    source_alias, topic, name = alias(), unique("trunc"), unique("trunc")
    plain = {"bootstrap.servers": cluster_a.bootstrap_servers}
    run(create_topics(plain, topic))
    run(produce(plain, topic, [b"r0", b"r1"]))
    post(worker, name, mirror_config(source_alias, plain, cluster_b.bootstrap_servers, topic))
    remote = f"{source_alias}.{topic}"
    arrives(cluster_b.bootstrap_servers, remote, [b"r0", b"r1"])

    assert worker.rest("PUT", f"/connectors/{name}/stop")[0] in (202, 204)
    wait_for(
        "the connector STOPPED",
        lambda: (s := status(worker, name)) and s["connector"]["state"] == "STOPPED",
        30,
    )
    run(produce(plain, topic, [f"lost{i}".encode() for i in range(10)] + [b"kept"]))
    run(delete_records_before(cluster_a.bootstrap_servers, topic, 12))  # offsets 2..11 never copied
    resumed = time.monotonic()
    assert worker.rest("PUT", f"/connectors/{name}/resume")[0] in (202, 204)
    found, raised = timed(
        "TRUNCATED", lambda: shows(worker, name, source_alias, "TRUNCATED", f"{topic}-0"), 40
    )
    fires("TRUNCATED")
    held = condition(found, "TRUNCATED")
    assert held["severity"] == "warning" and held["cluster"] == source_alias, held
    assert held["message"].startswith(
        f"records 2..11 of {topic}-0 were deleted before they were copied (10 records lost"
    ), held
    assert found["status"] != "STALLED", found
    arrives(cluster_b.bootstrap_servers, remote, [b"kept"])
    print(
        f"\nTRUNCATED: raised {raised:.1f} s after the resume ({time.monotonic() - resumed:.1f} s to the copy): {held['message']}"
    )
    worker.rest("DELETE", f"/connectors/{name}")


TARGET_LATENCY_MS = 6000
"""The routed flows' target latency: an unreachable source is a condition after half of it (3 s)."""


def routed_config(routed: KafkaCluster, source_alias: str, target: str, topic: str) -> dict[str, str]:
    via_route = {"bootstrap.servers": routed.route("mirror").bootstrap_servers}
    return mirror_config(
        source_alias,
        via_route,
        target,
        topic,
        **{"pyconnect.mirror.target.latency.ms": str(TARGET_LATENCY_MS)},
    )


def test_a_delayed_source_route_raises_no_condition_and_the_flow_stays_in_sync(
    routed: KafkaCluster, worker: PyconnectWorker, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    source_alias, topic, name = alias(), unique("slow"), unique("slow")
    run(create_topics({"bootstrap.servers": routed.bootstrap_servers}, topic))
    route = routed.route("mirror")
    post(worker, name, routed_config(routed, source_alias, cluster_b.bootstrap_servers, topic))
    wait_for("the task RUNNING", lambda: (t := task0(worker, name)) and t["state"] == "RUNNING", 30)
    with Trickle(routed.bootstrap_servers, topic):  # from now on: every record copied is recent
        wait_for(
            "the flow IN_SYNC with its topic copied",
            lambda: (
                (f := flow(worker, source_alias))
                and f["status"] == "IN_SYNC"
                and any(t["state"] == "ACTIVE" and t["in_sync"] for t in f["topics"])
            ),
            40,
        )
        route.delay(0.1)
        try:
            seen: set[str] = set()
            deadline = time.monotonic() + 12  # four times the unreachable bound
            while time.monotonic() < deadline:
                found = flow(worker, source_alias)
                assert found is not None
                seen.update(c["code"] for c in found["conditions"])
                assert found["status"] == "IN_SYNC", found
                assert not (task0(worker, name) or {}).get("trace"), task0(worker, name)
                time.sleep(0.5)
            assert not seen, seen
            stats = route.stats()
        finally:
            route.heal()
    print(f"\n100 ms delay each way: no condition for 12 s, the flow IN_SYNC; route stats {stats}")
    worker.rest("DELETE", f"/connectors/{name}")


def test_a_stopped_source_broker_is_source_unreachable_until_it_is_back(
    routed: KafkaCluster, worker: PyconnectWorker, cluster_b: ClusterHandle, unique: Callable[[str], str]
) -> None:
    source_alias, topic, name = alias(), unique("down"), unique("down")
    run(create_topics({"bootstrap.servers": routed.bootstrap_servers}, topic))
    run(produce({"bootstrap.servers": routed.bootstrap_servers}, topic, [b"u0"]))
    post(worker, name, routed_config(routed, source_alias, cluster_b.bootstrap_servers, topic))
    remote = f"{source_alias}.{topic}"
    arrives(cluster_b.bootstrap_servers, remote, [b"u0"])

    node = routed.node(1)
    stopped = time.monotonic()
    node.stop(timeout=20)
    found, raised = timed(
        "SOURCE_UNREACHABLE", lambda: shows(worker, name, source_alias, "SOURCE_UNREACHABLE"), 30
    )
    fires("SOURCE_UNREACHABLE")
    since_stop = time.monotonic() - stopped
    held = condition(found, "SOURCE_UNREACHABLE")
    assert held["cluster"] == source_alias and held["client"].endswith("|replication-consumer"), held
    assert [c["code"] for c in found["conditions"] if c["code"] != "REPLICATION_STALLED"] == [
        "SOURCE_UNREACHABLE"
    ]
    # a task (re)started while the source is down opens its consumer again and again, RUNNING
    assert worker.rest("POST", f"/connectors/{name}/tasks/0/restart")[0] == 204

    def reopening() -> dict[str, Any] | None:
        found = shows(worker, name, source_alias, "SOURCE_UNREACHABLE")
        message = condition(found, "SOURCE_UNREACHABLE")["message"] if found else ""
        return found if "could not be reached to start client" in message else None

    wait_for("the restarted task RUNNING with SOURCE_UNREACHABLE", reopening, 20)
    restarted = time.monotonic()
    node.start()
    routed.wait_ready()
    ready = time.monotonic()
    _, clearing = timed(
        "SOURCE_UNREACHABLE cleared", lambda: cleared(worker, name, source_alias, "SOURCE_UNREACHABLE"), 30
    )
    resolves("SOURCE_UNREACHABLE")
    assert clearing < CLEAR_S, clearing
    run(produce({"bootstrap.servers": routed.bootstrap_servers}, topic, [b"u1"]))
    arrives(cluster_b.bootstrap_servers, remote, [b"u0", b"u1"])
    print(
        f"\nSOURCE_UNREACHABLE: raised {since_stop:.1f} s after the stop began ({raised:.1f} s after it "
        f"returned; bound {TARGET_LATENCY_MS / 2000:g} s), cleared {clearing:.1f} s after the broker answered "
        f"again ({ready - restarted + clearing:.1f} s after its start)"
    )
    worker.rest("DELETE", f"/connectors/{name}")
