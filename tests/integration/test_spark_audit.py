"""Spark audits of a live A -> B mirror on real Kafka: clean when the mirror is right, loud when it is not.

A pyconnect worker of cluster B runs MirrorSourceConnector and, once the copy and its offset syncs are
complete, MirrorCheckpointConnector (Java's translation mode, so the checkpoints re-read something) for
one topic; a group has committed part of it on A. Once the checkpoints are complete the worker stops
and Spark audits both: replication finds every record once and intact; translation finds no violation,
every offset sync a true copy, and for each partition the re-read count the OffsetSyncStore fed with
the same syncs promises. Then a record written to the remote topic by hand and a forged checkpoint that skips records
must be caught, through ``pyconnect audit replication|translation --json`` (exit code 1).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.translation import OffsetSyncStore, Translation
from pyconnect.cli import main
from pyconnect.testing.backends import ClusterHandle
from spark_analytics.kafka_frames import KafkaCluster
from spark_analytics.replication_audit import run_replication_audit
from spark_analytics.session import local_spark
from spark_analytics.translation_audit import SYNC_OK, SYNC_VIOLATION, run_translation_audit
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.mirror_helpers import CHECKPOINTS_TOPIC, group_checkpoints
from tests.integration.test_mirror_checkpoint import COMMITTED, commit_group, quick_checkpoints
from tests.integration.test_mirror_source import (
    OFFSET_SYNCS_TOPIC,
    create_and_fill,
    mirror_config,
    read_offset_syncs,
    source_rows,
    wait_mirrored,
)

pytestmark = pytest.mark.kafka

RECORDS = 200


def promises(bootstrap_a: str, topic: str) -> tuple[dict[int, Translation], int] | None:
    """What an OffsetSyncStore (Java mode) fed with the offset syncs on A translates COMMITTED to."""
    syncs = asyncio.run(read_offset_syncs(bootstrap_a, {topic}))
    store = OffsetSyncStore("java")
    store.start(must_read_to_end=False)
    store.handle_syncs(syncs)
    store.mark_read_to_end()
    found = {p: store.translate((topic, p), n) for p, n in COMMITTED.items()}
    if any(t is None for t in found.values()):
        return None
    return {p: t for p, t in found.items() if t is not None}, len(syncs)


async def create_and_fill_now(bootstrap: str, topic: str, partitions: int, count: int) -> None:
    """Like ``create_and_fill`` (keys, null keys and values, repeated headers), but stamped with the
    current time: the brokers' time-based retention would delete records stamped years ago."""
    await create_and_fill(bootstrap, topic, partitions, 0)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        now_ms = int(time.time() * 1000)
        for i in range(count):
            key = None if i % 7 == 3 else f"k{i}".encode()
            value = None if i % 11 == 5 and key is not None else f"v{i}".encode() * (1 + i % 3)
            headers = [("h", f"x{i}".encode()), ("h", b"\x00\xff"), ("n", str(i).encode())][: i % 4]
            await producer.send(
                topic, value, key=key, partition=i % partitions, timestamp_ms=now_ms + i, headers=headers
            )
        await producer.flush()
    finally:
        await producer.stop()


async def produce_raw(bootstrap: str, topic: str, key: bytes, value: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key, partition=0)
    finally:
        await producer.stop()


