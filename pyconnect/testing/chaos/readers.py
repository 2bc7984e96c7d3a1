"""Reading what a chaos run left on the clusters for the verdict: the checkpoints on the target and the
source offsets the fleet committed (bounded, through :mod:`pyconnect.kafka.topic_reads`)."""

from __future__ import annotations

import json

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


async def read_offset_commits(
    bootstrap: str, topic: str, connector: str
) -> list[tuple[tuple[str, int], int | None]]:
    """Every commit of ``connector``'s MirrorSource offsets in the worker offsets ``topic`` (committed
    records only): ``((source topic, partition), offset)`` in topic order per partition, ``None`` for a
    tombstone. Records of other connectors and keys or values of another shape are skipped."""
    found: list[tuple[tuple[str, int], int | None]] = []
    for rows in (await read_partitions(bootstrap, topic)).values():
        for _offset, key, value in rows:
            try:
                name, partition = json.loads(key or b"null")
                offset = None if value is None else json.loads(value).get("offset")
                source = (str(partition["topic"]), int(partition["partition"]))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if name == connector and (offset is None or isinstance(offset, int)):
                found.append((source, offset))
    return found
