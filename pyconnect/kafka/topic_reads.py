"""Bounded reads of whole topics and their metadata, for test harnesses (the chaos verdict and fault
injection): every record of a topic's partitions up to the end offsets taken when the read started (the
last stable offset under ``read_committed``), end offsets, and partition leaders."""

from __future__ import annotations

import time
from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from pyconnect.kafka import aiokafka_seam as seam

Rows = dict[int, list[tuple[int, bytes | None, bytes | None]]]


async def read_partitions(
    bootstrap: str, topic: str, *, isolation: str = "read_committed", timeout_s: float = 300.0
) -> Rows:
    """partition -> ``(offset, key, value)`` of every record of ``topic`` up to its end offsets; ``{}``
    when the topic does not exist. TimeoutError after ``timeout_s``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        isolation_level=isolation,
        max_partition_fetch_bytes=4 * 1024 * 1024,
    )
    await consumer.start()
    rows: Rows = {}
    try:
        metadata = await seam.consumer_client(consumer).fetch_all_metadata()
        partitions = sorted(metadata.partitions_for_topic(topic) or ())
        if not partitions:
            return rows
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        rows = {tp.partition: [] for tp in tps}
        deadline = time.monotonic() + timeout_s
        pending = {tp for tp in tps if ends[tp] > 0}
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"reading {topic} took over {timeout_s:.0f} s ({len(pending)} partitions left)"
                )
            for tp, messages in (await consumer.getmany(*pending, timeout_ms=1000)).items():
                rows[tp.partition].extend((m.offset, m.key, m.value) for m in messages if m.offset < ends[tp])
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return rows
    finally:
        await consumer.stop()


async def end_offsets(
    bootstrap: str, topic: str, partitions: Sequence[int], isolation: str
) -> dict[int, int]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation
    )
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        return {tp.partition: o for tp, o in (await consumer.end_offsets(tps)).items()}
    finally:
        await consumer.stop()


async def partition_leaders(bootstrap: str, topics: Sequence[str]) -> dict[tuple[str, int], int]:
    """(topic, partition) -> leader node id for the ``topics`` that exist (leaderless ones left out)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    await admin.start()
    try:
        described = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    leaders: dict[tuple[str, int], int] = {}
    for topic in described:
        if topic.get("error_code"):
            continue
        for p in topic["partitions"]:
            if p.get("leader", -1) >= 0:
                leaders[(topic["topic"], p["partition"])] = p["leader"]
    return leaders
