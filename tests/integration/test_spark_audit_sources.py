"""The Spark audits on awkward sources and on located faults, on data a pyconnect worker mirrored A -> B.

One mirror for the module: a pyconnect worker of B runs MirrorSourceConnector (source consumer
``isolation.level=read_committed``: Java's MirrorSource leaves the consumer at Kafka's default,
``read_uncommitted``, and copies aborted records; this flow is configured the way the exactly-once guides
say) and MirrorCheckpointConnector over six topics of A, then stops once everything is copied:

- ``repeat``: identical records (same key, value, headers and timestamp) several times in a partition,
  interleaved with others and in runs;
- ``compact``: a compacted topic the broker really compacted before the mirror started (offsets with gaps);
- ``txn``: committed and aborted transactions (control records and aborted data in the log);
- ``late``: a topic whose head retention deleted before the mirror started (the mirror starts mid-stream);
- ``faults``: plain records, broken after the copy by the fault test;
- ``expired``: plain records whose heads retention deletes once they are copied, on the source
  (partition 0: the mirror is older than the source's retention) and on the target (partition 1: the
  target's retention is shorter).

Both tests run ``pyconnect audit --config mm2.properties --flow A->B --topics ...`` in this process on one
module Spark session; the flow's config names the mirror's ``read_committed`` consumer, so the audit reads
the source as the mirror did. The first test: every source passes, with exact counts, and the group's
checkpoint on ``repeat`` is exact; on ``expired`` the records retention left unverifiable are counted and
located, and noted in the verdict. The second: a duplicated range, two swapped records and a forged
offset sync are each caught and located in the JSON report by offsets on both sides.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete
from aiokafka.structs import OffsetAndMetadata
from pyspark.sql import SparkSession

from connectors.mirror.records import OffsetSync
from pyconnect.cli import main
from pyconnect.testing.backends import ClusterHandle
from spark_analytics.session import local_spark
from spark_analytics.translation_audit import SYNC_VIOLATION
from tests.integration.fleet import create_topic, fleet, python_workers, running_tasks, wait_for
from tests.integration.mirror_helpers import latest_checkpoints
from tests.integration.test_mirror_checkpoint import quick_checkpoints
from tests.integration.test_mirror_source import (
    OFFSET_SYNCS_TOPIC,
    Row,
    mirror_config,
    read_all,
    read_offset_syncs,
)
from tests.integration.test_spark_audit import create_and_fill_now

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

REPEAT_RECORDS = 60
REPEAT_COMMITTED = 31
COMPACT_KEYS, COMPACT_ROUNDS = 8, 4
LATE_RECORDS, LATE_DELETED = 30, 12
FAULT_RECORDS = 40  # two partitions of 20
DUPLICATED = range(5, 10)  # target offsets of partition 0 copied a second time
FORGED_SYNC = (3, 7)  # upstream 3 -> downstream 7 on partition 0 of ``faults``: not a copy
EXPIRED_RECORDS = 40  # two partitions of 20
EXPIRED_ON_SOURCE = 8  # source offsets of partition 0 deleted after the copy
EXPIRED_ON_TARGET = 5  # target offsets of partition 1 deleted after the copy


@dataclass(frozen=True)
class Mirrored:
    a: str
    b: str
    prefix: str
    group: str
    expected: dict[str, dict[int, list[Row]]]
    """What each topic holds on A (read_committed), by partition, when the mirror started."""

    def topic(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def remote(self, name: str) -> str:
        return f"A.{self.prefix}-{name}"


async def _fill_repeat(bootstrap: str, topic: str, now_ms: int) -> None:
    """Partition 0: content ``same`` at every third offset, a run of three ``twin`` records at 40-42, and
    unique records around them, all stamped ``now_ms`` (the repeats are byte-identical)."""
    await create_topic(bootstrap, topic, 1)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for i in range(REPEAT_RECORDS):
            if 40 <= i <= 42:
                key, value, headers = b"twin", b"t", [("h", b"1"), ("h", b"1")]
            elif i % 3 == 0:
                key, value, headers = b"same", b"s", [("h", b"\x00")]
            else:
                key, value, headers = f"u{i}".encode(), f"v{i}".encode(), []
            await producer.send(topic, value, key=key, partition=0, timestamp_ms=now_ms, headers=headers)
        await producer.flush()
    finally:
        await producer.stop()


async def _fill_compacted(bootstrap: str, topic: str) -> None:
    """COMPACT_ROUNDS rounds of the same COMPACT_KEYS keys, each round in its own segment (segments roll
    after 100 ms), then ``end`` to roll the last round: the cleaner may keep only the last round."""
    configs = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
    }
    await create_topic(bootstrap, topic, 1, configs)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for r in range(COMPACT_ROUNDS):
            for k in range(COMPACT_KEYS):
                await producer.send(topic, f"r{r}".encode(), key=f"c{k}".encode(), partition=0)
            await producer.flush()
            await asyncio.sleep(0.3)
        await producer.send_and_wait(topic, b"last", key=b"end", partition=0)
    finally:
        await producer.stop()


async def _fill_transactions(bootstrap: str, topic: str) -> None:
    """Partition 0: committed c0-c4 (offsets 0-4), a commit marker, aborted a5-a9 and their abort marker,
    a plain record n, committed c10-c14 and a commit marker."""
    await create_topic(bootstrap, topic, 1)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"{topic}-producer")
    plain = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    await plain.start()
    try:
        for values, commit in ((range(5), True), (range(5, 10), False), (range(10, 15), True)):
            if values.start == 10:
                await plain.send_and_wait(topic, b"n", key=b"plain", partition=0)
            await producer.begin_transaction()
            for i in values:
                await producer.send(topic, f"{'c' if commit else 'a'}{i}".encode(), key=b"k", partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await plain.stop()
        await producer.stop()


async def _delete_head(bootstrap: str, topic: str, before: int, partition: int = 0) -> None:
    """Advance the log start offset of one partition to ``before``, as retention does."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_records({TopicPartition(topic, partition): RecordsToDelete(before_offset=before)})
    finally:
        await admin.close()


