"""Dedicated MirrorMaker (``pyconnect mirror-maker mm2.properties``) against real clusters.

Each test writes an ``mm2.properties`` and runs it in ``PyconnectMirrorMaker`` processes; there is no
public REST API, so what happened is read from Kafka: replicated topics, heartbeats, checkpoints, the
herders' status topics (``mm2-status.<S>.internal``) and their Connect groups' assignments.

- The ADS guide's file as written: records arrive as ``A_<topic>`` on B record for record, heartbeats
  appear both ways, and ``groups = *`` fails the checkpoint connector as it does in Java (``*`` is not a
  Java regex). The file corrected to ``groups = .*`` and the process restarted: the new leader rewrites
  the changed connector configs (KAFKA-15372), records produced meanwhile arrive once, and the committed
  group on A gets its checkpoints on B.
- Two processes with one file and the internal REST server: work spreads over both, a topic created
  later is picked up (task configs published to the leader), kill -9 of the follower leaves the other
  carrying on, nothing is lost.
- Three clusters: active/active A<->B plus B->C (no loops, each record once per cluster, heartbeat hops
  A->B->C seen on C through the client logic), then aggregation A->C, B->C with fan-out A->B, A->C.
- (``java``) One Java MirrorMaker 4.3.1 and one pyconnect process with the same file: one group, task
  configs published across implementations through the internal REST paths, both ways.

The session's clusters have one broker each, so every replication factor is 1. The ADS file (separator
``_``) runs on two clusters of its own (D and E in the backend's terms, aliased A and B in the file). Tests share the default
Connect groups (``<S>-mm2``) and internal topics across the session, as successive deployments would:
each new leader finds the previous file's connector configs and rewrites them.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from connectors.mirror.checkpoint_records import Checkpoint, Heartbeat
from connectors.mirror.offsets import remote_cluster_utils
from connectors.mirror.records import OffsetSync
from pyconnect.kafka.group_member import describe_group
from pyconnect.protocol.connect_assignment import decode_assignment, merge_into_snapshot
from pyconnect.protocol.connect_metadata import decode_metadata
from pyconnect.protocol.internal_records import ConnectorStatus, State, TaskStatus, decode_status_record
from pyconnect.protocol.primitives import ProtocolError
from pyconnect.testing.backends import ClusterHandle, provide_clusters
from pyconnect.testing.java_reference import JavaMirrorMaker
from pyconnect.testing.mirror_maker_process import PyconnectMirrorMaker
from tests.integration.fleet import wait_for
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2, latest_checkpoints, read_partition0
from tests.integration.test_mirror_checkpoint import COMMITTED, commit_group
from tests.integration.test_mirror_source import (
    Row,
    create_and_fill,
    produce,
    read_all,
    source_rows,
    topic_state,
)

pytestmark = pytest.mark.kafka

QUICK_REFRESH = {
    "refresh.topics.interval.seconds": 2,
    "refresh.groups.interval.seconds": 2,
    "emit.checkpoints.interval.seconds": 1,
    "sync.topic.acls.enabled": "false",
    "offset.lag.max": 10,
}
KEEP = {"retention.ms": "-1"}
"""The test records carry 2023 timestamps: without this the brokers' retention check deletes them."""
FAST_GROUP = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "offset.flush.interval.ms": 1000,
    "scheduled.rebalance.max.delay.ms": 3000,
}


def fast_group(*aliases: str) -> dict[str, object]:
    """Worker keys are not taken from the top level: they go per target cluster (``B.session.timeout.ms``)."""
    return {f"{alias}.{key}": value for alias in aliases for key, value in FAST_GROUP.items()}


def render(lines: Mapping[str, object]) -> str:
    return "".join(f"{key} = {value}\n" for key, value in lines.items())


async def list_topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


