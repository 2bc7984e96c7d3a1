"""MirrorSourceConnector's raw record-batch path against the record path, on real Kafka.

Six sources on cluster A: ``plain`` (uncompressed, two partitions, keys, null keys and values,
headers, explicit timestamps), ``lz4`` and ``zstd`` (compressed by their producers),
``txn`` (committed and aborted transactions and a plain record between), ``compact`` (compacted by
the broker before the mirror starts: offsets with gaps) and ``logappend``
(``message.timestamp.type=LogAppendTime``, written uncompressed) and ``logappend_lz4`` (the same,
compressed with lz4). One pyconnect worker on cluster B runs raw-path
connectors (source alias ``R``, one per target ``compression.type``: none, lz4, zstd, so that each
codec is copied as fetched), one record-path connector (``D``,
``pyconnect.mirror.raw.batches.enable=false``) over the same sources, and a raw-path connector taking
one record per poll (``C``, ``consumer.max.poll.records=1``: each poll takes one batch and the rest
of the fetch is held for the next), all ``read_committed``.

Checked: per partition, record by record, both copies hold the same key, value, headers and
timestamp in the same order, and both equal the committed source records; the raw connectors copied
batches as bytes for plain, lz4, zstd, txn and (restamped as CreateTime) logappend, and decoded the
compacted and the compressed LogAppendTime batches (``raw-batch-count`` / ``decoded-batch-count``); the raw path commits the same source offsets as
the record path (the last record of each partition); every offset sync of the raw path maps an
upstream record to the downstream record that holds it. A second test runs the raw path with
exactly-once source support: read_committed on the target sees every record once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import RECENT_MS, create_topic, fleet, python_workers, running_tasks, wait_for
from tests.integration.test_metrics_endpoint import matching, parse, scrape
from tests.integration.test_mirror_source import mirror_config, read_offset_syncs

pytestmark = pytest.mark.kafka

PREFIX = "kafka_connect_mirror_mirrorsourceconnector_"
COMPACT_KEYS, COMPACT_ROUNDS = 10, 3
Row = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes], ...], int]


async def _fill(
    bootstrap: str, topic: str, count: int, partitions: int = 1, compression: str | None = None
) -> None:
    """``count`` records in batches of up to 20 (linger), keys, nulls, headers, explicit timestamps."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, compression_type=compression)
    await producer.start()
    try:
        futures = []
        for i in range(count):
            key = None if i % 7 == 3 else f"k{i}".encode()
            value = None if i % 11 == 5 and key is not None else f"v{i}".encode() * (1 + i % 5)
            headers = [("h", f"x{i}".encode()), ("h", b"\x00\xff"), ("n", str(i).encode())][: i % 4]
            futures.append(
                await producer.send(
                    topic,
                    value,
                    key=key,
                    partition=i % partitions,
                    timestamp_ms=RECENT_MS + i,
                    headers=headers,
                )
            )
            if i % 20 == 19:
                await asyncio.gather(*futures)
                futures = []
        await producer.flush()
    finally:
        await producer.stop()


async def _fill_transactions(bootstrap: str, topic: str) -> None:
    """Committed c0-c9, aborted a10-a19, a plain record, committed c20-c29 (several batches each)."""
    await create_topic(bootstrap, topic, 1)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, transactional_id=f"{topic}-producer", linger_ms=5
    )
    plain = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    await plain.start()
    try:
        for start, commit in ((0, True), (10, False), (20, True)):
            if start == 20:
                await plain.send_and_wait(topic, b"n", key=b"plain", partition=0, headers=[("p", b"1")])
            await producer.begin_transaction()
            for i in range(start, start + 10):
                await producer.send(topic, f"{'c' if commit else 'a'}{i}".encode(), key=b"k", partition=0)
                if i % 5 == 4:
                    await producer.flush()
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await plain.stop()
        await producer.stop()


