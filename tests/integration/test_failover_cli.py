"""``pyconnect offsets translate`` on real Kafka: the failover of a consumer group from A to B.

One pyconnect worker whose Connect group lives on B mirrors A -> B (MirrorSource) and checkpoints the
groups ``<prefix>-g*`` (MirrorCheckpoint, group offset sync off: the CLI is what commits). Checked:

* the plan of a group that consumed part of a topic on A and committed, whose last checkpoint is older
  than its last commit (the checkpoint connector paused meanwhile, as when A dies between two checkpoint
  intervals): text, JSON and CSV agree; the re-read is what the offset syncs prove; ``--execute``
  commits the translated offsets; a consumer of the group on B then reads, together with what the group
  read on A, every record, and re-reads exactly the promised number;
* ``--execute`` refuses (exit code 3, nothing committed) while a consumer of the group is active on B,
  and succeeds once it left;
* checkpoints advance while the source group commits and stop when it stops committing;
* with A unreachable the plan still comes from the checkpoints, and errors are one-line messages.
"""

from __future__ import annotations

import asyncio
import csv
import functools
import io
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import GroupCoordinatorNotAvailableError
from aiokafka.structs import OffsetAndMetadata

from connectors.mirror.checkpoint_records import Checkpoint
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import Worker, fleet, python_workers, running_tasks, status, wait_for
from tests.integration.mirror_helpers import CHECKPOINTS_TOPIC, group_checkpoints, read_as_group
from tests.integration.test_mirror_checkpoint import flow, group_offsets
from tests.integration.test_mirror_source import (
    Row,
    create_and_fill,
    mirror_config,
    read_offset_syncs,
    source_rows,
    wait_mirrored,
)

pytestmark = pytest.mark.kafka

RECORDS = 200
PARTITIONS = 2
CLI_TIMEOUT_S = 120


@dataclass
class MirrorFlow:
    """A running A -> B mirror with checkpoints for the groups ``<prefix>-g*``."""

    a: ClusterHandle
    b: ClusterHandle
    prefix: str
    topic: str
    remote: str
    rows: dict[int, list[Row]]
    worker: Worker

    def group(self, name: str) -> str:
        return f"{self.prefix}-g{name}-{uuid.uuid4().hex[:6]}"


@contextmanager
def running_mirror(
    a: ClusterHandle,
    b: ClusterHandle,
    base: Path,
    *,
    heartbeats_into_a: bool = False,
    offset_syncs_location: str = "source",
) -> Iterator[MirrorFlow]:
    """Fill ``<prefix>-t`` on A, mirror it to B and run the checkpoint connector (interval 1 s).

    ``heartbeats_into_a`` adds a heartbeat connector of flow B -> A whose records go to A's
    ``heartbeats`` (producer override), so that A's heartbeats reach B as ``A.heartbeats``: what lets
    ``RemoteClusterUtils`` on B see A upstream. ``offset_syncs_location`` is the flow's
    ``offset-syncs.topic.location``.
    """
    location = {"offset-syncs.topic.location": offset_syncs_location}
    prefix = f"fo{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}-t"
    # The records carry 2023 timestamps: without retention.ms=-1 the broker's retention check (every
    # 5 min) deletes them under the test's feet, on A and (config sync) on B.
    asyncio.run(create_and_fill(a.bootstrap_servers, topic, PARTITIONS, RECORDS, {"retention.ms": "-1"}))
    rows = source_rows(a.bootstrap_servers, topic, RECORDS)
    workers = python_workers(b.bootstrap_servers, base, f"{prefix}-worker", 1)
    with fleet(workers) as (worker,):
        connectors: dict[str, dict[str, str]] = {}
        if heartbeats_into_a:
            connectors["heartbeats-into-a"] = {
                **flow(a, b, "MirrorHeartbeatConnector"),
                "source.cluster.alias": "B",
                "target.cluster.alias": "A",
                "source.cluster.bootstrap.servers": b.bootstrap_servers,
                "target.cluster.bootstrap.servers": a.bootstrap_servers,
                "producer.override.bootstrap.servers": a.bootstrap_servers,
                "emit.heartbeats.interval.seconds": "1",
                "heartbeats.topic.replication.factor": "1",
            }
        # offset.lag.max=50 keeps the triggered offset syncs under the writer's in-flight limit.
        connectors["mirror-source"] = mirror_config(
            a, b, f"{prefix}-.*", **{"tasks.max": "1", "offset.lag.max": "50"}, **location
        )
        for name, config in connectors.items():
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        wait_mirrored(b.bootstrap_servers, f"A.{topic}", rows, 90)
        checkpoint = flow(
            a,
            b,
            "MirrorCheckpointConnector",
            groups=f"{prefix}-g.*",
            topics=f"{prefix}-.*",
            **{
                "emit.checkpoints.interval.seconds": "1",
                "refresh.groups.interval.seconds": "2",
                "checkpoints.topic.replication.factor": "1",
                **location,
            },
        )
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-checkpoint", "config": checkpoint})
        assert code == 201, body
        for name in connectors:
            wait_for(f"{name} RUNNING", functools.partial(running_tasks, worker, name, 1), 60)
        wait_for(
            "mirror-checkpoint RUNNING",
            lambda: (s := status(worker, "mirror-checkpoint")) and s["connector"]["state"] == "RUNNING",
            60,
        )
        yield MirrorFlow(a, b, prefix, topic, f"A.{topic}", rows, worker)


