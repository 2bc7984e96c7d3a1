"""``make chaos``: twenty groups and two share groups failed over off a killed cluster, pyconnect beside
Java MirrorMaker 2.

The long sibling of test_failover_command.py. Cluster A (this test's own, one broker, killed at the cut)
takes sequence-numbered records on three partitions while twenty groups read them there: sixteen classic
groups (aiokafka) and four consumer-protocol groups (Java's console consumer), each committing every
250 ms until it stops, the last one 1.2 s before the cut. Two flows copy the topic to B at once, both with
offset syncs on B:

* pyconnect (one worker, at-least-once, source alias ``A``: ``A.<topic>``);
* Java MirrorMaker 2 4.3.1 in dedicated mode (source alias ``J`` for the same cluster: ``J.<topic>``),
  checkpoints every second, no group offset sync, its worker flushing offsets every second.

Two share groups (KIP-932, Java's share consumer) read 3,000 records each on A and leave; a second
checkpoint connector of pyconnect's flow syncs them continuously to B (Java MirrorMaker syncs no share
group). Before the cut each one's position on B equals its position on A.

After the cut every group is moved three ways and measured by sequence numbers (the share groups the
first way only: re-reads and skips nothing, asserted):

* ``pyconnect failover execute --url`` over pyconnect's flow: re-reads and skips nothing (asserted);
* Java's answer, its latest checkpoint (``RemoteClusterUtils.translateOffsets``, what its group offset
  sync commits): measured and reported;
* ``pyconnect failover execute --config mm2.properties --flow J->B`` over Java's flow (its checkpoints
  and offset syncs): skips nothing (asserted), re-reads measured and reported.

Then A's broker starts again and the Spark translation audit of pyconnect's flow confirms the committed
group offsets on B: none past the first copy of its group's next record, none re-read.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.checkpoint_records import Checkpoint
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.java_reference import JavaMirrorMaker
from tests.integration.failover_drill import (
    ConsumerProtocolGroup,
    Measured,
    Traffic,
    committed,
    measure,
    read_all,
)
from tests.integration.fleet import create_topic, fleet, own_cluster, python_workers, wait_for
from tests.integration.group_sync_helpers import CONTINUOUS, group_clients, share_position
from tests.integration.mirror_helpers import SINGLE_BROKER_MM2, read_partition0
from tests.integration.test_failover_command import checkpoint_offsets, cli, connectors, running

pytestmark = [pytest.mark.kafka, pytest.mark.java]

PARTITIONS = 3
CLASSIC, CONSUMER, SHARE = 16, 4, 2
SHARE_READS = 3000
AUDIT_TIMEOUT_S = 600


def java_flow(a: str, b: str, topic: str, groups: str) -> dict[str, object]:
    """``mm2.properties`` of Java's flow ``J -> B`` (J is cluster A under another alias)."""
    return {
        "clusters": "J, B",
        "J.bootstrap.servers": a,
        "B.bootstrap.servers": b,
        "J->B.enabled": "true",
        "J->B.topics": topic,
        "J->B.groups": groups,
        "emit.heartbeats.enabled": "false",
        "offset-syncs.topic.location": "target",
        "emit.checkpoints.interval.seconds": 1,
        "refresh.groups.interval.seconds": 2,
        "refresh.topics.interval.seconds": 2,
        "sync.topic.acls.enabled": "false",
        "tasks.max": 2,
        "B.offset.flush.interval.ms": 1000,
        **SINGLE_BROKER_MM2,
    }


def share_sync(checkpoint: dict[str, str], groups: str) -> dict[str, str]:
    """A second checkpoint connector of the flow for its share groups alone, with the continuous sync
    (share groups have no checkpoints: the failover moves what the sync last set on B)."""
    return {**checkpoint, "groups": groups, "sync.group.offsets.enabled": "true", CONTINUOUS: "true"}


def share_on(b: str, group: str, topic: str) -> dict[int, int]:
    """Share group ``group``'s position on B in ``topic``, by partition."""
    return {p: o for (t, p), o in share_position(b, group).items() if t == topic}


def checkpointed_groups(b: str, checkpoints_topic: str) -> set[str]:
    """The groups with a checkpoint in ``checkpoints_topic`` on B."""
    return {
        Checkpoint.from_record(k, v).consumer_group_id
        for k, v in asyncio.run(read_partition0(b, checkpoints_topic))
    }