async def _fill_compacted(bootstrap: str, topic: str) -> None:
    """COMPACT_ROUNDS rounds of the same keys, each round in its own segment, then ``end``. Each key is
    written twice in a row, two keys to a batch: compaction leaves batches with gaps (offsets 1 and 3
    of four), which brokers refuse from a client, so the raw path must decode them."""
    configs = {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
    }
    await create_topic(bootstrap, topic, 1, configs)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for r in range(COMPACT_ROUNDS):
            for k in range(COMPACT_KEYS):
                for version in "ab":
                    await producer.send(topic, f"r{r}{version}".encode(), key=f"c{k}".encode(), partition=0)
                if k % 2 == 1:
                    await producer.flush()
            await producer.flush()
            await asyncio.sleep(0.3)
        await producer.send_and_wait(topic, b"last", key=b"end", partition=0)
    finally:
        await producer.stop()


async def read_rows(bootstrap: str, topic: str, timeout: float = 10) -> dict[int, list[Row]]:
    """Every committed record of ``topic`` up to its last stable offsets, by partition."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    await consumer.start()
    rows: dict[int, list[Row]] = {}
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            await consumer._client.force_metadata_update()
            partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            return {}
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all([await consumer.position(tp) >= ends[tp] for tp in tps]):
                break
            for tp, messages in (await consumer.getmany(timeout_ms=300)).items():
                for m in messages:
                    rows.setdefault(tp.partition, []).append(
                        (m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp)
                    )
    finally:
        await consumer.stop()
    return rows


def content(rows: dict[int, list[Row]]) -> dict[int, list[tuple[Any, ...]]]:
    """What a copy keeps: partition, key, value, headers, timestamp, in order (not the offsets)."""
    return {p: [(r[0], *r[2:]) for r in part] for p, part in rows.items() if part}


@dataclass
class Sources:
    a: ClusterHandle
    b: ClusterHandle
    prefix: str
    expected: dict[str, dict[int, list[Row]]]

    def topic(self, name: str) -> str:
        return f"{self.prefix}-{name}"


NAMES = ("plain", "lz4", "zstd", "txn", "compact", "logappend", "logappend_lz4")


def _compacted(bootstrap: str, topic: str) -> dict[int, list[Row]] | None:
    rows = asyncio.run(read_rows(bootstrap, topic))
    last_round = (COMPACT_ROUNDS - 1) * 2 * COMPACT_KEYS
    kept = [last_round + 2 * k + 1 for k in range(COMPACT_KEYS)] + [last_round + 2 * COMPACT_KEYS]
    return rows if [r[1] for r in rows.get(0, [])] == kept else None


@pytest.fixture(scope="module")
def sources(cluster_a: ClusterHandle, cluster_b: ClusterHandle) -> Sources:
    a = cluster_a.bootstrap_servers
    s = Sources(cluster_a, cluster_b, f"raw-{uuid.uuid4().hex[:8]}", {})

    async def fill() -> None:
        await _fill_compacted(a, s.topic("compact"))  # first: the cleaner works while the rest fills
        await create_topic(a, s.topic("plain"), 2)
        await _fill(a, s.topic("plain"), 300, partitions=2)
        for codec in ("lz4", "zstd"):
            await create_topic(a, s.topic(codec), 1)
            await _fill(a, s.topic(codec), 200, compression=codec)
        await _fill_transactions(a, s.topic("txn"))
        await create_topic(a, s.topic("logappend"), 1, {"message.timestamp.type": "LogAppendTime"})
        await _fill(a, s.topic("logappend"), 100)
        await create_topic(a, s.topic("logappend_lz4"), 1, {"message.timestamp.type": "LogAppendTime"})
        await _fill(a, s.topic("logappend_lz4"), 100, compression="lz4")

    asyncio.run(fill())
    s.expected["compact"] = wait_for(
        "the broker compacts the source", lambda: _compacted(a, s.topic("compact")), 60
    )
    for name in NAMES:
        if name != "compact":
            s.expected[name] = asyncio.run(read_rows(a, s.topic(name)))
    assert [r[3] for r in s.expected["txn"][0]] == [
        *(f"c{i}".encode() for i in range(10)),
        b"n",
        *(f"c{i}".encode() for i in range(20, 30)),
    ]
    return s


def _config(
    s: Sources, alias: str, target_alias: str, names: tuple[str, ...], **extra: str
) -> dict[str, str]:
    return mirror_config(
        s.a,
        s.b,
        "|".join(s.topic(n) for n in names),
        **{
            "tasks.max": "1",
            "source.cluster.alias": alias,
            "target.cluster.alias": target_alias,
            "consumer.isolation.level": "read_committed",
            "offset.lag.max": "0",
            **extra,
        },
    )


def _wait_copies(s: Sources, alias: str, names: tuple[str, ...]) -> dict[str, dict[int, list[Row]]]:
    copies: dict[str, dict[int, list[Row]]] = {}
    b = s.b.bootstrap_servers
    for name in names:
        wanted = {p: len(rows) for p, rows in s.expected[name].items()}

        def copied(name: str = name, wanted: dict[int, int] = wanted) -> dict[int, list[Row]] | None:
            rows = asyncio.run(read_rows(b, f"{alias}.{s.topic(name)}"))
            return rows if {p: len(r) for p, r in rows.items()} == wanted else None

        copies[name] = wait_for(f"{alias}.{s.topic(name)} copied", copied, 90, interval=1)
    return copies


def _has_rows(s: Sources, key: tuple[str, int]) -> bool:
    topic, partition = key
    return any(s.topic(n) == topic and s.expected[n].get(partition) for n in NAMES)


def _batch_counts(series: dict[Any, float], remote: str) -> tuple[float, float]:
    raw = sum(matching(series, PREFIX + "raw_batch_count", topic=remote).values())
    decoded = sum(matching(series, PREFIX + "decoded_batch_count", topic=remote).values())
    return raw, decoded


def test_raw_and_record_paths_write_the_same_records_offsets_and_syncs(
    sources: Sources, unique: Callable[[str], str], tmp_path: Path
) -> None:
    s = sources
    a, b = s.a.bootstrap_servers, s.b.bootstrap_servers
    plain_names = ("plain", "txn", "compact", "logappend", "logappend_lz4")
    connectors = {
        "raw-none": _config(s, "R", "BR", plain_names),
        "raw-lz4": _config(s, "R", "BR", ("lz4",), **{"producer.override.compression.type": "lz4"}),
        "raw-zstd": _config(s, "R", "BR", ("zstd",), **{"producer.override.compression.type": "zstd"}),
        "record": _config(s, "D", "BD", NAMES, **{"pyconnect.mirror.raw.batches.enable": "false"}),
        # one record per poll: each poll takes one batch and holds the rest of the fetch for the next
        "raw-capped": _config(s, "C", "BC", plain_names, **{"consumer.max.poll.records": "1"}),
    }
    workers = python_workers(
        b, tmp_path, unique("raw-group"), 1, **{"connector.client.config.override.policy": "All"}
    )
    with fleet(workers) as (worker,):
        for name, config in connectors.items():
            code, body = worker.rest("POST", "/connectors", {"name": name, "config": config})
            assert code == 201, body
        for name in connectors:
            wait_for(f"{name} RUNNING", lambda name=name: running_tasks(worker, name, 1), 60)
        raw = _wait_copies(s, "R", NAMES)
        record = _wait_copies(s, "D", NAMES)
        capped = _wait_copies(s, "C", plain_names)
        for name in NAMES:
            expected = content(s.expected[name])
            assert content(record[name]) == expected, name
            assert content(raw[name]) == expected, name
            if name in capped:
                assert content(capped[name]) == expected, name

        series = parse(scrape(worker))
        for name in ("plain", "lz4", "zstd", "txn"):
            copied, decoded = _batch_counts(series, f"R.{s.topic(name)}")
            assert copied > 0 and decoded == 0, (name, copied, decoded)
        # compacted: the last round's five batches have gaps; the "end" batch is whole and copied
        assert _batch_counts(series, f"R.{s.topic('compact')}") == (1, COMPACT_KEYS // 2)
        # LogAppendTime: uncompressed batches restamped as CreateTime and copied, compressed ones decoded
        copied, decoded = _batch_counts(series, f"R.{s.topic('logappend')}")
        assert copied > 0 and decoded == 0, (copied, decoded)
        copied, decoded = _batch_counts(series, f"R.{s.topic('logappend_lz4')}")
        assert copied == 0 and decoded > 0, (copied, decoded)
        for name in ("plain", "txn", "logappend"):  # one batch per poll, still copied as bytes
            copied, decoded = _batch_counts(series, f"C.{s.topic(name)}")
            assert copied > 1 and decoded == 0, (name, copied, decoded)
        for name in NAMES:
            assert _batch_counts(series, f"D.{s.topic(name)}") == (0, 0), name
        record_counts = matching(series, PREFIX + "record_count")
        for name in NAMES:
            counted = sum(
                v for labels, v in record_counts.items() if ("topic", f"R.{s.topic(name)}") in labels
            )
            assert counted == sum(map(len, s.expected[name].values())), name

        # Offsets: both paths commit the last record of every source partition.
        def committed(connector: str) -> dict[tuple[str, int], int] | None:
            code, body = worker.rest("GET", f"/connectors/{connector}/offsets")
            if code != 200:
                return None
            found = {
                (o["partition"]["topic"], o["partition"]["partition"]): o["offset"]["offset"]
                for o in body["offsets"]
            }
            return found

        last = {(s.topic(n), p): rows[-1][1] for n in NAMES for p, rows in s.expected[n].items() if rows}
        topics = {s.topic(n) for n in NAMES}
        seen: dict[str, dict[tuple[str, int], int]] = {}

        def offsets(path: str, names: tuple[str, ...]) -> dict[tuple[str, int], int] | None:
            """The path's committed offsets on partitions holding records, once they equal ``last``.

            Heartbeats topics are always mirrored too (as in Java), so only this test's topics count;
            a partition with no record visible under read_committed has no last record to compare.
            """
            found: dict[tuple[str, int], int] = {}
            for name in names:
                part = committed(name)
                if part is None:
                    return None
                found.update({k: v for k, v in part.items() if k[0] in topics and _has_rows(s, k)})
            seen[path] = found
            return found if found == last else None

        paths = {"raw": ("raw-none", "raw-lz4", "raw-zstd"), "record": ("record",)}
        for path, names in paths.items():
            try:  # committed every second (offset.flush.interval.ms); a loaded machine may take a while
                wait_for(f"the {path} path's offsets committed", lambda p=path, n=names: offsets(p, n), 60)
            except AssertionError as exc:
                got = seen.get(path, {})
                differ = {
                    k: (got.get(k), last.get(k)) for k in set(got) | set(last) if got.get(k) != last.get(k)
                }
                raise AssertionError(f"{exc}; (committed, expected) where they differ: {differ}") from None

    # Offset syncs of the raw path: each maps an upstream record to the downstream record holding it.
    syncs = asyncio.run(read_offset_syncs(a, topics, syncs_topic="mm2-offset-syncs.BR.internal"))
    assert {sync.topic for sync in syncs} == topics
    for sync in syncs:
        name = sync.topic[len(s.prefix) + 1 :]
        source = {r[1]: r for r in s.expected[name].get(sync.partition, [])}
        target = {r[1]: r for r in raw[name].get(sync.partition, [])}
        up, down = source.get(sync.upstream_offset), target.get(sync.downstream_offset)
        assert up is not None and down is not None, sync
        assert (up[2], up[3], up[4], up[5]) == (down[2], down[3], down[4], down[5]), sync


def test_raw_path_with_exactly_once_writes_every_record_once(
    sources: Sources, unique: Callable[[str], str], tmp_path: Path
) -> None:
    s = sources
    names = ("plain", "txn", "logappend")  # logappend: restamped batches in the task's transactions
    workers = python_workers(
        s.b.bootstrap_servers, tmp_path, unique("raw-eos"), 1, **{"exactly.once.source.support": "enabled"}
    )
    with fleet(workers) as (worker,):
        config = _config(s, "E", "BE", names)
        code, body = worker.rest("POST", "/connectors", {"name": "raw-eos", "config": config})
        assert code == 201, body
        wait_for("raw-eos RUNNING", lambda: running_tasks(worker, "raw-eos", 1), 60)
        copies = _wait_copies(s, "E", names)
        for name in names:
            assert content(copies[name]) == content(s.expected[name]), name
        series = parse(scrape(worker))
        for name in names:
            copied, decoded = _batch_counts(series, f"E.{s.topic(name)}")
            assert copied > 0 and decoded == 0, (name, copied, decoded)
