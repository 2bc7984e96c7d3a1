"""Topic ACL sync of MirrorSourceConnector against brokers with an authorizer, beside Java's connector.

The module starts its own two single-node KRaft clusters, S (source) and T (target), each with the
``StandardAuthorizer`` (clients connect over PLAINTEXT as ``User:ANONYMOUS``, a super user, so only
the ACLs' presence is under test, not their effect). ACLs are put on S; a pyconnect worker runs the
MirrorSourceConnector S->T under source alias ``S`` and, at the same time, a Java Connect worker of
the pinned release runs Java's connector under alias ``J``. Both must create exactly the expected
bindings on T (``S.<topic>`` and ``J.<topic>``): ALLOW READ kept, ALLOW ALL downgraded to READ, ALLOW
WRITE dropped, DENY kept as is, hosts kept, ACLs of non-replicated topics and prefixed ACLs left out;
an ACL added later arrives at the next interval. A last test runs the connector from cluster A, which
has no authorizer: the sync is skipped with one INFO line and the connector keeps running.

The clusters need the local backend; with an external one the module fails with that message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.protocol.admin import CreateAclsRequest, DescribeAclsRequest

from pyconnect.testing.backends import BackendUnavailable, ClusterHandle, chosen_backend
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters
from tests.integration.fleet import FAST_GROUP, fleet, python_workers, running_tasks, status, wait_for
from tests.integration.test_mirror_source import BYTES

pytestmark = pytest.mark.kafka

AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "true",
}
TOPIC = 2
ANY_PATTERN, LITERAL, PREFIXED = 1, 3, 4
ANY_OPERATION, ALL, READ, WRITE, DESCRIBE = 1, 2, 3, 4, 8
ANY_PERMISSION, DENY, ALLOW = 1, 2, 3
NO_AUTHORIZER_LINE = "No ACL authorizer is configured on the source Kafka cluster"

Acl = tuple[str, int, str, str, int, int]
"""(resource name, pattern type, principal, host, operation, permission) of one topic ACL."""


@pytest.fixture(scope="module")
def secured_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, KafkaCluster]]:
    """Clusters S and T with an authorizer, started for this module only (local backend)."""
    backend = chosen_backend()
    if backend != "local":
        raise BackendUnavailable(
            f"test_mirror_acl_sync starts its own clusters with an authorizer and needs the local "
            f"backend; PYCONNECT_TEST_BACKEND is {backend!r}"
        )
    clusters = start_clusters(
        ["S", "T"], tmp_path_factory.mktemp("kafka-acl"), overrides=AUTHORIZER, die_with_parent=True
    )
    try:
        yield clusters
    finally:
        stop_clusters(clusters.values())


async def _admin(bootstrap: str) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    return admin


async def create_topics(bootstrap: str, topics: list[str]) -> None:
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(t, 1, 1) for t in topics])
    finally:
        await admin.close()


async def add_acls(bootstrap: str, acls: list[Acl]) -> None:
    """Create topic ACLs with aiokafka's own CreateAcls request (one binding per request)."""
    admin = await _admin(bootstrap)
    try:
        for name, pattern, principal, host, operation, permission in acls:
            request = CreateAclsRequest(TOPIC, name, pattern, principal, host, operation, permission)
            response = await admin._send_request(request)
            assert [code for code, _ in response.creation_responses] == [0], response
    finally:
        await admin.close()


async def topic_acls(bootstrap: str) -> set[Acl]:
    """Every topic ACL of the cluster, read with aiokafka's own DescribeAcls request."""
    admin = await _admin(bootstrap)
    try:
        request = DescribeAclsRequest(TOPIC, None, ANY_PATTERN, None, None, ANY_OPERATION, ANY_PERMISSION)
        response = await admin._send_request(request)
        assert response.error_code == 0, response
        return {
            (name, pattern, principal, host, operation, permission)
            for _type, name, pattern, acls in response.resources
            for principal, host, operation, permission in acls
        }
    finally:
        await admin.close()


def renamed(acls: set[Acl], prefix: str) -> set[Acl]:
    return {(prefix + name, *rest) for name, *rest in acls}  # type: ignore[misc]


def on_target(acls: set[Acl], prefix: str) -> set[Acl]:
    """The ACLs of remote topics ``<prefix><topic>``, named by their source topic."""
    return {(name[len(prefix) :], *rest) for name, *rest in acls if name.startswith(prefix)}  # type: ignore[misc]


def connector_config(source: str, target: str, alias: str, topics: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": "1",
        "source.cluster.alias": alias,
        "target.cluster.alias": "T",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "topics": topics,
        "replication.factor": "1",
        "emit.offset-syncs.enabled": "false",
        "sync.topic.acls.interval.seconds": "2",
        "refresh.topics.interval.seconds": "5",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        **extra,
    }