def drill(
    cluster_a: Any,
    topic: str,
    groups: list[str],
    traffic: Traffic,
    consoles: list[ConsumerProtocolGroup],
    checkpointed: Callable[[], bool],
    before_cut: Callable[[], None] = lambda: None,
) -> dict[str, dict[int, int]]:
    """Traffic and groups on A, the groups stopped one by one (the last 1.2 s before the cut; ``before_cut``
    runs before the first stops), A's broker killed: the groups' committed offsets on A at the cut."""
    a = cluster_a.bootstrap_servers
    try:
        traffic.start()
        for console in consoles:
            console.start()
        wait_for(
            "every group committing on A",
            lambda: all(asyncio.run(committed({"bootstrap.servers": a}, g, topic)) for g in groups),
            180,
            interval=1.0,
        )
        wait_for("checkpoints of every group on both flows", checkpointed, 240, interval=2.0)
        before_cut()
        stopped: dict[str, float] = {}
        for i, group in enumerate(groups[::-1]):
            by_name = {c.group: c for c in consoles}
            stopped[group] = by_name[group].stop() if group in by_name else traffic.stop_group(group)
            time.sleep(0.3 if i < len(groups) - 1 else 1.2)
        positions = {g: asyncio.run(committed({"bootstrap.servers": a}, g, topic)) for g in groups}
        traffic.stop()
        cluster_a.nodes[0].kill()
        cut = time.monotonic()
    finally:
        traffic.stop()
        for console in consoles:
            console.kill()
    assert not traffic.errors, traffic.errors
    assert all(cut - at >= 1.0 for at in stopped.values())
    return positions


def table(rows: list[tuple[str, str, Measured]]) -> str:
    lines = ["way group read re-read skipped duplicates"]
    lines += [f"{way} {group} {m.read} {m.reread} {m.skipped} {m.duplicates}" for way, group, m in rows]
    totals: dict[str, list[int]] = {}
    for way, _, m in rows:
        entry = totals.setdefault(way, [0, 0, 0])
        entry[0] += m.reread
        entry[1] += m.skipped
        entry[2] += int(m.reread > 0)
    lines += [
        f"total {way}: re-read {r}, skipped {s}, groups re-reading {g}" for way, (r, s, g) in totals.items()
    ]
    return "\n".join(lines)