async def _commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, 0)])
        await consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(offset, "")})
    finally:
        await consumer.stop()


async def _read_committed(bootstrap: str, topic: str) -> dict[int, list[Row]]:
    """``read_all`` under read_committed, bounded by the last stable offsets."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    await consumer.start()
    rows: dict[int, list[Row]] = {}
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        deadline = time.monotonic() + 15
        while await consumer.position(tp) < end and time.monotonic() < deadline:
            for messages in (await consumer.getmany(tp, timeout_ms=500)).values():
                for m in messages:
                    rows.setdefault(0, []).append(
                        (m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp)
                    )
    finally:
        await consumer.stop()
    return rows


def _offsets(rows: dict[int, list[Row]], partition: int = 0) -> list[int]:
    return [r[1] for r in rows.get(partition, [])]


def _compacted(bootstrap: str, topic: str) -> dict[int, list[Row]] | None:
    """The topic once the cleaner compacted every closed segment: the last round and ``end`` left."""
    rows = asyncio.run(read_all(bootstrap, topic, 10))
    last_round = (COMPACT_ROUNDS - 1) * COMPACT_KEYS
    return rows if _offsets(rows) == [*range(last_round, last_round + COMPACT_KEYS + 1)] else None


def _content(rows: dict[int, list[Row]]) -> dict[int, list[tuple[object, ...]]]:
    """Rows without their offsets: what a copy keeps."""
    return {p: [(r[0], *r[2:]) for r in part] for p, part in rows.items()}


def _wait_copied(bootstrap: str, remote: str, expected: dict[int, list[Row]]) -> None:
    """Wait until ``remote`` holds exactly the records of ``expected``, in order (at any offsets)."""

    def copied() -> bool:
        return _content(asyncio.run(read_all(bootstrap, remote, 10))) == _content(expected)

    wait_for(f"{remote} copied", copied, 90, interval=1)


@pytest.fixture(scope="module")
def mirrored(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, tmp_path_factory: pytest.TempPathFactory
) -> Mirrored:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    prefix = f"sas-{uuid.uuid4().hex[:8]}"
    group = f"{prefix}-group"
    m = Mirrored(a, b, prefix, group, {})
    started = time.monotonic()
    asyncio.run(_fill_compacted(a, m.topic("compact")))  # first: the cleaner works while the rest fills
    asyncio.run(_fill_repeat(a, m.topic("repeat"), int(time.time() * 1000)))
    asyncio.run(_fill_transactions(a, m.topic("txn")))
    asyncio.run(create_and_fill_now(a, m.topic("late"), 1, LATE_RECORDS))
    asyncio.run(_delete_head(a, m.topic("late"), LATE_DELETED))
    asyncio.run(create_and_fill_now(a, m.topic("faults"), 2, FAULT_RECORDS))
    asyncio.run(create_and_fill_now(a, m.topic("expired"), 2, EXPIRED_RECORDS))
    asyncio.run(_commit(a, group, m.topic("repeat"), REPEAT_COMMITTED))

    filled = time.monotonic()
    compacted = wait_for("the broker compacts the source", lambda: _compacted(a, m.topic("compact")), 60)
    m.expected["compact"] = compacted
    m.expected["repeat"] = asyncio.run(read_all(a, m.topic("repeat"), 10))
    m.expected["txn"] = asyncio.run(_read_committed(a, m.topic("txn")))
    m.expected["late"] = asyncio.run(read_all(a, m.topic("late"), 10))
    m.expected["faults"] = asyncio.run(read_all(a, m.topic("faults"), 10))
    m.expected["expired"] = asyncio.run(read_all(a, m.topic("expired"), 10))
    # The sources are what each case claims, before anything is copied.
    committed = [r[3] for r in m.expected["txn"][0]]
    assert committed == [
        *(f"c{i}".encode() for i in range(5)),
        b"n",
        *(f"c{i}".encode() for i in range(10, 15)),
    ]
    # A marker after c0-c4, the five aborted records and their marker: at least 7 offsets no one reads.
    assert _offsets(m.expected["txn"])[:5] == [0, 1, 2, 3, 4] and _offsets(m.expected["txn"])[5] >= 12
    assert _offsets(m.expected["late"]) == list(range(LATE_DELETED, LATE_RECORDS))
    assert _offsets(m.expected["repeat"]) == list(range(REPEAT_RECORDS))

    compacted_s = time.monotonic() - filled
    base = tmp_path_factory.mktemp("audit-sources-worker")
    with fleet(python_workers(b, base, f"{prefix}-worker", 1)) as (worker,):
        source_config = mirror_config(
            cluster_a,
            cluster_b,
            f"{prefix}-.*",
            **{"tasks.max": "1", "consumer.isolation.level": "read_committed"},
        )
        checkpoint_config = quick_checkpoints(cluster_a, cluster_b, group, f"{prefix}-.*")
        for name, config in (("mirror-source", source_config), ("mirror-checkpoint", checkpoint_config)):
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        for name, rows in m.expected.items():
            _wait_copied(b, m.remote(name), rows)
        for name in ("mirror-source", "mirror-checkpoint"):
            wait_for(f"{name} RUNNING", functools.partial(running_tasks, worker, name, 1), 60)

        def checkpointed() -> bool:
            c = latest_checkpoints(b, group).get((m.remote("repeat"), 0))
            return c is not None and c.upstream_offset == REPEAT_COMMITTED

        copied_s = time.monotonic() - started
        wait_for("the group's checkpoint", checkpointed, 60)
        # The offset syncs reach the last record of every partition, so none is still to come.
        last = {(m.topic(n), p): rows[-1][1] for n, parts in m.expected.items() for p, rows in parts.items()}

        def synced() -> bool:
            syncs = asyncio.run(read_offset_syncs(a, {t for t, _ in last}))
            newest: dict[tuple[str, int], int] = {}
            for s in syncs:
                newest[(s.topic, s.partition)] = max(
                    newest.get((s.topic, s.partition), -1), s.upstream_offset
                )
            return all(newest.get(tp, -1) >= offset for tp, offset in last.items())

        wait_for("offset syncs up to the last records", synced, 60)
    # The mirror has copied ``expired`` (to the same offsets): now retention deletes heads on both sides.
    copied = asyncio.run(read_all(b, m.remote("expired"), 10))
    assert {p: _offsets(copied, p) for p in (0, 1)} == {p: _offsets(m.expected["expired"], p) for p in (0, 1)}
    asyncio.run(_delete_head(a, m.topic("expired"), EXPIRED_ON_SOURCE, partition=0))
    asyncio.run(_delete_head(b, m.remote("expired"), EXPIRED_ON_TARGET, partition=1))
    print(
        f"\nsources filled and compacted (waited {compacted_s:.1f} s for the cleaner), copied after "
        f"{copied_s:.1f} s, checkpointed and synced after {time.monotonic() - started:.1f} s"
    )
    return m


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    started = time.monotonic()
    with local_spark("pyconnect-audit-sources") as session:
        session.range(1).count()
        print(f"\nSpark session up in {time.monotonic() - started:.1f} s")
        yield session


def _flow(m: Mirrored, topics: str, out: Path) -> tuple[int, str, dict[str, Any]]:
    """``pyconnect audit --config mm2.properties --flow A->B --topics TOPICS`` in this process (it joins
    the module's Spark session): exit code, first stdout line, the JSON report."""
    out.mkdir(parents=True, exist_ok=True)
    config = out / "mm2.properties"
    config.write_text(
        "clusters = A, B\n"
        f"A.bootstrap.servers = {m.a}\n"
        f"B.bootstrap.servers = {m.b}\n"
        "A->B.enabled = true\n"
        f"A->B.topics = {m.prefix}-.*\n"
        f"A->B.groups = {m.group}\n"
        # As the mirror was configured: the audit reads the source read_committed too.
        "A->B.consumer.isolation.level = read_committed\n"
    )
    stdout, stderr = io.StringIO(), io.StringIO()
    args = ["--config", str(config), "--flow", "A->B", "--topics", topics, "--out", str(out / "report")]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["audit", *args, "--quiet"])
    assert stderr.getvalue() == "", stderr.getvalue()[-2000:]
    report = json.loads((out / "report" / "audit.json").read_text())
    return code, stdout.getvalue().splitlines()[0], report