def test_topic_acls_sync_to_the_target_as_java_does(
    secured_clusters: dict[str, KafkaCluster], unique: Callable[[str], str], tmp_path: Path
) -> None:
    s, t = secured_clusters["S"].bootstrap_servers, secured_clusters["T"].bootstrap_servers
    prefix = unique("acl")
    orders, audit, private = f"{prefix}-orders", f"{prefix}-audit", f"{prefix}-private"
    asyncio.run(create_topics(s, [orders, audit, private]))
    asyncio.run(
        add_acls(
            s,
            [
                (orders, LITERAL, "User:reader", "*", READ, ALLOW),
                (orders, LITERAL, "User:admin", "*", ALL, ALLOW),
                (orders, LITERAL, "User:writer", "*", WRITE, ALLOW),
                (orders, LITERAL, "User:blocked", "*", READ, DENY),
                (orders, LITERAL, "User:blocked", "10.0.0.9", ALL, DENY),
                (audit, LITERAL, "User:auditor", "10.0.0.7", DESCRIBE, ALLOW),
                (private, LITERAL, "User:reader", "*", READ, ALLOW),
                (f"{prefix}-", PREFIXED, "User:reader", "*", READ, ALLOW),
            ],
        )
    )
    expected = {
        (orders, LITERAL, "User:reader", "*", READ, ALLOW),
        (orders, LITERAL, "User:admin", "*", READ, ALLOW),
        (orders, LITERAL, "User:blocked", "*", READ, DENY),
        (orders, LITERAL, "User:blocked", "10.0.0.9", ALL, DENY),
        (audit, LITERAL, "User:auditor", "10.0.0.7", DESCRIBE, ALLOW),
    }
    topics = f"{orders}|{audit}"
    (worker,) = python_workers(t, tmp_path, unique("acl-py"), 1)
    java = JavaConnectWorker(
        t, tmp_path / "java", group_id=unique("acl-java"), extra=FAST_GROUP, die_with_parent=True
    )
    with fleet([worker, java]):
        started = time.monotonic()
        for w, alias in ((worker, "S"), (java, "J")):
            config = connector_config(s, t, alias, topics)
            code, body = w.rest("POST", "/connectors", {"name": f"acl-{alias}", "config": config})
            assert code == 201, body

        def synced(prefix_on_target: str, want: set[Acl]) -> Callable[[], set[Acl] | None]:
            def probe() -> set[Acl] | None:
                found = on_target(asyncio.run(topic_acls(t)), prefix_on_target)
                return found if found >= want else None

            return probe

        ours = wait_for("pyconnect's ACLs on T", synced("S.", expected), 60)
        ours_at = time.monotonic() - started
        java_acls = wait_for("Java's ACLs on T", synced("J.", expected), 90)
        print(
            f"\nACLs synced {ours_at:.1f} s (pyconnect) and {time.monotonic() - started:.1f} s (Java) "
            "after the POSTs"
        )
        assert ours == expected
        assert java_acls == ours, "pyconnect and Java's MirrorSourceConnector create the same ACLs"
        everything = asyncio.run(topic_acls(t))
        assert everything == renamed(expected, "S.") | renamed(expected, "J."), "nothing else on T"

        # The sync repeats every interval: an ACL added later arrives, for both connectors.
        late = (orders, LITERAL, "User:late", "*", DESCRIBE, ALLOW)
        asyncio.run(add_acls(s, [late]))
        added_at = time.monotonic()
        wait_for("the late ACL from pyconnect", synced("S.", expected | {late}), 30)
        print(f"a later ACL reached T {time.monotonic() - added_at:.1f} s after its creation")
        wait_for("the late ACL from Java", synced("J.", expected | {late}), 30)
        body = status(worker, "acl-S")
        assert body is not None and body["connector"]["state"] == "RUNNING", body


def test_source_without_authorizer_skips_acl_sync(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """Cluster A has no authorizer: one INFO line, no failure, the topic is still replicated."""
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("noauth")
    asyncio.run(create_topics(a, [topic]))
    (worker,) = python_workers(b, tmp_path, unique("acl-noauth"), 1)
    with fleet([worker]):
        config = connector_config(a, b, "A", topic, **{"target.cluster.alias": "B"})
        code, body = worker.rest("POST", "/connectors", {"name": "acl-noauth", "config": config})
        assert code == 201, body
        wait_for("the RUNNING task", lambda: running_tasks(worker, "acl-noauth", 1), 60)
        log_file = worker.log_file
        wait_for(
            "the no-authorizer line in the worker log",
            lambda: NO_AUTHORIZER_LINE in log_file.read_text(errors="replace"),
            30,
        )
        time.sleep(5)  # two more ACL sync intervals
        assert log_file.read_text(errors="replace").count(NO_AUTHORIZER_LINE) == 1
        assert running_tasks(worker, "acl-noauth", 1), status(worker, "acl-noauth")