@pytest.fixture(scope="module")
def mirror(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MirrorFlow]:
    with running_mirror(cluster_a, cluster_b, tmp_path_factory.mktemp("failover")) as running:
        yield running


# -- helpers -----------------------------------------------------------------------------------------------


async def committed_offsets(bootstrap: str, group: str) -> dict[tuple[str, int], tuple[int, str]]:
    """The group's committed offsets; a coordinator still loading (fresh cluster) is waited for."""
    for attempt in range(20):
        try:
            return await group_offsets(bootstrap, group)
        except GroupCoordinatorNotAvailableError:
            if attempt == 19:
                raise
            await asyncio.sleep(0.5)
    raise AssertionError("unreachable")


async def consume_and_commit(bootstrap: str, group: str, topic: str, until: dict[int, int]) -> list[int]:
    """The group reads each partition of ``topic`` on A from its committed offset (or the beginning) up
    to ``until[p]`` and commits there (metadata ``m<p>``); returns the timestamps of the records it read
    (the records' identities). Reading needs no group; the commit is a member-less OffsetCommit."""
    start = {
        p: offset for (t, p), (offset, _) in (await committed_offsets(bootstrap, group)).items() if t == topic
    }
    reader = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await reader.start()
    read: list[int] = []
    try:
        partitions = [TopicPartition(topic, p) for p in until]
        reader.assign(partitions)
        for tp in partitions:
            reader.seek(tp, start.get(tp.partition, 0))
        position = {p: start.get(p, 0) for p in until}
        deadline = time.monotonic() + 30
        while any(position[p] < n for p, n in until.items()) and time.monotonic() < deadline:
            for tp, messages in (await reader.getmany(timeout_ms=500)).items():
                for m in messages:
                    if m.offset < until[tp.partition]:
                        read.append(m.timestamp)
                    position[tp.partition] = m.offset + 1
        assert all(position[p] >= n for p, n in until.items()), position
    finally:
        await reader.stop()
    committer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await committer.start()
    try:
        committer.assign([TopicPartition(topic, p) for p in until])
        await committer.commit(
            {TopicPartition(topic, p): OffsetAndMetadata(n, f"m{p}") for p, n in until.items()}
        )
    finally:
        await committer.stop()
    assert {
        p: offset for (t, p), (offset, _) in (await committed_offsets(bootstrap, group)).items() if t == topic
    } == {**start, **until}
    return read


def wait_checkpointed(
    b: str, group: str, remote: str, upstream: dict[int, int], timeout: float
) -> dict[int, Checkpoint]:
    """The latest checkpoint per partition once every partition's upstream offset is ``upstream[p]``."""

    def probe() -> dict[int, Checkpoint] | None:
        latest = {c.partition: c for c in group_checkpoints(b, group) if c.topic == remote}
        if all(p in latest and latest[p].upstream_offset == n for p, n in upstream.items()):
            return latest
        return None

    return wait_for(f"checkpoints of {group} at {upstream}", probe, timeout)


