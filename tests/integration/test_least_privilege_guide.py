"""The guide's least-privilege mirror A->B over SASL_SSL with SCRAM-SHA-512, on pyconnect and on Java.

The module starts two SASL_SSL clusters of its own, A (source) and B (target), each with the super
user ``admin`` (who sets up topics and reads results) and the mirror's principal ``User:mirror``, which
holds exactly these ACLs and nothing else:

On A (the guide, section 5.7, offset syncs on the target): READ, DESCRIBE, DESCRIBE_CONFIGS on each
mirrored topic; DESCRIBE on the cluster; DESCRIBE on each mirrored group. No WRITE, CREATE, ALTER or
ALTER_CONFIGS anywhere on A.

On B (the guide): CREATE, DESCRIBE, WRITE, ALTER, ALTER_CONFIGS on each mirrored topic; DESCRIBE, READ
on each mirrored group; CREATE, DESCRIBE, WRITE, READ on the offset-syncs topic
(``mm2-offset-syncs.A.internal``) and the checkpoints topic (``A.checkpoints.internal``); DESCRIBE, ALTER
on the cluster. Plus READ on each mirrored topic: the checkpoint task's group-offset sync is an
OffsetCommit on B, which the broker authorizes with READ on the group *and* READ on the topic (Java's
client does the same request; the guide's list leaves it out).

On B, what the Connect worker itself needs (derived, not in the guide): READ on its group (JoinGroup,
SyncGroup, Heartbeat; FindCoordinator is DESCRIBE, implied by READ); CREATE, DESCRIBE, READ, WRITE,
DESCRIBE_CONFIGS on its three internal topics (created at start, cleanup policy checked, read back to
the end, written). The idempotent producers' IDEMPOTENT_WRITE on the cluster is implied by WRITE on
any topic. Dedicated mode's herder (group ``A-mm2``, topics ``mm2-{configs,offsets,status}.A.internal``)
needs the same on its names.

The guide's worker file (``test_red_hat_exactly_once_guide.guide_worker_file`` with the security keys
added and exactly-once left at its default: exactly-once source support needs transactional-id ACLs
the guide does not list) runs on two pyconnect workers; its MirrorSourceConnector and
MirrorCheckpointConnector JSONs (``source.cluster.``/``target.cluster.`` security keys added) are
POSTed. Data arrives on B, offset syncs and checkpoints are written on B, the group's offsets are synced
on B, and A is unchanged: the same topics, every partition's end offset and the group's committed
offsets as before, and DescribeAcls on A shows no WRITE, CREATE, DELETE, ALTER, ALTER_CONFIGS,
IDEMPOTENT_WRITE or ALL for ``User:mirror``.

``long`` (``make chaos``): the same flow in dedicated mode (``mm2.properties`` with ``A.``/``B.``
security keys, ``emit.heartbeats.enabled=false`` and ``--clusters B``: with heartbeats on, the default,
a heartbeat-only B->A herder (KAFKA-10710) would write its internal topics and heartbeats to A); and a Java Connect worker with the same files, which must
reach the same connector and task states. Dedicated mode also starts MirrorHeartbeatConnector, which
(as Java's does) tries to create ``heartbeats`` on B even with ``emit.heartbeats.enabled=false``: the
guide's ACLs refuse it, one ERROR line, and replication goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition

from pyconnect.kafka.acls import AclOperation, PatternType, ResourceType
from pyconnect.kafka.clients import create_consumer
from pyconnect.kafka.mirror_admin import MirrorAdmin
from pyconnect.kafka.probe import SSL_CLOSE_S
from pyconnect.testing.backends import BackendUnavailable, chosen_backend
from pyconnect.testing.connect_worker import ConnectWorkerProcess
from pyconnect.testing.java_reference import JavaConnectWorker
from pyconnect.testing.kafka import KafkaCluster, start_clusters, stop_clusters
from pyconnect.testing.kafka_security import ADMIN_USER
from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker
from pyconnect.testing.worker_process import PyconnectWorker
from tests.integration.fleet import FAST_GROUP, fleet, status, wait_for
from tests.integration.secured_fleet import grant_sync
from tests.integration.test_red_hat_exactly_once_guide import guide_connectors, guide_worker_file
from tests.integration.test_secured_failures import (
    commit_group,
    create_topic,
    group_offsets,
    produce,
    read_values,
)

pytestmark = pytest.mark.kafka

MECHANISM = "SCRAM-SHA-512"
MIRROR = "mirror"
USERS = (ADMIN_USER, MIRROR)
OFFSET_SYNCS = "mm2-offset-syncs.A.internal"
CHECKPOINTS = "A.checkpoints.internal"
FLOW_S = 60.0
VALUES = [f"v{i}".encode() for i in range(20)]
FORBIDDEN_ON_SOURCE = {
    AclOperation.ALL,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, KafkaCluster]]:
    backend = chosen_backend()
    if backend != "local":
        raise BackendUnavailable(
            "test_least_privilege_guide starts its own SASL_SSL clusters and needs the local backend; "
            f"PYCONNECT_TEST_BACKEND is {backend!r}"
        )
    started = start_clusters(
        ["A", "B"],
        tmp_path_factory.mktemp("kafka-least-privilege"),
        security="sasl_ssl",
        users=USERS,
        die_with_parent=True,
    )
    try:
        grant_sync(started["A"], MIRROR, "cluster", "kafka-cluster", ["describe"])
        grant_sync(started["B"], MIRROR, "cluster", "kafka-cluster", ["describe", "alter"])
        for name in (OFFSET_SYNCS, CHECKPOINTS):
            grant_sync(started["B"], MIRROR, "topic", name, ["create", "describe", "write", "read"])
        yield started
    finally:
        stop_clusters(started.values())


def security(cluster: KafkaCluster) -> dict[str, str]:
    """The mirror principal's Java client keys (SASL_SSL, SCRAM-SHA-512, PEM truststore)."""
    return cluster.client_properties(MIRROR, MECHANISM)