async def read_latest(bootstrap: str, topic: str, timeout: float = 15.0) -> dict[bytes, bytes | None]:
    """The latest value per key of every partition of ``topic`` up to its current end."""
    count, _ = await topic_state(bootstrap, topic, None)
    latest: dict[bytes, bytes | None] = {}
    if not count:
        return latest
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(count)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any([await consumer.position(tp) < ends[tp] for tp in tps]):
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    if m.key is not None:
                        latest[m.key] = m.value
    finally:
        await consumer.stop()
    return latest


def statuses(bootstrap: str, source: str) -> dict[str, ConnectorStatus | TaskStatus]:
    """Connector and task statuses in ``mm2-status.<source>.internal``, by status key."""
    found: dict[str, ConnectorStatus | TaskStatus] = {}
    for key, value in asyncio.run(read_latest(bootstrap, f"mm2-status.{source}.internal")).items():
        parsed_key, status = decode_status_record(key, value)
        if isinstance(status, ConnectorStatus | TaskStatus):
            found[parsed_key.raw] = status
    return found


def connector_status(bootstrap: str, source: str, connector: str) -> ConnectorStatus | None:
    status = statuses(bootstrap, source).get(f"status-connector-{connector}")
    return status if isinstance(status, ConnectorStatus) else None


def group_assignment(bootstrap: str, group: str) -> tuple[str | None, dict[str, tuple[list[str], list[str]]]]:
    """``(leader url, {member url: (connectors, tasks)})`` of a stable Connect group: what each member
    holds is what it advertised at its last join plus its assignment, minus revocations (incremental
    cooperative assignments carry only the changes)."""
    try:
        described = asyncio.run(describe_group({"bootstrap.servers": bootstrap}, group, timeout_s=15))
    except KafkaError:  # no coordinator for the group yet
        return None, {}
    if described["state"] != "Stable":
        return None, {}
    leader = None
    held: dict[str, tuple[list[str], list[str]]] = {}
    for member in described["members"]:
        try:
            state = decode_metadata(bytes(member["metadata"]))
            received = decode_assignment(bytes(member["assignment"]))
        except ProtocolError:
            return None, {}
        holding = merge_into_snapshot(state.assignment, received, eager=False)
        leader = received.leader_url or leader
        held[state.url] = (list(holding.connectors), [f"{t.connector}-{t.task}" for t in holding.tasks])
    return leader, held


def heartbeats(bootstrap: str, topic: str) -> set[tuple[str, str]]:
    return {
        (h.source_cluster_alias, h.target_cluster_alias)
        for h in (Heartbeat.from_record(k, v) for k, v in asyncio.run(read_partition0(bootstrap, topic)))
    }


def synced_upto(bootstrap: str, offset_syncs_topic: str, topic: str) -> dict[int, int]:
    """The highest upstream offset per partition of ``topic`` in the offset syncs."""
    newest: dict[int, int] = {}
    for key, value in asyncio.run(read_partition0(bootstrap, offset_syncs_topic)):
        sync = OffsetSync.deserialize_record(key, value)
        if sync.topic == topic:
            newest[sync.partition] = max(newest.get(sync.partition, -1), sync.upstream_offset)
    return newest


def mirrored(bootstrap: str, topic: str, expected: dict[int, list[Row]]) -> bool:
    """``topic`` holds exactly ``expected`` (no record missing, none twice); False while it is shorter."""
    got = asyncio.run(read_all(bootstrap, topic, 10))
    want = sum(map(len, expected.values()))
    have = sum(map(len, got.values()))
    if have < want:
        return False
    assert {p: [r[2:] for r in rows] for p, rows in got.items()} == {
        p: [r[2:] for r in rows] for p, rows in expected.items()
    }, f"{topic}: {have} records, {want} expected"
    return True


def wait_mirrored(bootstrap: str, topic: str, expected: dict[int, list[Row]], timeout: float) -> None:
    wait_for(f"{topic} equal to its source", lambda: mirrored(bootstrap, topic, expected), timeout, 1.0)


