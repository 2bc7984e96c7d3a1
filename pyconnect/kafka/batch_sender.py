"""Batch-first producing: many records to Kafka with one future per partition batch, not per record.

Contract:
- ``BatchSender.send(records)`` groups already-serialized records by (topic, partition), fills
  aiokafka record batches (compressed with the producer's codec, split at its batch size) and hands
  each to the producer. It returns one ``SentBatch`` per batch: the broker's acknowledgement future
  and the indices of the input records it carries, in input order. Record ``indices[i]`` got offset
  ``base_offset + i``.
- Records with ``partition=None`` are partitioned as Java's producer does: a keyed record goes to
  ``toPositive(murmur2(key)) % partitions``; unkeyed records of one ``send`` call stick to one
  partition per topic (Java's sticky partitioning, which changes partition per batch).
- Order: records for the same partition keep their input order; with an idempotent producer
  (the default) batches of one partition are written in submission order.
- Handing a batch to the producer goes through the sender's
  :class:`~pyconnect.kafka.target_lanes.TargetLanes` (see there): a batch whose target partition is not
  ready (the topic or the partition missing, a refused WRITE, a batch larger than the topic accepts, no
  leader) waits in that partition's lane instead of failing the task or holding up the batches of other
  partitions, and resumes within seconds of the target being ready; the task's conditions say why
  (:meth:`BatchSender.observe`). The futures ``send`` and ``send_raw`` return resolve on
  acknowledgement, or fail with what fails the task (a wait past ``pyconnect.target.wait.max.ms``, an
  error the target does not heal from), or with :class:`~pyconnect.kafka.target_lanes.SendAbandoned`
  after :meth:`BatchSender.abandon` (the task stops: the batch was never acknowledged). A record
  without a partition waits for its topic to exist (its partition needs the count).
- With ``metrics``, every batch handed over is counted (bytes, records) and held against the producer's
  buffer until its acknowledgement or failure (pyconnect.metrics.client_metrics).
- ``send_raw(topic, partition, builder)`` hands over one ready-made batch (a fetched record batch,
  :class:`~pyconnect.kafka.raw_batches_io.RawBatch`) the same way, after checking its size against
  ``max_request_size`` (aiokafka never splits a batch); counted in ``metrics`` as any batch.
- Topics the producer's metadata does not track yet are learnt together, in one metadata update per
  call (:meth:`BatchSender.learn_topics`, done by ``send`` and by the callers of ``send_raw``; waited for
  at most ``LEARN_WAIT_S``): the client would learn them one
  ``send_batch`` at a time, a metadata round trip each, and a first poll over a thousand new topics took
  minutes.
- As in Java, a record larger than the batch size travels in a batch of its own; a batch larger
  than the producer's ``max_request_size`` raises ``RecordTooLargeError`` before anything of that
  call is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from pyconnect.errors import ConnectError
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.clients import max_block_seconds
from pyconnect.kafka.parked_errors import read_parked_errors
from pyconnect.kafka.target_lanes import TargetLanes
from pyconnect.kafka.target_watch import TargetWatch
from pyconnect.metrics.client_metrics import ProducerMetrics

LEARN_WAIT_S = 10.0


class RecordTooLargeError(ConnectError, ValueError):
    """A record does not fit in one produce request (``max.request.size``)."""


@dataclass(slots=True)
class OutgoingRecord:
    """One serialized record to produce; ``timestamp_ms=None`` lets the producer stamp it."""

    topic: str
    key: bytes | None
    value: bytes | None
    partition: int | None = None
    timestamp_ms: int | None = None
    headers: Sequence[tuple[str, bytes]] = ()


@dataclass(slots=True)
class SentBatch:
    """One batch handed to the producer: ``future`` resolves to its metadata once acknowledged."""

    topic: str
    partition: int
    indices: list[int]
    future: asyncio.Future[Any] = field(repr=False)


def java_partition(key: bytes, partitions: int) -> int:
    """The partition Java's default partitioner picks for a keyed record."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def _released(release: Callable[[], None]) -> Callable[[asyncio.Future[Any]], None]:
    return lambda _done: release()