def grant_flow(clusters: dict[str, KafkaCluster], topic: str, group: str) -> None:
    """The guide's per-topic and per-group ACLs for ``mirror`` (see the module docstring)."""
    a, b = clusters["A"], clusters["B"]
    grant_sync(a, MIRROR, "topic", topic, ["read", "describe", "describe_configs"])
    grant_sync(a, MIRROR, "group", group, ["describe"])
    grant_sync(b, MIRROR, "topic", topic, ["create", "describe", "write", "alter", "alter_configs", "read"])
    grant_sync(b, MIRROR, "group", group, ["describe", "read"])


def grant_worker(b: KafkaCluster, group: str, internal_topics: list[str]) -> None:
    """What a Connect worker of ``group`` needs on its own cluster B (derived; see the module docstring)."""
    grant_sync(b, MIRROR, "group", group, ["read"])
    for name in internal_topics:
        grant_sync(b, MIRROR, "topic", name, ["create", "describe", "read", "write", "describe_configs"])


def worker_file(b: KafkaCluster, group: str) -> dict[str, object]:
    """The guide's worker file on B as ``mirror``: the security keys for the worker's own clients and,
    with the ``producer.``/``consumer.``/``admin.`` prefixes, for the tasks' clients."""
    keys = security(b)
    props: dict[str, object] = {**guide_worker_file(b.bootstrap_servers), **keys, **FAST_GROUP}
    del props["exactly.once.source.support"]
    props["group.id"] = group
    for name, topic in zip(("offset", "config", "status"), internal_topics(group), strict=True):
        props[f"{name}.storage.topic"] = topic
    for role in ("producer", "consumer", "admin"):
        props.update({f"{role}.{k}": v for k, v in keys.items()})
    return props


def internal_topics(group: str) -> list[str]:
    return [f"__{group}-offsets", f"__{group}-configs", f"__{group}-status"]


def connectors(clusters: dict[str, KafkaCluster], topic: str, group: str) -> dict[str, dict[str, object]]:
    """The guide's two connector JSONs with the ``source.cluster.``/``target.cluster.`` security keys,
    tightened for a test: short intervals, one task."""
    a, b = clusters["A"], clusters["B"]
    found = guide_connectors(a.bootstrap_servers, b.bootstrap_servers, topic, group)
    keys = {f"source.cluster.{k}": v for k, v in security(a).items()}
    keys.update({f"target.cluster.{k}": v for k, v in security(b).items()})
    for config in found.values():
        config.update(keys)
        config["tasks.max"] = 1
    found["mm2-source"].update(
        {"refresh.topics.interval.seconds": 2, "offset.lag.max": 0, "sync.topic.configs.interval.seconds": 2}
    )
    return found


async def source_snapshot(a: KafkaCluster, group: str) -> dict[str, object]:
    """A's topics, each partition's end offset, and the group's committed offsets (as ``admin``)."""
    consumer = create_consumer(a.client_properties(ADMIN_USER, MECHANISM))
    await consumer.start()
    try:
        topics = sorted(await consumer.topics())
        tps = [TopicPartition(t, p) for t in topics for p in sorted(consumer.partitions_for_topic(t) or ())]
        ends = {(tp.topic, tp.partition): offset for tp, offset in (await consumer.end_offsets(tps)).items()}
    finally:
        await consumer.stop()
        await asyncio.sleep(SSL_CLOSE_S)
    return {"topics": topics, "ends": ends, "group": await group_offsets(a, group)}