PASSING = ["repeat", "compact", "txn", "late", "expired"]


@pytest.mark.long  # a minute; make test locates faults on real sources in the test below
def test_repeated_compacted_transactional_late_and_expired_sources_pass(
    mirrored: Mirrored, spark: SparkSession, tmp_path: Path
) -> None:
    m = mirrored
    started = time.monotonic()
    code, verdict, report = _flow(m, f"{m.prefix}-({'|'.join(PASSING)})", tmp_path)
    print(f"\nflow audit of the five sources: {time.monotonic() - started:.1f} s")
    # Retention after the copy is no finding, but what it left unverifiable is said.
    assert (code, verdict) == (
        0,
        f"flow A->B: PASS (unverifiable: {EXPIRED_ON_SOURCE} target records copy source records deleted "
        f"by the source's retention; {EXPIRED_ON_TARGET} source records' copies deleted by the target's "
        "retention)",
    ), json.dumps(report["replication"]["totals"])
    replication, translation = report["replication"], report["translation"]
    counts = {
        (p["topic"], p["partition"]): (
            *(p[n] for n in COUNTED),
            p["unverifiable_source_retention"],
            p["source_retention_offsets"],
            p["unverifiable_target_retention"],
            p["target_retention_offsets"],
        )
        for p in replication["partitions"]
    }
    # Only committed records are expected (aborted ones and control records are not), compaction and
    # retention gaps are no loss, and every repeat of an identical record is matched once.
    sizes = {"repeat": REPEAT_RECORDS, "compact": COMPACT_KEYS + 1, "txn": 11, "late": 18}
    half = EXPIRED_RECORDS // 2
    kept_on_source, kept_on_target = half - EXPIRED_ON_SOURCE, half - EXPIRED_ON_TARGET
    assert counts == {
        **{(m.topic(n), 0): (size, size, 0, 0, 0, 0, 0, 0, 0, None, 0, None) for n, size in sizes.items()},
        # Target offsets 0-7 copy the source records 0-7 the source's retention deleted.
        (m.topic("expired"), 0): (
            kept_on_source,
            half,
            0,
            0,
            0,
            0,
            0,
            0,
            EXPIRED_ON_SOURCE,
            [0, EXPIRED_ON_SOURCE - 1],
            0,
            None,
        ),
        # Source records 0-4 lost their copies (target 0-4) to the target's retention.
        (m.topic("expired"), 1): (
            half,
            kept_on_target,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            None,
            EXPIRED_ON_TARGET,
            [0, EXPIRED_ON_TARGET - 1],
        ),
    }
    assert replication["retention_note"] in verdict
    html = (tmp_path / "report" / "audit.html").read_text()
    assert 'id="retention"' in html and f">{EXPIRED_ON_SOURCE} [0-{EXPIRED_ON_SOURCE - 1}]</td>" in html
    assert replication["ok"] is True and replication["samples"] == [] and replication["offset_buckets"] == []

    assert translation["ok"] is True and translation["syncs"]["violation"] == 0
    # The offset syncs of the records retention deleted (on either side) can no longer be checked.
    expired = [
        s
        for s in asyncio.run(read_offset_syncs(m.a, {m.topic("expired")}))
        if (s.partition, s.upstream_offset if s.partition == 0 else s.downstream_offset)
        in {(0, u) for u in range(EXPIRED_ON_SOURCE)} | {(1, d) for d in range(EXPIRED_ON_TARGET)}
    ]
    assert translation["syncs"]["ok"] > 0 and translation["syncs"]["unverifiable"] == len(expired)
    (latest,) = translation["latest"]
    # ``repeat`` is copied to the same offsets: the true position of upstream 31 is 31, and a consumer
    # resuming at the translated offset re-reads exactly the records in between (none skipped).
    assert (latest["group"], latest["topic"], latest["partition"], latest["upstream_offset"]) == (
        m.group,
        m.topic("repeat"),
        0,
        REPEAT_COMMITTED,
    )
    assert latest["true_position"] == REPEAT_COMMITTED and latest["skipped"] == 0
    assert 0 <= latest["downstream_offset"] <= REPEAT_COMMITTED
    assert latest["reread"] == REPEAT_COMMITTED - latest["downstream_offset"]