def wait_all_mirrored(expected: Mapping[str, Mapping[str, dict[int, list[Row]]]], timeout: float) -> None:
    """:func:`wait_mirrored` for every ``bootstrap -> {topic: rows}``, one after the other."""
    for bootstrap, topics in expected.items():
        for topic, rows in topics.items():
            wait_mirrored(bootstrap, topic, rows, timeout)


@contextmanager
def running(*processes: PyconnectMirrorMaker) -> Iterator[Sequence[PyconnectMirrorMaker]]:
    try:
        for process in processes:
            process.start()
        for process in processes:
            process.wait_started()
        yield processes
    finally:
        for process in processes:
            process.stop(timeout=30)


def alone(bootstrap: str, url: str | None) -> bool:
    """The member at ``url`` is the only one of group ``A-mm2`` and holds all three connectors."""
    leader, held = group_assignment(bootstrap, "A-mm2")
    return url is not None and leader == url and set(held) == {url} and len(held[url][0]) == 3


def mirror_maker(path: Path, work_dir: Path, **kwargs: Any) -> PyconnectMirrorMaker:
    return PyconnectMirrorMaker(path, work_dir, die_with_parent=True, **kwargs)


def shared_flow_file(path: Path, a: str, b: str, prefix: str) -> Path:
    """The file the multi-node tests share: A->B for ``<prefix>-.*`` with 4 tasks and the internal REST
    server on (a free port on 127.0.0.1), no heartbeats back; written to ``path``."""
    path.write_text(
        render(
            {
                "clusters": "A, B",
                "A.bootstrap.servers": a,
                "B.bootstrap.servers": b,
                "A->B.enabled": "true",
                "A->B.topics": f"{prefix}-.*",
                "B->A.emit.heartbeats.enabled": "false",
                "tasks.max": 4,
                "dedicated.mode.enable.internal.rest": "true",
                "listeners": "http://127.0.0.1:0",
                **SINGLE_BROKER_MM2,
                **QUICK_REFRESH,
                **fast_group("B"),
            }
        )
    )
    return path


# ------------------------------------------------------------------------------------------ ADS guide


