"""End offsets of partitions a consumer is fetching, asked on a connection its fetches do not hold.

A broker answers the requests of one connection in order, so a ListOffsets request sent behind a
long-poll Fetch (``fetch.max.wait.ms``, 500 ms by default) waits for that fetch to time out. A
consumer that tails a quiet topic nearly always has such a fetch in flight, which made every
read-to-end of an internal topic cost about half a second. Java's KafkaBasedLog asks its admin
client instead; here the consumer's own client sends the ListOffsets request on its coordination
connection (the log's consumers have no group, so nothing else uses it).

Contract: :func:`end_offsets` returns the log end offset (or, with ``read_committed``, the last
stable offset) of every partition given. Stale or missing leadership triggers a metadata refresh and
a retry (backoff from 20 ms doubling to 0.5 s: a topic created a moment ago answers
NOT_LEADER_OR_FOLLOWER for a few milliseconds); other broker errors, or no answer within
``timeout_s``, raise.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Sequence

from aiokafka import TopicPartition
from aiokafka import errors as kafka_errors
from aiokafka.client import AIOKafkaClient, ConnectionGroup
from aiokafka.protocol.offset import OffsetRequest

LATEST = -1
"""The ListOffsets timestamp that asks for the end of the partition."""

_FIRST_BACKOFF_S = 0.02
_MAX_BACKOFF_S = 0.5

_RETRIABLE_CODES = frozenset(
    {
        3,  # UNKNOWN_TOPIC_OR_PARTITION (metadata not propagated yet)
        5,  # LEADER_NOT_AVAILABLE
        6,  # NOT_LEADER_OR_FOLLOWER
        9,  # REPLICA_NOT_AVAILABLE
        56,  # KAFKA_STORAGE_ERROR
        74,  # FENCED_LEADER_EPOCH
        75,  # UNKNOWN_LEADER_EPOCH
        78,  # OFFSET_NOT_AVAILABLE (a leader election is completing)
    }
)


async def end_offsets(
    client: AIOKafkaClient,
    partitions: Sequence[TopicPartition],
    *,
    read_committed: bool = False,
    timeout_s: float = 30.0,
) -> dict[TopicPartition, int]:
    """The end offset of each of ``partitions``; see the module docstring."""
    deadline = time.monotonic() + timeout_s
    wanted = set(partitions)
    found: dict[TopicPartition, int] = {}
    backoff = _FIRST_BACKOFF_S
    while True:
        last_error: BaseException | None = None
        by_leader: dict[int, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
        for tp in wanted - found.keys():
            leader = client.cluster.leader_for_partition(tp)
            if leader is None or leader < 0:
                client.add_topic(tp.topic)
                last_error = kafka_errors.LeaderNotAvailableError(f"no leader known for {tp}")
                continue
            by_leader[leader][tp.topic].append((tp.partition, LATEST))
        for leader, topics in by_leader.items():
            try:
                found.update(await _ask(client, leader, topics, read_committed))
            except (kafka_errors.KafkaConnectionError, kafka_errors.NodeNotReadyError) as exc:
                last_error = exc
        if wanted <= found.keys():  # partitions answered with a retriable error are still missing
            return {tp: found[tp] for tp in partitions}
        if time.monotonic() >= deadline:
            raise kafka_errors.KafkaTimeoutError(
                f"end offsets of {sorted(map(str, wanted - found.keys()))} not known within {timeout_s:.0f}s: "
                f"{last_error or 'a retriable error from the leader'}"
            )
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, _MAX_BACKOFF_S)
        await client.force_metadata_update()


async def _ask(
    client: AIOKafkaClient, node_id: int, topics: dict[str, list[tuple[int, int]]], read_committed: bool
) -> dict[TopicPartition, int]:
    request = OffsetRequest(-1, 1 if read_committed else 0, list(topics.items()))
    response = await client.send(node_id, request, group=ConnectionGroup.COORDINATION)
    out: dict[TopicPartition, int] = {}
    for topic, partition_data in response.topics:
        for partition, error_code, *info in partition_data:
            if error_code == 0:
                # v0 answers a list of offsets; v1 and later (timestamp, offset[, leader epoch]).
                out[TopicPartition(topic, partition)] = (
                    (info[0][0] if info[0] else 0) if response.API_VERSION == 0 else info[1]
                )
            elif error_code not in _RETRIABLE_CODES:  # a retriable one is asked again by the caller
                raise kafka_errors.for_code(error_code)(f"ListOffsets for {topic}-{partition}")
    return out