@pytest.mark.long
def test_twenty_groups_fail_over_with_pyconnect_and_beside_java_mirror_maker(
    cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    with own_cluster(tmp_path / "kafka", "A", 1) as cluster_a:
        a = cluster_a.bootstrap_servers
        topic = unique("orders")
        asyncio.run(create_topic(a, topic, PARTITIONS))
        prefix = unique("app")
        classic = [f"{prefix}-classic-{i:02d}" for i in range(CLASSIC)]
        consumer = [f"{prefix}-consumer-{i}" for i in range(CONSUMER)]
        groups = classic + consumer
        shares = [f"{prefix}-share-{i}" for i in range(SHARE)]
        java_file = tmp_path / "java" / "mm2.properties"
        java = JavaMirrorMaker(
            java_flow(a, b, topic, f"{prefix}-.*"), tmp_path / "java", clusters=["B"], die_with_parent=True
        )
        workers = python_workers(b, tmp_path / "py", unique("py"), 1)
        traffic = Traffic({"bootstrap.servers": a}, topic, PARTITIONS, 40, classic)
        consoles = [ConsumerProtocolGroup(a, topic, g, tmp_path) for g in consumer]
        with fleet(workers):
            (worker,) = workers
            flow = connectors("A", a, b, topic, f"{prefix}-(classic|consumer)-.*", sync_groups=False)
            flow["mirror-share-sync"] = share_sync(flow["mirror-checkpoint"], f"{prefix}-share-.*")
            for name, config in flow.items():
                code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
                assert code == 201, body
            for name in ("mirror-source", "mirror-checkpoint"):
                wait_for(f"{name} RUNNING", functools.partial(running, worker, name), 60)
            java.start()
            readers = [
                group_clients("share", a, topic, g, str(SHARE_READS), "0", log_dir=tmp_path, name=g)
                for g in shares
            ]
            try:
                wanted = set(groups)
                for reader in readers:
                    reader.start()

                def checkpointed() -> bool:
                    return all(
                        wanted <= checkpointed_groups(b, f"{alias}.checkpoints.internal") for alias in "AJ"
                    ) and not any(r.running for r in readers)

                share_at: dict[str, dict[int, int]] = {}

                def before_cut() -> None:
                    # each share group's position on A (its readers left long before), as B got it
                    for g in shares:
                        share_at[g] = {p: o for (_, p), o in share_position(a, g).items()}
                        wait_for(
                            f"share group {g} synced to B",
                            lambda g=g: share_on(b, g, f"A.{topic}") == share_at[g],
                            30,
                            describe=lambda g=g: (share_on(b, g, f"A.{topic}"), share_at[g]),
                        )

                positions = drill(cluster_a, topic, groups, traffic, consoles, checkpointed, before_cut)
                time.sleep(3)
                group_args = [x for g in groups + shares for x in ("--group", g)]
                ours = cli(
                    "execute",
                    "--url",
                    worker.rest_url,
                    "--connector",
                    "mirror-checkpoint",
                    *group_args,
                    "--json",
                )
                assert ours.returncode == 0, ours.stderr
                java_args = [x for g in groups for x in ("--group", g)]  # Java syncs no share group
                plan_java = cli("plan", "--config", str(java_file), "--flow", "J->B", *java_args, "--json")
                assert plan_java.returncode == 0, plan_java.stderr
                over_java = cli("execute", "--config", str(java_file), "--flow", "J->B", *java_args, "--json")
                assert over_java.returncode == 0, over_java.stderr
            finally:
                java.stop()
                for reader in readers:
                    reader.kill()

        ours_records = asyncio.run(read_all({"bootstrap.servers": b}, f"A.{topic}", PARTITIONS))
        java_records = asyncio.run(read_all({"bootstrap.servers": b}, f"J.{topic}", PARTITIONS))
        java_plan = {g["group"]: g for g in json.loads(plan_java.stdout)["groups"]}
        rows: list[tuple[str, str, Measured]] = []
        for group in groups:
            on_b = functools.partial(committed, {"bootstrap.servers": b}, group)
            rows.append(
                (
                    "pyconnect",
                    group,
                    measure(group, positions[group], asyncio.run(on_b(f"A.{topic}")), ours_records),
                )
            )
            at_checkpoint = checkpoint_offsets(java_plan[group])
            rows.append(
                ("java-checkpoint", group, measure(group, positions[group], at_checkpoint, java_records))
            )
            rows.append(
                (
                    "failover-over-java",
                    group,
                    measure(group, positions[group], asyncio.run(on_b(f"J.{topic}")), java_records),
                )
            )
        moved = {g["group"]: g for g in json.loads(ours.stdout)["groups"]}
        for group in shares:
            assert moved[group]["target_protocol"] == "share" and moved[group]["status"] == "verified", moved[
                group
            ]
            on_b = share_on(b, group, f"A.{topic}")
            rows.append(("pyconnect", group, measure(group, share_at[group], on_b, ours_records)))
        print("\n" + table(rows))
        for way, group, m in rows:
            if way == "pyconnect":
                assert (m.reread, m.skipped) == (0, 0), (group, m)
            if way == "failover-over-java":
                assert m.skipped == 0, (group, m)

        cluster_a.nodes[0].start()
        audit = audit_translation(a, b, topic, groups)
        committed_checks = audit["committed_offsets"]
        print(f"audit of the committed offsets on B: {committed_checks['groups']}")
        assert committed_checks["violations"] == 0, committed_checks
        assert len(committed_checks["groups"]) == len(groups), committed_checks
        assert all(
            entry["reread"] == 0 and entry["skipped"] == 0 for entry in committed_checks["groups"].values()
        )


def audit_translation(a: str, b: str, topic: str, groups: list[str]) -> dict[str, Any]:
    args = ["--source-bootstrap", a, "--target-bootstrap", b, "--source-alias", "A", "--target-alias", "B"]
    args += ["--topic", topic, "--offset-syncs-location", "target", "--json"]
    args += [x for g in groups for x in ("--group", g)]
    done = subprocess.run(
        [sys.executable, "-m", "pyconnect", "audit", "translation", *args],
        capture_output=True,
        text=True,
        timeout=AUDIT_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    result: dict[str, Any] = json.loads(done.stdout)
    return result
