"""Reading the checkpoints a chaos run left on the target, for the verdict (bounded, through
:mod:`pyconnect.kafka.topic_reads`)."""

from __future__ import annotations

from connectors.mirror.checkpoint_records import Checkpoint
from pyconnect.kafka.topic_reads import read_partitions


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
