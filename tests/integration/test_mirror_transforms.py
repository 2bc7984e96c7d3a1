"""MirrorSourceConnector with a predicated Filter and a RegexRouter on a pyconnect worker of cluster B.

Records of A carrying a ``drop`` header are filtered out; the rest are renamed from ``A.<topic>`` to
``renamed.<topic>``. Checked: the renamed topic holds exactly the kept records in order, and every
offset sync written to A maps an upstream offset to the downstream offset of that same record (Java 3.5
behaviour: a filtered record gets ``commitRecord(record, null)`` and produces no sync; the upstream gap
it leaves makes the next record's sync exact), with the newest sync reaching the last record. The
source offsets still commit past the filtered records (the last upstream record is a filtered one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from connectors.mirror.records import OffsetSync
from pyconnect.protocol.internal_records import encode_offset_key
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import RECENT_MS, fleet, python_workers, running_tasks, wait_for
from tests.integration.test_mirror_source import (
    mirror_config,
    read_all,
    read_connect_offsets,
    read_offset_syncs,
)

pytestmark = pytest.mark.kafka

COUNT = 200


def dropped(i: int) -> bool:
    return i % 5 == 2 or i == COUNT - 1


async def create_topic(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()


async def produce_marked(bootstrap: str, topic: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for i in range(COUNT):
            headers = [("drop", b"1")] if dropped(i) else [("keep", b"1")]
            await producer.send(
                topic,
                f"v{i}".encode(),
                key=f"k{i}".encode(),
                partition=0,
                timestamp_ms=RECENT_MS + i,
                headers=headers,
            )
        await producer.flush()
    finally:
        await producer.stop()


def test_filtered_and_renamed_records_keep_offset_syncs_exact(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = unique("smt")
    renamed = f"renamed.{topic}"
    asyncio.run(create_topic(a, topic))
    asyncio.run(create_topic(b, renamed))
    asyncio.run(produce_marked(a, topic))
    config = mirror_config(
        cluster_a,
        cluster_b,
        topic,
        **{
            "tasks.max": "1",
            "transforms": "dropMarked,rename",
            "transforms.dropMarked.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.dropMarked.predicate": "marked",
            "transforms.rename.type": "RegexRouter",
            "transforms.rename.regex": "A\\.(.*)",
            "transforms.rename.replacement": "renamed.$1",
            "predicates": "marked",
            "predicates.marked.type": "HasHeaderKey",
            "predicates.marked.name": "drop",
        },
    )
    workers = python_workers(b, tmp_path, unique("mm-group"), 1)
    with fleet(workers) as (worker,):
        code, body = worker.rest("POST", "/connectors", {"name": "mirror-smt", "config": config})
        assert code == 201, body
        wait_for("1 RUNNING task", lambda: running_tasks(worker, "mirror-smt", 1), 60)

        kept = [i for i in range(COUNT) if not dropped(i)]

        def mirrored() -> list[Any] | None:
            rows = asyncio.run(read_all(b, renamed, 10)).get(0, [])
            return rows if len(rows) >= len(kept) else None

        rows = wait_for("the kept records on the renamed topic", mirrored, 60)
        assert [row[3] for row in rows] == [f"v{i}".encode() for i in kept]
        assert all(row[4] == (("keep", b"1"),) for row in rows)
        assert not asyncio.run(read_all(b, f"A.{topic}", 5)).get(0), "nothing lands under the policy's name"
        value_at = {row[1]: row[3] for row in rows}
        last_kept = kept[-1]

        def synced_to_end() -> list[OffsetSync] | None:
            syncs = asyncio.run(read_offset_syncs(a, {topic}))
            return syncs if any(s.upstream_offset == last_kept for s in syncs) else None

        syncs = wait_for("offset syncs up to the last kept record", synced_to_end, 30)
        for sync in syncs:
            assert not dropped(sync.upstream_offset), f"a filtered record produced {sync}"
            assert value_at[sync.downstream_offset] == f"v{sync.upstream_offset}".encode(), sync
        assert OffsetSync(topic, 0, last_kept, len(kept) - 1) in syncs

        key = encode_offset_key("mirror-smt", {"cluster": "A", "partition": 0, "topic": topic})

        def committed_past_filtered() -> dict[bytes, Any] | None:
            stored = asyncio.run(read_connect_offsets(b, str(worker.offset_topic)))
            return stored if stored.get(key) == {"offset": COUNT - 1} else None

        wait_for("the source offset of the last (filtered) record", committed_past_filtered, 30)
