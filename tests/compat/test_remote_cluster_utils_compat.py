"""Java's ``RemoteClusterUtils`` reads what our connectors write, and agrees with our client and CLI.

A pyconnect worker on B mirrors A -> B and checkpoints a group that committed part of a topic on A; a
heartbeat connector of flow B -> A writes into A's ``heartbeats``, which the mirror brings to B as
``A.heartbeats`` (how B learns that A is upstream). A small Java program (``java/TranslateOffsets.java``,
compiled at test time against the pinned Kafka jars) then calls ``translateOffsets``,
``replicationHops``, ``upstreamClusters``, ``checkpointTopics`` and ``heartbeatTopics`` on B. Its answers
must equal those of :class:`connectors.mirror.offsets.mirror_client.MirrorClient`, of the pure client logic
over the raw checkpoint records, and of the ``pyconnect offsets translate`` plan. The flow keeps its
offset syncs on B (``offset-syncs.topic.location=target``), so the plan made with A unreachable still
proves the re-read.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from connectors.mirror.offsets import remote_cluster_utils
from connectors.mirror.offsets.mirror_client import MirrorClient
from pyconnect.testing.backends import ClusterHandle
from pyconnect.testing.distribution import ensure_distribution, java_executable
from tests.integration.fleet import wait_for
from tests.integration.test_failover_cli import (
    bootstrap_args,
    cli,
    closed_port,
    consume_and_commit,
    running_mirror,
    source_columns,
    wait_checkpointed,
)

pytestmark = [pytest.mark.kafka, pytest.mark.java]

JAVA_SOURCE = Path(__file__).parent / "java" / "TranslateOffsets.java"
JAVA_TIMEOUT_MS = 30_000

Offsets = dict[tuple[str, int], tuple[int, str]]


@dataclass
class Facts:
    """What ``RemoteClusterUtils`` tells about cluster B."""

    hops: int = -1
    upstream: set[str] = field(default_factory=set)
    checkpoint_topics: set[str] = field(default_factory=set)
    heartbeat_topics: set[str] = field(default_factory=set)
    offsets: Offsets = field(default_factory=dict)


def compile_program(classes: Path) -> None:
    javac = shutil.which("javac")
    assert javac, "javac (JDK 17+) is needed on PATH to compile java/TranslateOffsets.java"
    dist = ensure_distribution()
    done = subprocess.run(
        [javac, "-cp", dist.classpath, "-d", str(classes), str(JAVA_SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def run_java(classes: Path, bootstrap: str, group: str, output: Path) -> Facts:
    dist = ensure_distribution()
    command = [
        java_executable(),
        "-Xmx256m",
        f"-Dlog4j2.configurationFile={dist.log4j2_config}",
        "-cp",
        f"{classes}{os.pathsep}{dist.classpath}",
        "TranslateOffsets",
        bootstrap,
        "A",
        group,
        str(JAVA_TIMEOUT_MS),
        str(output),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    facts = Facts()
    for line in output.read_text(encoding="utf-8").splitlines():
        kind, *fields = line.split("\t")
        if kind == "hops":
            facts.hops = int(fields[0])
        elif kind == "upstream":
            facts.upstream.add(fields[0])
        elif kind == "checkpointTopic":
            facts.checkpoint_topics.add(fields[0])
        elif kind == "heartbeatTopic":
            facts.heartbeat_topics.add(fields[0])
        else:
            topic, partition, offset, metadata = fields
            facts.offsets[(topic, int(partition))] = (int(offset), metadata)
    return facts


async def our_facts(bootstrap: str, group: str) -> tuple[Facts, Offsets]:
    """The same questions through our MirrorClient, and translateOffsets again through the pure logic
    over the raw records of the checkpoints topic."""
    async with MirrorClient({"bootstrap.servers": bootstrap}, alias="B") as mirror_client:
        offsets = await mirror_client.remote_consumer_offsets(group, "A")
        facts = Facts(
            await mirror_client.replication_hops("A"),
            await mirror_client.upstream_clusters(),
            await mirror_client.checkpoint_topics(),
            await mirror_client.heartbeat_topics(),
            {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in offsets.items()},
        )
        raw = await mirror_client.checkpoint_records("A")
    pure = remote_cluster_utils.translate_offsets(raw.records, group, "A")
    return facts, {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in pure.items()}


def test_java_remote_cluster_utils_reads_our_checkpoints(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path: Path
) -> None:
    classes = tmp_path / "classes"
    classes.mkdir()
    compile_program(classes)
    b = cluster_b.bootstrap_servers
    with running_mirror(
        cluster_a, cluster_b, tmp_path / "fleet", heartbeats_into_a=True, offset_syncs_location="target"
    ) as mirror:
        group = mirror.group("java")
        committed = {0: 60, 1: 70}
        asyncio.run(consume_and_commit(cluster_a.bootstrap_servers, group, mirror.topic, committed))
        wait_checkpointed(b, group, mirror.remote, committed, 60)

        def a_is_upstream() -> bool:
            async def hops() -> int:
                async with MirrorClient({"bootstrap.servers": b}, alias="B") as mirror_client:
                    return await mirror_client.replication_hops("A")

            return asyncio.run(hops()) == 1

        wait_for("A.heartbeats on B", a_is_upstream, 60)

        started = time.monotonic()
        java = run_java(classes, b, group, tmp_path / "java-facts.tsv")
        java_s = time.monotonic() - started
        ours, pure = asyncio.run(our_facts(b, group))
        plan = cli("--group", group, "--from", "A", "--to", "B", *bootstrap_args(mirror), "--export", "json")
        assert plan.returncode == 0, plan.stderr
        rows = json.loads(plan.stdout)
        # A down: with the offset syncs on B (location target) the re-read is still proven.
        dead_a = f"127.0.0.1:{closed_port()}"
        alone = cli(
            "--group", group, "--from", "A", "--to", "B", "--bootstrap", f"A={dead_a}", "--bootstrap", f"B={b}",
            "--offset-syncs-location", "target", "--export", "json",
        )  # fmt: skip
        assert alone.returncode == 0 and "cluster A is unreachable" in alone.stderr, alone.stderr
        assert "offset syncs" not in alone.stderr, alone.stderr
        from_b = json.loads(alone.stdout)

    expected = {(mirror.remote, p): (n, f"m{p}") for p, n in committed.items()}
    assert java.offsets == expected, java
    assert java == ours, (java, ours)
    assert pure == expected
    assert {
        (r["target_topic"], r["partition"]): (r["translated_offset"], r["metadata"]) for r in rows
    } == expected
    assert source_columns(from_b) == [(p, n, "checkpoint", n, 0) for p, n in committed.items()]
    assert all(r["max_reread"] is not None and r["max_reread"] >= 0 for r in from_b)
    assert java.hops == 1 and "A" in java.upstream
    assert "A.checkpoints.internal" in java.checkpoint_topics and "A.heartbeats" in java.heartbeat_topics
    print(f"\nJava RemoteClusterUtils answered in {java_s:.1f} s: {java}")