@pytest.mark.long  # make chaos; make test keeps test_spark_audit_sources.py and test_spark_audit_cluster.py
def test_audits_pass_on_a_faithful_mirror_and_catch_perturbations(
    cluster_a: ClusterHandle,
    cluster_b: ClusterHandle,
    unique: Callable[[str], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = unique("audit")
    topic, remote, group = f"{prefix}-t", f"A.{prefix}-t", unique("audit-group")
    asyncio.run(create_and_fill_now(a, topic, 2, RECORDS))
    expected = source_rows(a, topic, RECORDS)
    asyncio.run(commit_group(a, group, topic))

    started = time.monotonic()
    with fleet(python_workers(b, tmp_path, unique("audit-worker"), 1)) as (worker,):
        source_config = mirror_config(cluster_a, cluster_b, f"{prefix}-.*", **{"tasks.max": "1"})
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-source", "config": source_config})
        assert code == 201, body
        wait_mirrored(b, remote, expected, 90)
        wait_for("mirror-source RUNNING", functools.partial(running_tasks, worker, "mirror-source", 1), 60)
        last = {p: rows[-1][1] for p, rows in expected.items()}

        def synced() -> bool:
            """The offset syncs on A reach the last record of each partition: no sync comes after."""
            syncs = asyncio.run(read_offset_syncs(a, {topic}))
            return last == {
                p: max((s.upstream_offset for s in syncs if s.partition == p), default=-1) for p in last
            }

        wait_for("offset syncs of the last records", synced, 60)
        # Only now the checkpoints: its task reads every sync before its first translation. Started
        # earlier, a round between two syncs can checkpoint above the final promise, for good: Java's
        # translation of an offset falls when a later sync thins the older ones out of the store
        # (e.g. syncs every 11 records: 60 -> 56 while the newest sync is 55 or 66, 45 from 77 on), and a
        # checkpoint is only emitted when it moves forward (Java's checkpointIsMoreRecent).
        checkpoint_config = quick_checkpoints(
            cluster_a, cluster_b, group, f"{prefix}-.*", **{"pyconnect.offset.translation": "java"}
        )
        code, body = worker.rest(
            "POST", "/connectors", {"name": "mirror-checkpoint", "config": checkpoint_config}
        )
        assert code == 201, body
        wait_for(
            "mirror-checkpoint RUNNING", functools.partial(running_tasks, worker, "mirror-checkpoint", 1), 60
        )
        seen: dict[str, object] = {}

        def settled() -> tuple[dict[int, Translation], int] | None:
            """The checkpoints on B equal the promises of a store fed with the syncs on A."""
            promised = promises(a, topic)
            history = group_checkpoints(b, group)
            seen["promised"] = promised and {p: t.downstream_offset for p, t in promised[0].items()}
            seen["checkpoints"] = [(c.partition, c.upstream_offset, c.downstream_offset) for c in history]
            checkpoints = {(c.topic, c.partition): c for c in history}
            if promised is None or any(
                (c := checkpoints.get((remote, p))) is None or c.downstream_offset != t.downstream_offset
                for p, t in promised[0].items()
            ):
                return None
            return promised

        try:
            promised, sync_count = wait_for("checkpoints as the store promises", settled, 90)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; last seen {seen}") from None
    mirrored_s = time.monotonic() - started

    source, target = KafkaCluster(a, timeout_s=30), KafkaCluster(b, timeout_s=30)
    translation_args = {
        "source_alias": "A",
        "target_alias": "B",
        "offset_syncs_topic": OFFSET_SYNCS_TOPIC,
        "offset_syncs_on_target": False,
        "checkpoints_topic": CHECKPOINTS_TOPIC,
    }
    audit_started = time.monotonic()
    with local_spark("pyconnect-audit-test") as spark:
        replication = run_replication_audit(spark, source, target, {topic: remote}, source_alias="A")
        assert [(p.partition, p.source_count, p.target_count) for p in replication.partitions] == [
            (p, len(rows), len(rows)) for p, rows in sorted(expected.items())
        ]
        assert [replication.total(n) for n in ("missing", "duplicates", "mismatches")] == [0, 0, 0]
        assert replication.ok() and not replication.samples

        translation = run_translation_audit(
            spark, source, target, {topic: remote}, groups=[group], **translation_args
        )
        assert translation.ok(), translation.render()
        assert translation.violations == 0 and translation.sync_violations == 0
        assert translation.syncs[SYNC_OK] == sync_count > 0
        latest = {c.partition: c for c in translation.latest}
        assert {p: c.upstream_offset for p, c in latest.items()} == COMMITTED
        for p, promise in promised.items():
            check = latest[p]
            assert check.downstream_offset == promise.downstream_offset
            # The copy is contiguous, so the true position is the committed offset itself.
            assert check.true_position == COMMITTED[p]
            assert promise.reread is not None and check.reread == promise.reread, (check, promise)
        rereads = {p: c.reread for p, c in latest.items()}
        first_audit_s = time.monotonic() - audit_started

        # Perturb: a record written to the remote topic by hand, and a checkpoint that skips records.
        forged_group = unique("forged")
        asyncio.run(produce_raw(b, remote, b"intruder", b"not from A"))
        forged = Checkpoint(forged_group, remote, 0, 10, 15)
        asyncio.run(produce_raw(b, CHECKPOINTS_TOPIC, forged.record_key(), forged.record_value()))

        # The command line (in this process, so it joins the running Spark session): JSON, exit code 1.
        common = ["--source-bootstrap", a, "--target-bootstrap", b, "--source-alias", "A", "--topic", topic]
        capsys.readouterr()
        assert main(["audit", "replication", *common, "--json"]) == 1
        replication = json.loads(capsys.readouterr().out)
        assert [replication["totals"][n] for n in ("missing", "duplicates", "mismatches")] == [0, 0, 1]
        (intruder,) = replication["samples"]
        assert (intruder["kind"], intruder["topic"], intruder["partition"], intruder["key"]) == (
            "mismatch",
            remote,
            0,
            "'intruder'",
        )
        assert intruder["offset"] == len(expected[0]) and replication["ok"] is False

        groups = ["--group", group, "--group", forged_group]
        assert main(["audit", "translation", *common, "--target-alias", "B", *groups, "--json"]) == 1
        translation = json.loads(capsys.readouterr().out)
        assert translation["violations"] == 1 and translation["syncs"][SYNC_VIOLATION] == 0
        (violation,) = translation["violation_samples"]
        assert (violation["group"], violation["true_position"], violation["skipped"]) == (forged_group, 10, 5)
        assert {c["partition"]: c["reread"] for c in translation["latest"] if c["group"] == group} == rereads
    audits_s = time.monotonic() - audit_started
    print(
        f"\nmirrored and checkpointed in {mirrored_s:.1f} s; Spark audits {first_audit_s:.1f} s clean, "
        f"{audits_s:.1f} s in all; "
        f"re-reads per partition {rereads}; {sync_count} offset syncs verified"
    )
