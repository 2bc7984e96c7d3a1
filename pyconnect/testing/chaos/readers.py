"""Reading what a chaos run left on the clusters, for the verdict: every record of a topic's partitions
and the checkpoints of a group. Every read is bounded in time and stops at the end offsets taken when it
started (the last stable offset under ``read_committed``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition

from connectors.mirror.checkpoint_records import Checkpoint

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
        metadata = await consumer._client.fetch_all_metadata()
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


async def read_checkpoints(bootstrap: str, topic: str, group: str) -> list[Checkpoint]:
    """Every checkpoint of ``group`` in the checkpoints ``topic``, in topic order per partition."""
    found: list[Checkpoint] = []
    for rows in (await read_partitions(bootstrap, topic)).values():
        for _offset, key, value in rows:
            if key is None or value is None:
                continue
            checkpoint = Checkpoint.from_record(key, value)
            if checkpoint.consumer_group_id == group:
                found.append(checkpoint)
    return found