def cli(*args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyconnect", "offsets", "translate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def bootstrap_args(m: MirrorFlow) -> list[str]:
    return ["--bootstrap", f"A={m.a.bootstrap_servers}", "--bootstrap", f"B={m.b.bootstrap_servers}"]


def export_json(*args: str) -> list[dict[str, Any]]:
    done = cli(*args, "--export", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert isinstance(rows, list)
    return rows


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def source_columns(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Per exported plan row: partition, source offset and where it came from, translated offset and
    expected re-read."""
    return [
        (
            r["partition"],
            r["source_offset"],
            r["source_offset_from"],
            r["translated_offset"],
            r["expected_reread"],
        )
        for r in rows
    ]


# -- tests -------------------------------------------------------------------------------------------------


def test_plan_export_execute_and_resume_without_loss(mirror: MirrorFlow, tmp_path: Path) -> None:
    a, b = mirror.a.bootstrap_servers, mirror.b.bootstrap_servers
    group = mirror.group("resume")
    first, last = {0: 60, 1: 70}, {0: 90, 1: 85}
    read_on_a = asyncio.run(consume_and_commit(a, group, mirror.topic, first))
    checkpoints = wait_checkpointed(b, group, mirror.remote, first, 60)
    assert {p: c.downstream_offset for p, c in checkpoints.items()} == first, (
        "a contiguous copy keeps offsets"
    )

    # A dies between two checkpoint intervals: the group's last commits on A never get a checkpoint.
    code, body = mirror.worker.rest("PUT", "/connectors/mirror-checkpoint/pause")
    assert code == 202, body
    try:
        wait_for(
            "mirror-checkpoint PAUSED",
            lambda: (
                (s := status(mirror.worker, "mirror-checkpoint"))
                and {t["state"] for t in s["tasks"]} == {"PAUSED"}
            ),
            30,
        )
        read_on_a += asyncio.run(consume_and_commit(a, group, mirror.topic, last))
        assert {c.partition: c.upstream_offset for c in group_checkpoints(b, group)} == first

        config = tmp_path / "mm2.properties"
        config.write_text(
            f"clusters = A, B\nA.bootstrap.servers = {a}\nB.bootstrap.servers = {b}\nA->B.enabled = true\n"
        )
        started = time.monotonic()
        text = cli("--group", group, "--from", "A", "--to", "B", "--config", str(config))
        plan_s = time.monotonic() - started
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert lines[0].startswith(f"Failover plan for group {group}: A -> B"), text.stdout
        table = {tuple(line.split()[:2]): line.split() for line in lines if line.startswith(mirror.topic)}
        assert set(table) == {(mirror.topic, "0"), (mirror.topic, "1")}, text.stdout
        # The bound that needs no contiguity proof: up to the copy of the nearest offset sync at or above
        # the source position.
        syncs = asyncio.run(read_offset_syncs(a, {mirror.topic}))
        bound = {
            p: min(
                (s for s in syncs if s.partition == p and s.upstream_offset >= n),
                key=lambda s: s.upstream_offset,
            )
            for p, n in last.items()
        }
        max_reread = {p: bound[p].downstream_offset - first[p] for p in last}
        for p in (0, 1):
            assert max_reread[p] >= last[p] - first[p]
            # TOPIC PARTITION TARGET SOURCE TRANSLATED ON-B RE-READ MAX ACTION
            assert table[(mirror.topic, str(p))][2:] == [
                mirror.remote,
                str(last[p]),
                str(first[p]),
                "-",
                str(last[p] - first[p]),
                str(max_reread[p]),
                "commit",
            ], text.stdout
        reread = sum(last[p] - first[p] for p in last)
        assert f"Expected re-read: {reread} records" in text.stdout

        rows = export_json("--group", group, "--from", "A", "--to", "B", "--config", str(config))
        assert [(r["topic"], r["partition"]) for r in rows] == [(mirror.topic, 0), (mirror.topic, 1)]
        for r in rows:
            p = r["partition"]
            assert r == {
                "group": group,
                "source_cluster": "A",
                "target_cluster": "B",
                "topic": mirror.topic,
                "partition": p,
                "target_topic": mirror.remote,
                "source_offset": last[p],
                "source_offset_from": "source",
                "checkpoint_upstream_offset": first[p],
                "translated_offset": first[p],
                "target_committed_offset": None,
                "expected_reread": last[p] - first[p],
                "max_reread": max_reread[p],
                "action": "commit",
                "metadata": f"m{p}",
            }
        exported = cli(
            "--group", group, "--from", "A", "--to", "B", *bootstrap_args(mirror), "--export", "csv"
        )
        assert exported.returncode == 0, exported.stderr
        as_csv = list(csv.DictReader(io.StringIO(exported.stdout)))
        assert as_csv == [{k: "" if v is None else str(v) for k, v in r.items()} for r in rows]

        committed = cli("--group", group, "--from", "A", "--to", "B", "--config", str(config), "--execute")
        assert committed.returncode == 0, committed.stderr
        assert f"Committed 2 offsets of group {group} on cluster B" in committed.stdout
        on_b = asyncio.run(committed_offsets(b, group))
        assert on_b == {(mirror.remote, p): (first[p], f"m{p}") for p in first}
        again = export_json("--group", group, "--from", "A", "--to", "B", *bootstrap_args(mirror))
        assert [(r["target_committed_offset"], r["action"]) for r in again] == [(60, "keep"), (70, "keep")]
    finally:
        code, body = mirror.worker.rest("PUT", "/connectors/mirror-checkpoint/resume")
        assert code == 202, body

    # The consumer continues on B: with what it read on A it sees every record, and re-reads exactly the
    # promised number of them.
    remaining = sum(len(mirror.rows[p]) - first[p] for p in first)
    seen = asyncio.run(
        read_as_group(b, group, mirror.remote, remaining, field="timestamp", timeout_s=45, quiet_polls=3)
    )
    read_on_b = [ts for values in seen.values() for ts in values]
    everything = {row[5] for rows in mirror.rows.values() for row in rows}
    assert len(read_on_b) == remaining and len(set(read_on_b)) == remaining
    assert set(read_on_a) | set(read_on_b) == everything, "records lost in the failover"
    assert len(set(read_on_a) & set(read_on_b)) == reread == sum(r["expected_reread"] for r in rows)
    print(f"\nplan in {plan_s:.1f} s; resumed {len(read_on_b)} records on B, {reread} re-read as planned")


def test_execute_refuses_while_the_group_is_active_on_b(mirror: MirrorFlow) -> None:
    a, b = mirror.a.bootstrap_servers, mirror.b.bootstrap_servers
    group = mirror.group("active")
    asyncio.run(consume_and_commit(a, group, mirror.topic, {0: 40, 1: 40}))
    wait_checkpointed(b, group, mirror.remote, {0: 40, 1: 40}, 60)
    args = ["--group", group, "--from", "A", "--to", "B", *bootstrap_args(mirror), "--execute"]

    async def while_active() -> subprocess.CompletedProcess[str]:
        consumer = AIOKafkaConsumer(
            mirror.remote,
            bootstrap_servers=b,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="latest",
            session_timeout_ms=10000,
            heartbeat_interval_ms=1000,
        )
        await consumer.start()
        try:
            deadline = time.monotonic() + 30
            while not consumer.assignment() and time.monotonic() < deadline:
                await consumer.getmany(timeout_ms=500)
            assert consumer.assignment(), "the consumer never joined"
            cli_task = asyncio.create_task(asyncio.to_thread(cli, *args))
            while not cli_task.done():
                await consumer.getmany(timeout_ms=200)
            return await cli_task
        finally:
            await consumer.stop()

    refused = asyncio.run(while_active())
    assert refused.returncode == 3, (refused.stdout, refused.stderr)
    message = refused.stderr.strip().splitlines()
    assert len(message) == 1 and message[0].startswith("pyconnect: refusing to commit: group"), refused.stderr
    assert "Stable" in message[0]
    assert asyncio.run(committed_offsets(b, group)) == {}, "nothing may be committed for an active group"

    # Once the consumer left (group Empty), the same command commits; with --export the summary goes to
    # stderr and stdout holds the rows only.
    done = cli(*args, "--export", "json")
    assert done.returncode == 0, done.stderr
    assert [r["action"] for r in json.loads(done.stdout)] == ["commit", "commit"]
    assert f"Committed 2 offsets of group {group} on cluster B" in done.stderr
    assert asyncio.run(committed_offsets(b, group)) == {(mirror.remote, p): (40, f"m{p}") for p in (0, 1)}


def test_checkpoints_advance_while_the_group_commits_and_stop_after(mirror: MirrorFlow) -> None:
    a, b = mirror.a.bootstrap_servers, mirror.b.bootstrap_servers
    group = mirror.group("advance")
    steps = [10, 35, 60, 95]
    observed = []
    for step in steps:
        asyncio.run(consume_and_commit(a, group, mirror.topic, {0: step}))
        latest = wait_checkpointed(b, group, mirror.remote, {0: step}, 60 if step == steps[0] else 20)
        observed.append(latest[0].downstream_offset)
    assert observed == steps, "each commit on A becomes a checkpoint at its exact position"
    records = group_checkpoints(b, group)
    downstream = [c.downstream_offset for c in records if c.partition == 0]
    assert downstream == sorted(set(downstream)), f"checkpoints only move forward: {downstream}"

    # The group stops committing: several emit intervals (1 s) later nothing new was checkpointed.
    time.sleep(6)
    assert group_checkpoints(b, group) == records
    print(f"\ncheckpoints followed {len(steps)} commits: {observed}; none for 6 s after the last")


def test_plan_from_checkpoints_alone_and_one_line_errors(mirror: MirrorFlow, tmp_path: Path) -> None:
    a, b = mirror.a.bootstrap_servers, mirror.b.bootstrap_servers
    group = mirror.group("down")
    asyncio.run(consume_and_commit(a, group, mirror.topic, {0: 30, 1: 20}))
    wait_checkpointed(b, group, mirror.remote, {0: 30, 1: 20}, 60)

    # A is down (nothing listens at its address): the plan comes from the checkpoints alone.
    dead_a = f"127.0.0.1:{closed_port()}"
    args = [
        "--group",
        group,
        "--from",
        "A",
        "--to",
        "B",
        "--bootstrap",
        f"A={dead_a}",
        "--bootstrap",
        f"B={b}",
    ]
    done = cli(*args, "--export", "json")
    assert done.returncode == 0, done.stderr
    assert "Note: cluster A is unreachable" in done.stderr
    rows = json.loads(done.stdout)
    assert source_columns(rows) == [(0, 30, "checkpoint", 30, None), (1, 20, "checkpoint", 20, None)]
    text = cli(*args)
    assert text.returncode == 0 and "Expected re-read: unknown" in text.stdout, text.stdout
    only_b = cli("--group", group, "--from", "A", "--to", "B", "--bootstrap", f"B={b}", "--export", "csv")
    assert only_b.returncode == 0 and "cluster A is not configured" in only_b.stderr
    assert len(list(csv.DictReader(io.StringIO(only_b.stdout)))) == 2

    config = tmp_path / "mm2.properties"
    config.write_text(f"clusters = A, B\nA.bootstrap.servers = {a}\nB.bootstrap.servers = {b}\n")
    failures = {
        "unknown alias": (
            cli("--group", group, "--from", "X", "--to", "B", "--config", str(config)),
            "pyconnect: unknown cluster alias X (--from)",
        ),
        "unknown alias in --bootstrap": (
            cli(
                "--group", group, "--from", "A", "--to", "B", "--bootstrap", f"B={b}", "--bootstrap", f"C={a}"
            ),
            "pyconnect: unknown cluster alias C in --bootstrap",
        ),
        "no checkpoints": (
            cli("--group", f"{mirror.prefix}-nobody", "--from", "A", "--to", "B", "--bootstrap", f"B={b}"),
            f"pyconnect: no checkpoints for group {mirror.prefix}-nobody in {CHECKPOINTS_TOPIC} on cluster B",
        ),
        # A flow no test runs (another module's B->A mirror leaves B.checkpoints.internal on A).
        "no checkpoints topic": (
            cli("--group", group, "--from", "Nowhere", "--to", "A", "--bootstrap", f"A={a}"),
            "pyconnect: no checkpoints topic Nowhere.checkpoints.internal on cluster A",
        ),
        "B unreachable": (
            cli(
                "--group", group, "--from", "A", "--to", "B", "--bootstrap", f"B={dead_a}", "--timeout", "10"
            ),
            "pyconnect: cannot reach cluster B",
        ),
    }
    for what, (result, expected) in failures.items():
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith(expected), (what, result)
        assert result.stdout == "", what