class BatchSender:
    """Sends record lists through one producer; see the module docstring."""

    def __init__(
        self,
        producer: AIOKafkaProducer,
        *,
        rng: random.Random | None = None,
        metrics: ProducerMetrics | None = None,
        watch: TargetWatch | None = None,
    ) -> None:
        self._producer = producer
        read_parked_errors(producer)
        self._metrics = metrics
        self._rng = rng or random.Random()
        self._partition_counts: dict[str, int] = {}
        self._max_block_s = max_block_seconds(producer)
        self.lanes = TargetLanes(producer)
        if watch is not None:
            self.lanes.observe(watch)

    def observe(self, watch: TargetWatch) -> None:
        """Report waits for the target to ``watch`` (the task's board, the target's name, the bounds)."""
        self.lanes.observe(watch)

    def abandon(self) -> None:
        """The task stops: batches waiting for their partition fail with ``SendAbandoned``."""
        self.lanes.abandon()

    def resume(self) -> None:
        """Wait for partitions again after :meth:`abandon` (a final transaction's offsets)."""
        self.lanes.resume()

    async def wait_settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the batches handed to the producer (not those abandoned)."""
        return await self.lanes.wait_settled(timeout)

    async def close(self) -> None:
        """Abandon and end the sender's own tasks (idempotent)."""
        await self.lanes.close()

    async def learn_topics(self, topics: Iterable[str]) -> None:
        """Track the topics of ``topics`` the producer's metadata does not track yet, in one metadata
        update (see the module docstring; a batch for a topic still unknown then waits in its lane)."""
        client = self._producer.client
        tracked = seam.client_topics(client)
        unknown = {topic for topic in topics if topic not in tracked}
        if unknown:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    client.set_topics(tracked | unknown), min(self._max_block_s, LEARN_WAIT_S)
                )

    async def send_raw(self, topic: str, partition: int, builder: Any) -> asyncio.Future[Any]:
        """One ready-made batch to ``topic``/``partition``; see the module docstring."""
        size = builder.size()
        limit = seam.max_request_bytes(self._producer)
        if size > limit:
            raise RecordTooLargeError(
                f"a record batch for {topic}-{partition} is {size} bytes, larger than max.request.size ({limit})"
            )
        future = await self.lanes.submit(topic, partition, builder, builder.record_count())
        if self._metrics is not None:
            future.add_done_callback(_released(self._metrics.sent(size, builder.record_count())))
        return future

    async def partition_count(self, topic: str) -> int:
        count = self._partition_counts.get(topic)
        if count is None:
            count = await self.lanes.partition_count(topic)
            self._partition_counts[topic] = count
        return count

    def forget_partition_counts(self) -> None:
        """Drop cached partition counts (after a topic grew)."""
        self._partition_counts.clear()

    async def send(self, records: Sequence[OutgoingRecord]) -> list[SentBatch]:
        groups: dict[tuple[str, int], list[int]] = {}
        sticky: dict[str, int] = {}
        for index, record in enumerate(records):
            partition = record.partition
            if partition is None:
                count = await self.partition_count(record.topic)
                if record.key is not None:
                    partition = java_partition(record.key, count)
                else:
                    partition = sticky.setdefault(record.topic, self._rng.randrange(count))
            groups.setdefault((record.topic, partition), []).append(index)

        await self.learn_topics({topic for topic, _ in groups})
        ready: list[tuple[str, int, Any, list[int]]] = []
        for (topic, partition), indices in groups.items():
            builder = self._producer.create_batch()
            carried: list[int] = []
            for index in indices:
                record = records[index]
                appended = builder.append(
                    timestamp=record.timestamp_ms,
                    key=record.key,
                    value=record.value,
                    headers=list(record.headers),
                )
                if appended is None:
                    ready.append((topic, partition, builder, carried))
                    builder, carried = self._producer.create_batch(), []
                    builder.append(
                        timestamp=record.timestamp_ms,
                        key=record.key,
                        value=record.value,
                        headers=list(record.headers),
                    )
                carried.append(index)
            ready.append((topic, partition, builder, carried))

        limit = seam.max_request_bytes(self._producer)
        for topic, partition, builder, _carried in ready:
            if builder.size() > limit:
                raise RecordTooLargeError(
                    f"a record for {topic}-{partition} is {builder.size()} bytes when serialized, "
                    f"larger than max.request.size ({limit})"
                )
        sent = []
        for topic, partition, builder, carried in ready:
            builder.close()
            future = await self.lanes.submit(topic, partition, builder, len(carried))
            if self._metrics is not None:
                future.add_done_callback(_released(self._metrics.sent(builder.size(), len(carried))))
            sent.append(SentBatch(topic, partition, carried, future))
        return sent
