"""The consumer of one sink task: a group member of ``connect-<connector>`` (or the connector's
``consumer.override.group.id``) subscribed to ``topics`` or ``topics.regex``.

Contract:
- Built from a Java consumer config (:func:`~pyconnect.config.client_configs.task_consumer_config`);
  ``start`` subscribes and joins; ``stop`` is idempotent and closes the client on every path (a
  failed ``start`` leaves no open client).
- ``on_assigned(partitions)`` / ``on_revoked(partitions)`` are awaited from the consumer's
  coordinator during a rebalance, before any record of a new assignment is returned. They may commit
  through :meth:`commit` (the group generation is still the old one while revoking).
- ``fetch(timeout_s)`` returns at most ``max.poll.records`` (Java's default 500) records as
  :class:`FetchedRecord` tuples in offset order per partition, partitions one after another.
- Offsets are "next offset to read"; ``commit`` waits for the coordinator, within its bound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import IllegalStateError, KafkaError

from pyconnect.api.sink import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE
from pyconnect.api.sink import TopicPartition as Partition
from pyconnect.errors import ConnectError
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_consumer

JAVA_MAX_POLL_RECORDS = 500
_TIMESTAMP_TYPES = {0: CREATE_TIME, 1: LOG_APPEND_TIME}


class SinkCommitError(ConnectError):
    """The group coordinator refused or lost a commit (a rebalance, a lost generation): retry later."""


Listener = Callable[[list[Partition]], Awaitable[None]]


class FetchedRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]]


class _Rebalance(ConsumerRebalanceListener):
    def __init__(self, assigned: Listener, revoked: Listener) -> None:
        self._assigned = assigned
        self._revoked = revoked

    async def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        partitions = sorted(Partition(tp.topic, tp.partition) for tp in revoked)
        if partitions:
            await self._revoked(partitions)

    async def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        partitions = sorted(Partition(tp.topic, tp.partition) for tp in assigned)
        if partitions:
            await self._assigned(partitions)


class SinkConsumer:
    def __init__(
        self,
        java_config: Mapping[str, Any],
        *,
        topics: Sequence[str] = (),
        pattern: str | None = None,
    ) -> None:
        self._config = dict(java_config)
        self.cluster = cluster_label(java_config)
        self.group_id = str(java_config.get("group.id"))
        self._topics = list(topics)
        self._pattern = pattern
        self._max_records = int(java_config.get("max.poll.records") or JAVA_MAX_POLL_RECORDS)
        self._consumer: AIOKafkaConsumer | None = create_consumer(self._config)
        self._started = False

    async def start(self, on_assigned: Listener, on_revoked: Listener) -> None:
        consumer = self._consumer
        if consumer is None:
            raise IllegalStateError("the sink consumer was stopped")
        listener = _Rebalance(on_assigned, on_revoked)
        if self._pattern is not None:
            consumer.subscribe(pattern=self._pattern, listener=listener)
        else:
            consumer.subscribe(topics=self._topics, listener=listener)
        await start_client(consumer, self._config, self.cluster)
        self._started = True

    def _client(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            raise IllegalStateError("the sink consumer was stopped")
        return self._consumer

    async def fetch(self, timeout_s: float) -> list[FetchedRecord]:
        batches = await self._client().getmany(
            timeout_ms=max(0, int(timeout_s * 1000)), max_records=self._max_records
        )
        out: list[FetchedRecord] = []
        append = out.append
        for tp, records in batches.items():
            topic, partition = tp.topic, tp.partition
            for r in records:
                append(
                    FetchedRecord(
                        topic,
                        partition,
                        r.offset,
                        r.timestamp if r.timestamp is not None and r.timestamp >= 0 else None,
                        _TIMESTAMP_TYPES.get(r.timestamp_type, NO_TIMESTAMP_TYPE),
                        r.key,
                        r.value,
                        r.headers,
                    )
                )
        return out

    def assignment(self) -> set[Partition]:
        if self._consumer is None:
            return set()
        return {Partition(tp.topic, tp.partition) for tp in self._consumer.assignment()}

    async def positions(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        consumer = self._client()
        return {p: await consumer.position(TopicPartition(p.topic, p.partition)) for p in partitions}

    def seek(self, offsets: Mapping[Partition, int]) -> None:
        consumer = self._client()
        for p, offset in offsets.items():
            consumer.seek(TopicPartition(p.topic, p.partition), offset)

    def pause(self, partitions: Iterable[Partition]) -> None:
        assigned = self._client().assignment()
        wanted = [TopicPartition(p.topic, p.partition) for p in partitions]
        self._client().pause(*[tp for tp in wanted if tp in assigned])

    def resume(self, partitions: Iterable[Partition]) -> None:
        assigned = self._client().assignment()
        wanted = [TopicPartition(p.topic, p.partition) for p in partitions]
        self._client().resume(*[tp for tp in wanted if tp in assigned])

    async def commit(self, offsets: Mapping[Partition, int], timeout_s: float | None = None) -> None:
        """Commit and wait, at most ``timeout_s`` (aiokafka retries retriable errors forever)."""
        if not offsets:
            return
        committing = self._client().commit(
            {TopicPartition(p.topic, p.partition): o for p, o in offsets.items()}
        )
        try:
            await asyncio.wait_for(committing, timeout_s)
        except TimeoutError:
            raise SinkCommitError(
                f"committing offsets of group {self.group_id} timed out after {timeout_s} s"
            ) from None
        except KafkaError as exc:
            raise SinkCommitError(f"committing offsets of group {self.group_id} failed: {exc!r}") from exc

    async def stop(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await consumer.stop()
