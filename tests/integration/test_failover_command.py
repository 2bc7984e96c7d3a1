"""``pyconnect failover`` on real Kafka: four groups moved to B after A is cut, nothing re-read or skipped.

Cluster A is this module's own (one broker, killed with SIGKILL at the cut); B is the session's cluster.
A topic of A takes sequence-numbered records (record ``n`` of a partition holds ``n``) while four groups
read it on A: two classic groups (aiokafka) and two consumer-protocol groups (KIP-848, Java's console
consumer), each committing every 250 ms until it stops, all at least a second before the cut. Two mirrors
copy the topic to B at once, with offset syncs on B (``offset-syncs.topic.location=target``, as the Red
Hat guide has it): an at-least-once fleet (source alias ``A``, DefaultReplicationPolicy, no group sync)
and an exactly-once fleet (``exactly.once.source.support=enabled``, source alias ``E``, group offsets
synced every second). Then A's broker is killed, and ``pyconnect failover execute --url ... --json
--state ...`` moves the four groups along each flow. Measured by sequence numbers (tests/integration/
failover_drill.py), every group resumes on B re-reading nothing and skipping nothing, on both flows, and
the report's expected counts say so; executing again commits nothing; an execute interrupted after
planning one group and committing another resumes from its state file while A is still dead. Bad input (an unknown group, a flow
without checkpoints, an active group) is a one-line error with its own exit code and commits nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer

from pyconnect.kafka.group_admin import CommittedOffset, GroupAdmin
from pyconnect.testing.backends import ClusterHandle
from tests.integration.failover_drill import (
    ConsumerProtocolGroup,
    Measured,
    Traffic,
    committed,
    measure,
    read_all,
)
from tests.integration.fleet import create_topic, fleet, own_cluster, python_workers, status, wait_for

pytestmark = pytest.mark.kafka

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
PARTITIONS = 3
CLI_TIMEOUT_S = 120


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyconnect", "failover", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def connectors(
    alias: str, a: str, b: str, topic: str, groups: str, *, sync_groups: bool
) -> dict[str, dict[str, str]]:
    """The flow ``alias -> B`` of ``topic``: a MirrorSourceConnector and a MirrorCheckpointConnector for
    ``groups`` (checkpoints every second, offset syncs on B)."""
    common = {
        "source.cluster.alias": alias,
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": b,
        "offset-syncs.topic.location": "target",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    }
    return {
        "mirror-source": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "tasks.max": "2",
            "topics": topic,
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "refresh.topics.interval.seconds": "2",
            "sync.topic.acls.enabled": "false",
            "consumer.isolation.level": "read_committed",
        },
        "mirror-checkpoint": {
            **common,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
            "tasks.max": "1",
            "groups": groups,
            "topics": topic,
            "emit.checkpoints.interval.seconds": "1",
            "refresh.groups.interval.seconds": "1",
            "sync.group.offsets.enabled": "true" if sync_groups else "false",
            "sync.group.offsets.interval.seconds": "1",
            "checkpoints.topic.replication.factor": "1",
        },
    }


def running(worker: Any, name: str) -> bool:
    """The connector RUNNING with its tasks (a checkpoint connector has none until groups exist)."""
    body = status(worker, name)
    if not body or body["connector"]["state"] != "RUNNING":
        return False
    return all(t["state"] == "RUNNING" for t in body["tasks"]) and (
        bool(body["tasks"]) or "checkpoint" in name
    )


def checkpoint_offsets(group_report: dict[str, Any]) -> dict[int, int]:
    """Where the group would resume at its checkpoints (Java's ``RemoteClusterUtils.translateOffsets``)."""
    return {
        p["partition"]: p["checkpoint"]["downstream"] for p in group_report["partitions"] if p["checkpoint"]
    }


def one_line_error(done: subprocess.CompletedProcess[str], code: int, starts: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code and len(lines) == 1 and lines[0].startswith(starts), (code, done)
    assert done.stdout == ""


async def hold_group(b: str, group: str, topic: str, until: threading.Event, joined: threading.Event) -> None:
    """A consumer of ``group`` on B (subscribed to ``topic``) until ``until`` is set."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=b, group_id=group, client_id="holder", enable_auto_commit=False
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + 60
        while not until.is_set() and time.monotonic() < deadline:
            await consumer.getmany(timeout_ms=200)
            if consumer.assignment():
                joined.set()
    finally:
        await consumer.stop()


def assert_bad_input_commits_nothing(
    worker: Any, b: str, topic: str, groups: list[str], tmp_path: Path
) -> None:
    """An unknown group, a flow without checkpoints, a group active on B: one line, its exit code, and no
    offset committed on B for any group."""
    url = ["--url", worker.rest_url, "--connector", "mirror-checkpoint"]
    one_line_error(
        cli("execute", *url, "--group", groups[0], "--group", "nobody"), 5, "pyconnect: unknown group nobody"
    )
    elsewhere = tmp_path / "elsewhere.json"
    code, config = worker.rest("GET", "/connectors/mirror-checkpoint/config")
    assert code == 200
    elsewhere.write_text(json.dumps({"name": "x", "config": {**config, "source.cluster.alias": "Nowhere"}}))
    one_line_error(
        cli("plan", "--connector-config", str(elsewhere), "--group", groups[0]),
        6,
        "pyconnect: flow Nowhere->B has no checkpoints yet",
    )
    until, joined = threading.Event(), threading.Event()
    holder = threading.Thread(
        target=lambda: asyncio.run(hold_group(b, groups[1], f"A.{topic}", until, joined))
    )
    holder.start()
    try:
        assert joined.wait(60), "the consumer on B never joined"
        refused = cli("execute", *url, *(x for g in groups for x in ("--group", g)))
        one_line_error(refused, 3, f"pyconnect: refusing to commit: group {groups[1]} is Stable")
        assert "holder@127.0.0.1" in refused.stderr, refused.stderr
    finally:
        until.set()
        holder.join(timeout=60)
    for group in groups:
        assert asyncio.run(committed({"bootstrap.servers": b}, group, f"A.{topic}")) == {}, group


@pytest.mark.long  # ~30 s; test_failover_cli.py plans, executes and resumes a failover in make test
def test_four_groups_fail_over_from_a_cut_cluster_rereading_and_skipping_nothing(
    cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    b = cluster_b.bootstrap_servers
    with own_cluster(tmp_path / "kafka", "A", 1) as cluster_a:
        a = cluster_a.bootstrap_servers
        topic = unique("orders")
        asyncio.run(create_topic(a, topic, PARTITIONS))
        prefix = unique("app")
        classic, consumer = (
            [f"{prefix}-classic-{i}" for i in (1, 2)],
            [f"{prefix}-consumer-{i}" for i in (1, 2)],
        )
        groups = classic + consumer
        at_least_once = python_workers(b, tmp_path / "alo", unique("alo"), 1)
        exactly_once = python_workers(
            b, tmp_path / "eos", unique("eos"), 1, **{"exactly.once.source.support": "enabled"}
        )
        flows = {"A": at_least_once[0], "E": exactly_once[0]}
        traffic = Traffic({"bootstrap.servers": a}, topic, PARTITIONS, 40, classic)
        java = [ConsumerProtocolGroup(a, topic, g, tmp_path) for g in consumer]
        with fleet(at_least_once + exactly_once):
            for alias, worker in flows.items():
                for name, config in connectors(
                    alias, a, b, topic, f"{prefix}-.*", sync_groups=alias == "E"
                ).items():
                    code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
                    assert code == 201, body
            for worker in flows.values():
                for name in ("mirror-source", "mirror-checkpoint"):
                    wait_for(f"{name} RUNNING", functools.partial(running, worker, name), 60)
            try:
                traffic.start()
                for group in java:
                    group.start()
                wait_for(
                    "every group committing on A",
                    lambda: all(asyncio.run(committed({"bootstrap.servers": a}, g, topic)) for g in groups),
                    120,
                    interval=1.0,
                )
                time.sleep(3)
                stopped = {consumer[1]: java[1].stop()}
                time.sleep(2)
                stopped[classic[1]] = traffic.stop_group(classic[1])
                time.sleep(2)
                stopped[consumer[0]] = java[0].stop()
                time.sleep(1)
                stopped[classic[0]] = traffic.stop_group(classic[0])
                time.sleep(1.3)
                positions = {g: asyncio.run(committed({"bootstrap.servers": a}, g, topic)) for g in groups}
                traffic.stop()
                cluster_a.nodes[0].kill()
                cut = time.monotonic()
            finally:
                traffic.stop()
                for group in java:
                    group.kill()
            assert not traffic.errors, traffic.errors
            ages = {g: cut - at for g, at in stopped.items()}
            assert all(age >= 1.0 for age in ages.values()), ages
            assert all(positions[g] and sum(positions[g].values()) > 0 for g in groups), positions
            time.sleep(2)  # the mirrors' next offset commit syncs the last records they copied

            assert_bad_input_commits_nothing(flows["A"], b, topic, groups, tmp_path)

            measured, at_checkpoint, reports = move_and_measure(flows, b, topic, groups, positions, tmp_path)

    check_moves(measured, at_checkpoint, reports, ages)


Moves = dict[str, dict[str, Measured]]


def move_and_measure(
    flows: dict[str, Any],
    b: str,
    topic: str,
    groups: list[str],
    positions: dict[str, dict[int, int]],
    tmp_path: Path,
) -> tuple[Moves, Moves, dict[str, dict[str, Any]]]:
    """``pyconnect failover execute`` of every group along each flow (then once more: nothing committed),
    and what the groups read on B from there and from their checkpoints (the reports by flow)."""
    measured: Moves = {}
    at_checkpoint: Moves = {}
    reports: dict[str, dict[str, Any]] = {}
    for alias, worker in flows.items():
        args = ["--url", worker.rest_url, "--connector", "mirror-checkpoint"]
        args += [x for g in groups for x in ("--group", g)]
        state = tmp_path / f"state-{alias}.json"
        done = cli("execute", *args, "--json", "--state", str(state))
        assert done.returncode == 0, done.stderr
        reports[alias] = json.loads(done.stdout)
        remote = f"{alias}.{topic}"
        records = asyncio.run(read_all({"bootstrap.servers": b}, remote, PARTITIONS))
        measured[alias] = {
            g: measure(g, positions[g], asyncio.run(committed({"bootstrap.servers": b}, g, remote)), records)
            for g in groups
        }
        at_checkpoint[alias] = {
            g["group"]: measure(g["group"], positions[g["group"]], checkpoint_offsets(g), records)
            for g in reports[alias]["groups"]
        }
        again = cli("execute", *args, "--json")
        assert again.returncode == 0, again.stderr
        assert [g["committed"] for g in json.loads(again.stdout)["groups"]] == [0] * len(groups)
        if alias == "A":
            resume_an_interrupted_execute(args, state, b, groups)
    return measured, at_checkpoint, reports


def resume_an_interrupted_execute(args: list[str], state: Path, b: str, groups: list[str]) -> None:
    """An execute stopped after planning the first group and committing the second (its state file says
    so, and the first group's offsets on B are back at 0) is resumed with ``--state`` while the source is
    still dead: the first group gets the offsets the file holds, the second is read back, the rest are
    left as verified; B then holds every group's planned offsets."""
    document = json.loads(state.read_text())
    first, second = groups[0], groups[1]
    document["groups"][first]["status"] = "planned"
    document["groups"][second]["status"] = "committed"
    state.write_text(json.dumps(document))
    planned = {
        g: {(t, int(p)): o for key, o in entry["targets"].items() for t, _, p in [key.rpartition(":")]}
        for g, entry in document["groups"].items()
    }
    asyncio.run(rewind(b, first, {tp: 0 for tp in planned[first]}))
    # (the groups may hold offsets of the other flow's remote topic too: only this flow's are compared)
    assert all(o == 0 for tp, o in asyncio.run(committed_all(b, first)).items() if tp in planned[first])
    resumed = cli("execute", *args, "--json", "--state", str(state))
    assert resumed.returncode == 0, resumed.stderr
    report = {g["group"]: g for g in json.loads(resumed.stdout)["groups"]}
    assert report[first]["committed"] == len(planned[first]) and report[first]["status"] == "verified", report
    assert report[second]["committed"] == 0 and report[second]["status"] == "verified", report
    assert all(report[g]["committed"] == 0 for g in groups[2:]), report
    for group in groups:
        on_b = asyncio.run(committed_all(b, group))
        assert {tp: o for tp, o in on_b.items() if tp in planned[group]} == planned[group], (group, on_b)
    assert {e["status"] for e in json.loads(state.read_text())["groups"].values()} == {"verified"}
    print(f"\nresumed execute: {first} committed again from the state file, {second} read back, source dead")


async def rewind(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``offsets`` for the (member-less) ``group`` as an admin, as ``kafka-consumer-groups
    --reset-offsets`` does."""
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        errors = await admin.alter_offsets(group, {tp: CommittedOffset(o) for tp, o in offsets.items()})
    finally:
        await admin.close()
    assert not errors, errors


async def committed_all(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    admin = GroupAdmin({"bootstrap.servers": bootstrap})
    try:
        found = await admin.committed_offsets(group)
    finally:
        await admin.close()
    return {tp: c.offset for tp, c in found.items()}


def check_moves(
    measured: Moves, at_checkpoint: Moves, reports: dict[str, dict[str, Any]], ages: dict[str, float]
) -> None:
    """Print the moves, then: every group re-reads and skips nothing, as its report says."""
    table = [
        (
            alias,
            g.rsplit("-", 2)[-2] + "-" + g.rsplit("-", 1)[-1],
            m.read,
            m.reread,
            m.skipped,
            m.duplicates,
            at_checkpoint[alias][g].reread,
            "/".join(
                sorted(
                    {p["basis"] for r in reports[alias]["groups"] if r["group"] == g for p in r["partitions"]}
                )
            ),
            round(ages[g], 1),
        )
        for alias, by_group in measured.items()
        for g, m in by_group.items()
    ]
    print("\nflow group read re-read skipped duplicates re-read-at-checkpoint basis commit-age-s")
    for row in table:
        print(" ".join(str(c) for c in row))
    for alias, by_group in measured.items():
        report = {g["group"]: g for g in reports[alias]["groups"]}
        assert reports[alias]["source_reachable"] is False
        for g, m in by_group.items():
            assert (m.reread, m.skipped) == (0, 0), (alias, m, report[g])
            assert (report[g]["expected_reread"], report[g]["expected_skipped"]) == (0, 0), (alias, report[g])
            assert report[g]["status"] == "verified"
            assert m.read > 0, (alias, m)