COUNTED = (
    "source_count",
    "target_count",
    "missing",
    "missing_head",
    "duplicates",
    "mismatches",
    "reordered",
    "missing_tail",
)


async def _break_faults(m: Mirrored) -> tuple[list[int], tuple[int, int]]:
    """Copy target offsets DUPLICATED of partition 0 a second time; on partition 1 append records X, Y to
    the source and their copies Y, X to the target; forge an offset sync on A. Returns the offsets of the
    second copies and (source offset of Y, target offset of Y's copy)."""
    target_rows = await read_all(m.b, m.remote("faults"), 10)
    producer = AIOKafkaProducer(bootstrap_servers=m.b)
    source_producer = AIOKafkaProducer(bootstrap_servers=m.a)
    await producer.start()
    await source_producer.start()
    try:
        copies = []
        for row in target_rows[0][DUPLICATED.start : DUPLICATED.stop]:
            _, _, key, value, headers, ts = row
            sent = await producer.send_and_wait(
                m.remote("faults"), value, key=key, partition=0, timestamp_ms=ts, headers=list(headers)
            )
            copies.append(sent.offset)
        now_ms = int(time.time() * 1000)
        x = (b"x", b"first", now_ms)
        y = (b"y", b"second", now_ms + 1)
        for key, value, ts in (x, y):
            await source_producer.send_and_wait(
                m.topic("faults"), value, key=key, partition=1, timestamp_ms=ts
            )
        y_copy = None
        for key, value, ts in (y, x):
            sent = await producer.send_and_wait(
                m.remote("faults"), value, key=key, partition=1, timestamp_ms=ts
            )
            y_copy = sent.offset if key == b"y" else y_copy
        forged = OffsetSync(m.topic("faults"), 0, *FORGED_SYNC)
        await source_producer.send_and_wait(
            OFFSET_SYNCS_TOPIC, forged.record_value(), key=forged.record_key(), partition=0
        )
    finally:
        await source_producer.stop()
        await producer.stop()
    assert y_copy is not None
    return copies, (len(m.expected["faults"][1]) + 1, y_copy)