async def mirror_acls_on(cluster: KafkaCluster) -> list[tuple[str, str | None, str]]:
    """Every ACL of ``User:mirror`` on ``cluster``, as the brokers answer DescribeAcls."""
    admin = MirrorAdmin(cluster.client_properties(ADMIN_USER, MECHANISM))
    await admin.start()
    try:
        found = await admin.describe_acls(ResourceType.ANY, None, PatternType.ANY)
    finally:
        await admin.close()
        await asyncio.sleep(SSL_CLOSE_S)
    return [
        (b.resource_type.name, b.name, b.operation.name) for b in found if b.principal == f"User:{MIRROR}"
    ]


def assert_read_only_on_source(a: KafkaCluster) -> None:
    acls = run(mirror_acls_on(a))
    assert acls, "the mirror principal has its ACLs on A"
    ops = {AclOperation[op] for _, _, op in acls}
    assert not ops & FORBIDDEN_ON_SOURCE, acls


def prepare_source(clusters: dict[str, KafkaCluster], topic: str, group: str) -> None:
    a = clusters["A"]
    run(create_topic(a, topic))
    run(produce(a, topic, VALUES))
    run(commit_group(a, group, topic))
    grant_flow(clusters, topic, group)


def flow_done(clusters: dict[str, KafkaCluster], topic: str, group: str) -> None:
    """Data, offset syncs, checkpoints and synced group offsets on B (bounded waits)."""
    b = clusters["B"]
    wait_for(
        f"{len(VALUES)} records of {topic} on B", lambda: run(read_values(b, topic)) == VALUES, FLOW_S, 1.0
    )
    wait_for("offset syncs on B", lambda: run(read_values(b, OFFSET_SYNCS)), FLOW_S, 1.0)
    wait_for("checkpoints on B", lambda: run(read_values(b, CHECKPOINTS)), FLOW_S, 1.0)
    seen: list[object] = []

    def synced() -> bool:
        offsets = run(group_offsets(b, group))
        seen[:] = [offsets]
        return offsets.get((topic, 0)) == len(VALUES)

    try:
        wait_for(f"offsets of {group} synced on B", synced, FLOW_S, 1.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the group's offsets on B: {seen}") from None


def states(worker: ConnectWorkerProcess, names: list[str]) -> dict[str, tuple[str, list[str]]] | None:
    """connector -> (state, task states), once every connector has a task and none is UNASSIGNED."""
    found = {}
    for name in names:
        body = status(worker, name)
        if not body or not body["tasks"]:
            return None
        tasks = [t["state"] for t in body["tasks"]]
        if "UNASSIGNED" in tasks or body["connector"]["state"] == "UNASSIGNED":
            return None
        found[name] = (body["connector"]["state"], tasks)
    return found


def all_running(worker: ConnectWorkerProcess, names: list[str]) -> dict[str, tuple[str, list[str]]] | None:
    found = states(worker, names)
    if found and all(c == "RUNNING" and set(t) == {"RUNNING"} for c, t in found.values()):
        return found
    return None


def run_guide_on(
    workers: list[ConnectWorkerProcess],
    clusters: dict[str, KafkaCluster],
    topic: str,
    group: str,
) -> dict[str, tuple[str, list[str]]]:
    """POST the guide's connectors to ``workers`` (started here), see the flow complete, and return the
    connectors' states."""
    with fleet(workers):
        for name, config in connectors(clusters, topic, group).items():
            code, body = workers[-1].rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, (name, code, body)
        found = wait_for(
            "both connectors and their tasks RUNNING",
            lambda: all_running(workers[0], ["mm2-source", "mm2-checkpoint"]),
            FLOW_S,
            0.5,
        )
        flow_done(clusters, topic, group)
        for w in workers:
            log = w.log_file.read_text(errors="replace")
            assert "Not authorized" not in log and "AuthorizationError" not in log, w.log_tail(20)
        return found


@pytest.mark.long
def test_the_guides_least_privilege_flow_runs_on_two_pyconnect_workers(
    clusters: dict[str, KafkaCluster], tmp_path: Path, unique: Callable[[str], str]
) -> None:
    a, b = clusters["A"], clusters["B"]
    topic, group, connect_group = unique("lp"), unique("lp-app"), unique("connect-mirrormaker-A-to-B")
    prepare_source(clusters, topic, group)
    grant_worker(b, connect_group, internal_topics(connect_group))
    before = run(source_snapshot(a, group))
    properties = worker_file(b, connect_group)
    workers: list[ConnectWorkerProcess] = [
        PyconnectWorker(
            b.bootstrap_servers,
            tmp_path / f"py-{i}",
            group_id=connect_group,
            extra=properties,
            die_with_parent=True,
        )
        for i in range(2)
    ]
    started = time.monotonic()
    found = run_guide_on(workers, clusters, topic, group)
    print(f"\npyconnect, two workers: {found}; flow complete in {time.monotonic() - started:.1f} s")
    assert run(source_snapshot(a, group)) == before, "A is unchanged"
    assert_read_only_on_source(a)


def dedicated_file(clusters: dict[str, KafkaCluster], topic: str, group: str) -> dict[str, object]:
    """An mm2.properties for A->B with per-cluster security keys (``A.``/``B.``)."""
    a, b = clusters["A"], clusters["B"]
    props: dict[str, object] = {
        "clusters": "A, B",
        "A.bootstrap.servers": a.bootstrap_servers,
        "B.bootstrap.servers": b.bootstrap_servers,
        **{f"A.{k}": v for k, v in security(a).items()},
        **{f"B.{k}": v for k, v in security(b).items()},
        "A->B.enabled": "true",
        "A->B.topics": topic,
        "A->B.groups": group,
        "B->A.enabled": "false",
        "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        "offset-syncs.topic.location": "target",
        "emit.heartbeats.enabled": "false",
        "sync.topic.acls.enabled": "false",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "refresh.groups.interval.seconds": "2",
        "refresh.topics.interval.seconds": "2",
        "offset.lag.max": "0",
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        # the herder's worker on B commits (which sends the delayed offset syncs) every second, as the
        # distributed workers above do, not every minute
        "B.offset.flush.interval.ms": "1000",
    }
    return props


@pytest.mark.long
def test_the_guides_least_privilege_flow_runs_in_dedicated_mode(
    clusters: dict[str, KafkaCluster], tmp_path: Path, unique: Callable[[str], str]
) -> None:
    a, b = clusters["A"], clusters["B"]
    topic, group = unique("lpd"), unique("lpd-app")
    prepare_source(clusters, topic, group)
    grant_worker(b, "A-mm2", [f"mm2-{n}.A.internal" for n in ("configs", "offsets", "status")])
    before = run(source_snapshot(a, group))
    mm = PyconnectMirrorMaker(
        config=dedicated_file(clusters, topic, group),
        work_dir=tmp_path / "mm2",
        clusters=["B"],
        die_with_parent=True,
    )
    started = time.monotonic()
    mm.start()
    try:
        mm.wait_started()
        flow_done(clusters, topic, group)
        log = mm.log_since_start()
        assert "Not authorized" not in log and "AuthorizationError" not in log, mm.log_tail(20)
        assert "Traceback" not in log, mm.log_tail(40)
    finally:
        mm.stop(timeout=20)
    print(f"\ndedicated mode: flow complete in {time.monotonic() - started:.1f} s")
    assert run(source_snapshot(a, group)) == before, "A is unchanged"
    assert_read_only_on_source(a)


@pytest.mark.long
def test_a_java_worker_runs_the_same_files_with_the_same_acls(
    clusters: dict[str, KafkaCluster], tmp_path: Path, unique: Callable[[str], str]
) -> None:
    """Java's Connect worker with the same worker file (its own group: the ACLs are the same set on its
    names) and the same connector JSONs: the same states, the same flow, A unchanged."""
    a, b = clusters["A"], clusters["B"]
    topic, group, connect_group = unique("lpj"), unique("lpj-app"), unique("connect-java")
    prepare_source(clusters, topic, group)
    grant_worker(b, connect_group, internal_topics(connect_group))
    before = run(source_snapshot(a, group))
    java: list[ConnectWorkerProcess] = [
        JavaConnectWorker(
            b.bootstrap_servers,
            tmp_path / "java",
            group_id=connect_group,
            extra=worker_file(b, connect_group),
            die_with_parent=True,
        )
    ]
    found = run_guide_on(java, clusters, topic, group)
    print(f"\nJava: {found}")
    assert found == {"mm2-source": ("RUNNING", ["RUNNING"]), "mm2-checkpoint": ("RUNNING", ["RUNNING"])}
    assert run(source_snapshot(a, group)) == before, "A is unchanged"