@pytest.fixture(scope="module")
def underscore_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two clusters of its own for the ``_`` separator: Kafka refuses topic names that differ only in
    ``.`` and ``_`` (``A_heartbeats`` vs ``A.heartbeats``, ``A_checkpoints_internal`` vs
    ``A.checkpoints.internal``), so this file cannot share clusters with flows of the default policy."""
    with provide_clusters(tmp_path_factory.mktemp("kafka-underscore"), ("D", "E")) as handles:
        yield handles["D"].bootstrap_servers, handles["E"].bootstrap_servers


def wait_ads_checkpoints(b: str, group: str, what: str) -> dict[tuple[str, int], Checkpoint]:
    """The latest checkpoints of ``group`` in the ADS file's ``A_checkpoints_internal``, once every
    committed partition has one."""
    return wait_for(
        what,
        lambda: (
            (c := latest_checkpoints(b, group, "A_checkpoints_internal")) and len(c) == len(COMMITTED) and c
        ),
        60,
    )


def test_ads_guide_file(
    underscore_clusters: tuple[str, str], unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = underscore_clusters
    prefix = unique("ads")
    topic, group = f"{prefix}-t", unique("ads-group")
    asyncio.run(create_and_fill(a, topic, 3, 300, KEEP))
    asyncio.run(commit_group(a, group, topic))
    ads = {
        "clusters": "A, B",
        "A.bootstrap.servers": a,
        "B.bootstrap.servers": b,
        "A->B.enabled": "true",
        "A->B.topics": f"{prefix}-.*",
        "groups": "*",
        "replication.policy.separator": "_",
        "emit.heartbeats.interval.seconds": 5,
    }
    additions = {**SINGLE_BROKER_MM2, **QUICK_REFRESH, **fast_group("A", "B")}
    path = tmp_path / "mm2.properties"
    path.write_text(
        render(ads) + "# for the test: one broker per cluster, quick refreshes\n" + render(additions)
    )
    process = mirror_maker(path, tmp_path / "node")
    started = time.monotonic()
    with running(process):
        expected = source_rows(a, topic, 300)
        wait_mirrored(b, f"A_{topic}", expected, 90)
        mirrored_s = time.monotonic() - started
        # Let the offset syncs reach the last records before the restart below (they are what the
        # checkpoints are translated from; pending ones die with a task that stops first, as in Java).
        last = {p: rows[-1][1] for p, rows in expected.items()}
        wait_for(
            "offset syncs up to the last records",
            lambda: synced_upto(a, "mm2-offset-syncs_B_internal", topic) == last,
            30,
        )
        wait_for("heartbeats A->B on B", lambda: ("A", "B") in heartbeats(b, "heartbeats"), 30)
        wait_for(
            "heartbeats B->A replicated to B as A_heartbeats",
            lambda: ("B", "A") in heartbeats(b, "A_heartbeats"),
            30,
        )

        # `*` is not a Java regex: Java 4.3.1 fails MirrorCheckpointConnector at start with a
        # PatternSyntaxException. We read a lone `*` as `.*` (and warn), so the file works as written.
        remote = f"A_{topic}"
        found = wait_ads_checkpoints(b, group, "checkpoints of the committed group on B (groups = *)")
        for partition, committed in COMMITTED.items():
            assert found[(remote, partition)].upstream_offset == committed
        assert "reading it as '.*'" in process.log_since_start()
        for name in ("MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector"):
            status = connector_status(b, "A", name)
            assert status is not None and status.state == State.RUNNING, status
            assert "/A->B/" in (status.worker_id or ""), "Java's worker id without REST: host/S->T/uuid"
        reverse = connector_status(a, "B", "MirrorHeartbeatConnector")
        assert reverse is not None and reverse.state == State.RUNNING, reverse
        assert not asyncio.run(list_topics(a)) & {f"B_{topic}", f"A_{topic}"}, "B->A replicates nothing"
    print(f"\nADS file: 300 records mirrored {mirrored_s:.1f} s after start")

    # The file rewritten with the regex spelled out; records produced while the process is down arrive
    # once after the restart, and the new leader writes the changed connector configs again.
    path.write_text(path.read_text().replace("groups = *", "groups = .*"))
    asyncio.run(produce(a, topic, 3, 30, first=300))
    restarted = time.monotonic()
    with running(process):
        wait_mirrored(b, f"A_{topic}", source_rows(a, topic, 330), 90)
        remote = f"A_{topic}"
        found = wait_ads_checkpoints(b, group, "checkpoints of the committed group on B")
        checkpoint_s = time.monotonic() - restarted
        for partition, committed in COMMITTED.items():
            checkpoint = found[(remote, partition)]
            assert (checkpoint.upstream_offset, checkpoint.metadata) == (committed, f"m{partition}")
            assert 0 <= checkpoint.downstream_offset <= committed, checkpoint
        # The new leader may be restarting it for its rewritten config (below): UNASSIGNED for a moment.
        wait_for(
            "MirrorCheckpointConnector RUNNING after the restart",
            lambda: (
                (s := connector_status(b, "A", "MirrorCheckpointConnector")) is not None
                and s.state == State.RUNNING
            ),
            30,
        )
        # `groups` is a top-level connector key, so it is part of all three configs: the new leader
        # found each of them different from the config topic and wrote it again (KAFKA-15372).
        for name in ("MirrorSourceConnector", "MirrorHeartbeatConnector", "MirrorCheckpointConnector"):
            wait_for(
                f"{name} configured again",
                lambda name=name: f"{name} connector configured for A->B." in process.log_since_start(),
                60,
            )
    print(f"after the restart: checkpoints on B {checkpoint_s:.1f} s later")


# ----------------------------------------------------------------------------------------- multi-node


@pytest.mark.long  # ~15 s; the Java and pyconnect nodes sharing a cluster stay in make test
def test_two_nodes_share_flows_and_survive_kill_9(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("nodes")
    topic, late = f"{prefix}-t", f"{prefix}-late"
    asyncio.run(create_and_fill(a, topic, 4, 400, KEEP))
    path = shared_flow_file(tmp_path / "mm2.properties", a, b, prefix)
    first, second = (mirror_maker(path, tmp_path / f"node-{i}") for i in range(2))
    with running(first):
        wait_for("the first node leading alone", lambda: alone(b, first.internal_rest_url), 60)
        with running(second):
            urls = {node.internal_rest_url: node for node in (first, second)}
            assert None not in urls and len(urls) == 2, urls
            wait_mirrored(b, f"A.{topic}", source_rows(a, topic, 400), 90)

            def spread() -> tuple[str, dict[str, tuple[list[str], list[str]]]] | None:
                leader, held = group_assignment(b, "A-mm2")
                tasks = sorted(t for _, ts in held.values() for t in ts)
                source_tasks = [t for t in tasks if t.startswith("MirrorSourceConnector-")]
                if leader is None or set(held) != set(urls) or len(source_tasks) != 4:
                    return None
                return (leader, held) if all(cs or ts for cs, ts in held.values()) else None

            leader, held = wait_for("work on both nodes", spread, 60)
            print(f"\nassignment: leader {leader}, {held}")
            assert leader == first.internal_rest_url
            # The cooperative assignor hands the newcomer one of the leader's three connectors: the
            # last in Java's hash order, MirrorSourceConnector (Java's assignor does the same).
            assert "MirrorSourceConnector" in held[str(second.internal_rest_url)][0], held
            # Statuses name host:port/S->T of both nodes, once the newcomer's work reported RUNNING (the
            # assignment is visible in the group a moment before its connectors and tasks start).
            authorities = {str(u).split("//", 1)[1].rstrip("/") for u in urls}
            wait_for(
                "RUNNING statuses of both nodes",
                lambda: (
                    {f"{x}/A->B" for x in authorities}
                    <= {s.worker_id or "" for s in statuses(b, "A").values() if s.state == State.RUNNING}
                ),
                30,
            )

            # A topic created now: the follower's MirrorSourceConnector regenerates the task configs and,
            # not being the leader, publishes them to the leader through the internal REST server.
            asyncio.run(create_and_fill(a, late, 2, 40, KEEP))
            wait_mirrored(b, f"A.{late}", source_rows(a, late, 40), 60)
            print("new topic picked up: task configs published to the leader")

            follower = second.internal_rest_url
            killed_at = time.monotonic()
            second.kill()
            asyncio.run(produce(a, topic, 4, 100, first=400))
            survivor = leader

            def taken_over() -> bool:
                current, now_held = group_assignment(b, "A-mm2")
                if current != survivor or set(now_held) != {survivor}:
                    return False
                connectors, tasks = now_held[survivor]
                return (
                    len(connectors) == 3 and sum(t.startswith("MirrorSourceConnector-") for t in tasks) == 4
                )

            wait_for("the survivor holding every connector and task", taken_over, 60)
            expected = source_rows(a, topic, 500)

            def nothing_lost() -> bool:
                got = asyncio.run(read_all(b, f"A.{topic}", 10))
                return all(
                    {r[2:] for r in rows} <= {r[2:] for r in got.get(p, [])} for p, rows in expected.items()
                )

            wait_for("every record on B after the kill", nothing_lost, 60, 1.0)
            print(
                f"survivor carried on: all 500 records on B {time.monotonic() - killed_at:.1f} s after kill -9"
            )
            assert first.running and follower not in group_assignment(b, "A-mm2")[1]


# ---------------------------------------------------------------------------------------- topologies


def topology_file(path: Path, clusters: dict[str, ClusterHandle], flows: Mapping[str, object]) -> Path:
    lines: dict[str, object] = {"clusters": ", ".join(clusters)}
    lines.update({f"{alias}.bootstrap.servers": c.bootstrap_servers for alias, c in clusters.items()})
    lines.update(flows)
    lines.update({**SINGLE_BROKER_MM2, **QUICK_REFRESH, **fast_group(*clusters)})
    path.write_text(render(lines))
    return path


def topics_named(bootstrap: str, marker: str) -> set[str]:
    return {t for t in asyncio.run(list_topics(bootstrap)) if marker in t}


def test_active_active_with_a_third_hop(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    cluster_c: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    clusters = {"A": cluster_a, "B": cluster_b, "C": cluster_c}
    a, b, c = (h.bootstrap_servers for h in clusters.values())
    prefix = unique("aa")
    ta, tb = f"{prefix}-a", f"{prefix}-b"
    asyncio.run(create_and_fill(a, ta, 2, 120, KEEP))
    asyncio.run(create_and_fill(b, tb, 2, 80, KEEP))
    from_a, from_b = source_rows(a, ta, 120), source_rows(b, tb, 80)
    path = topology_file(
        tmp_path / "mm2.properties",
        clusters,
        {
            "A->B.enabled": "true",
            "B->A.enabled": "true",
            "B->C.enabled": "true",
            "topics": f".*{prefix}.*",
            "A->C.emit.heartbeats.enabled": "false",
            "C->A.emit.heartbeats.enabled": "false",
            "C->B.emit.heartbeats.enabled": "false",
        },
    )
    process = mirror_maker(path, tmp_path / "node")
    started = time.monotonic()
    with running(process):
        expected = {a: {ta: from_a, f"B.{tb}": from_b}, b: {tb: from_b, f"A.{ta}": from_a}}
        expected[c] = {f"B.{tb}": from_b, f"B.A.{ta}": from_a}
        wait_all_mirrored(expected, 90)
        took = time.monotonic() - started

        def hops() -> tuple[int, int] | None:
            names = asyncio.run(list_topics(c))
            found = (
                remote_cluster_utils.replication_hops(names, "A"),
                remote_cluster_utils.replication_hops(names, "B"),
            )
            return found if found == (2, 1) else None

        wait_for("replication hops A=2, B=1 on C", hops, 60)
        assert {"heartbeats", "B.heartbeats", "B.A.heartbeats"} <= asyncio.run(list_topics(c))
        assert remote_cluster_utils.upstream_clusters(asyncio.run(list_topics(c))) >= {"A", "B"}
        time.sleep(3)  # two more refresh intervals: a loop would have created its topic by now
        for bootstrap, topics in expected.items():
            assert topics_named(bootstrap, prefix) == set(topics), "each record once per cluster, no loops"
            for topic, rows in topics.items():
                assert mirrored(bootstrap, topic, rows)
    print(f"\nA<->B plus B->C: every copy complete {took:.1f} s after start")


def test_aggregation_and_fan_out(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    cluster_c: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    clusters = {"A": cluster_a, "B": cluster_b, "C": cluster_c}
    a, b, c = (h.bootstrap_servers for h in clusters.values())
    prefix = unique("agg")
    ta, tb = f"{prefix}-a", f"{prefix}-b"
    asyncio.run(create_and_fill(a, ta, 2, 60, KEEP))
    asyncio.run(create_and_fill(b, tb, 3, 90, KEEP))
    from_a, from_b = source_rows(a, ta, 60), source_rows(b, tb, 90)
    path = topology_file(
        tmp_path / "mm2.properties",
        clusters,
        {
            "A->B.enabled": "true",
            "A->C.enabled": "true",
            "B->C.enabled": "true",
            "A->B.topics": ta,
            "A->C.topics": ta,
            "B->C.topics": tb,
            "emit.heartbeats.enabled": "false",
            "A->B.emit.heartbeats.enabled": "true",
            "A->C.emit.heartbeats.enabled": "true",
            "B->C.emit.heartbeats.enabled": "true",
            # A's heartbeats reach C through B only, as in the A->B->C test (which checks the hops).
            "A->C.heartbeats.replication.enabled": "false",
        },
    )
    process = mirror_maker(path, tmp_path / "node")
    with running(process):
        expected = {b: {tb: from_b, f"A.{ta}": from_a}, c: {f"A.{ta}": from_a, f"B.{tb}": from_b}}
        wait_all_mirrored(expected, 90)
        log = process.log_since_start()
        assert "Kafka MirrorMaker starting with 3 herders." in log
        for flow in ("A->B", "A->C", "B->C"):
            assert f"herder {flow}:" in log
        time.sleep(3)
        for bootstrap, topics in expected.items():
            assert topics_named(bootstrap, prefix) == set(topics)
        assert topics_named(a, prefix) == {ta}


# --------------------------------------------------------------------------------- mixed with Java


def start_java(java: JavaMirrorMaker, timeout: float = 120.0) -> str:
    """Start Java MirrorMaker and wait for this run's "started" line; return the internal REST URL it
    advertised (its log file is appended to across restarts)."""
    java.start()
    deadline = time.monotonic() + timeout
    while True:
        java.check_alive()
        text = java.log_since_start()
        found = re.search(r"Advertised URI: (\S+)", text)
        if "Kafka MirrorMaker started" in text and found:
            return found.group(1)
        assert time.monotonic() < deadline, f"Java MirrorMaker did not start; log tail:\n{java.log_tail()}"
        time.sleep(0.5)


@pytest.mark.long
@pytest.mark.java
def test_java_and_pyconnect_nodes_share_a_dedicated_cluster(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    """One Java MirrorMaker 4.3.1 and one pyconnect process with the same file form one group per flow.

    Whoever joins second is given MirrorSourceConnector by the incremental cooperative assignor (Java's
    and ours alike), so a topic created later makes a follower regenerate the task configs and hand them
    to the leader of the other implementation through its internal REST server: pyconnect to Java first,
    then, after the Java node restarted, Java to pyconnect.
    """
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("mixed")
    topic = f"{prefix}-t"
    asyncio.run(create_and_fill(a, topic, 4, 200, KEEP))
    path = shared_flow_file(tmp_path / "mm2.properties", a, b, prefix)
    java = JavaMirrorMaker(path, tmp_path / "java", die_with_parent=True)
    python = mirror_maker(path, tmp_path / "python")

    def source_connector_on(newcomer: str, leader: str) -> dict[str, tuple[list[str], list[str]]]:
        current, held = group_assignment(b, "A-mm2")
        if current != leader or set(held) != {leader, newcomer}:
            return {}
        return held if "MirrorSourceConnector" in held[newcomer][0] else {}

    try:
        java_url = start_java(java)
        wait_for("the Java node leading alone", lambda: alone(b, java_url), 60)
        python.start()
        python.wait_started()
        python_url = str(python.internal_rest_url)
        wait_mirrored(b, f"A.{topic}", source_rows(a, topic, 200), 90)
        held = wait_for(
            "MirrorSourceConnector on the pyconnect follower",
            lambda: source_connector_on(python_url, java_url),
            60,
        )
        print(f"\nJava leads: {held}")
        asyncio.run(create_and_fill(a, f"{prefix}-late1", 2, 40, KEEP))
        wait_mirrored(b, f"A.{prefix}-late1", source_rows(a, f"{prefix}-late1", 40), 60)
        assert '"POST /A/B/connectors/MirrorSourceConnector/tasks HTTP/1.1" 204' in java.log_file.read_text()

        java.stop(timeout=60)
        wait_for("the pyconnect node leading alone", lambda: alone(b, python_url), 60)
        java_url = start_java(java)
        held = wait_for(
            "MirrorSourceConnector on the Java follower",
            lambda: source_connector_on(java_url, python_url),
            60,
        )
        print(f"pyconnect leads: {held}")
        asyncio.run(create_and_fill(a, f"{prefix}-late2", 2, 40, KEEP))
        wait_mirrored(b, f"A.{prefix}-late2", source_rows(a, f"{prefix}-late2", 40), 60)
        wait_mirrored(b, f"A.{topic}", source_rows(a, topic, 200), 30)
    finally:
        python.stop(timeout=30)
        java.stop(timeout=60)