def test_a_duplicated_range_swapped_records_and_a_forged_sync_are_located(
    mirrored: Mirrored, spark: SparkSession, tmp_path: Path
) -> None:
    m = mirrored
    second_copies, (y_source, y_target) = asyncio.run(_break_faults(m))
    per_partition = FAULT_RECORDS // 2
    assert second_copies == list(range(per_partition, per_partition + len(DUPLICATED)))
    assert (y_source, y_target) == (per_partition + 1, per_partition)

    started = time.monotonic()
    code, verdict, report = _flow(m, m.topic("faults"), tmp_path)
    print(f"\nflow audit of the faults: {time.monotonic() - started:.1f} s")
    assert code == 1 and verdict.startswith("flow A->B: FINDINGS"), verdict
    replication, translation = report["replication"], report["translation"]
    counts = {p["partition"]: tuple(p[n] for n in COUNTED) for p in replication["partitions"]}
    dups = len(DUPLICATED)
    assert counts == {
        0: (per_partition, per_partition + dups, 0, 0, dups, 0, 0, 0),
        1: (per_partition + 2, per_partition + 2, 0, 0, 0, 0, 1, 0),
    }
    # Located on both sides: each second copy names the source record it copies, and the swapped copy
    # of Y (target 20) names Y (source 21). Duplicates are not reported as altered (no mismatch).
    located = sorted(
        (s["kind"], s["cluster"], s["topic"], s["partition"], s["source_offset"], s["target_offset"])
        for s in replication["samples"]
    )
    source_offsets = [r[1] for r in m.expected["faults"][0]]
    remote = m.remote("faults")
    assert located == [
        *(
            ("duplicate", "target", remote, 0, source_offsets[t], copy)
            for t, copy in zip(DUPLICATED, second_copies, strict=True)
        ),
        ("reordered", "target", remote, 1, y_source, y_target),
    ]
    buckets: dict[tuple[int, str], list[int]] = {}
    for b in replication["offset_buckets"]:
        buckets.setdefault((b["partition"], b["kind"]), []).extend((b["first"], b["last"], b["count"]))
    assert buckets == {
        (0, "duplicate"): [x for copy in second_copies for x in (copy, copy, 1)],
        (1, "reordered"): [y_target, y_target, 1],
    }

    # The forged offset sync: a violation, with both offsets; the real syncs all check out.
    assert translation["ok"] is False and translation["violations"] == 0
    assert translation["syncs"]["violation"] == 1 and translation["syncs"]["ok"] > 0
    assert translation["sync_violation_samples"] == [
        {
            "topic": m.topic("faults"),
            "partition": 0,
            "upstream_offset": FORGED_SYNC[0],
            "downstream_offset": FORGED_SYNC[1],
            "status": SYNC_VIOLATION,
        }
    ]
