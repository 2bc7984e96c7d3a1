"""KafkaLog: tail a (compacted) topic from the beginning, append to it, and wait for read-to-end.

The one primitive under the config, offset and status stores (Java's KafkaBasedLog).

Contract:
- ``start()`` assigns every partition of the topic (or the ones given), seeks to the beginning,
  reads to the end once, then keeps tailing in a background task owned by this log. It returns only
  after that first read-to-end, so the caller's state is complete when ``start()`` returns.
- ``on_records`` is called from the tail task, in partition order within each partition, with
  batches of ``LogRecord``. An exception it raises is logged with the topic and the tail goes on:
  a bad record never stops the log (the stores skip what they cannot decode).
- ``read_to_end()`` returns once every record that was in the topic when it was called has been
  handed to ``on_records`` (the barrier the herder uses before acting on config). The caller asks
  the end offsets itself and returns at once when the tail has already consumed that far (the usual
  case after a write of our own: the tail's long-poll fetch brought the record back before the
  producer's acknowledgement); otherwise the tail releases the barrier when it consumes the missing
  records, and checks at least every ``poll_timeout_ms`` (a position can pass the end without a
  record, e.g. over transaction markers).
- ``send()`` appends one record and returns the broker's acknowledgement future; records sent
  through one log reach each partition in send order (idempotent producer, acks=all).
  ``send_now()`` appends records to one partition in closed batches, so they leave without waiting
  ``linger.ms``: for a caller that awaits the acknowledgement before it writes anything else (the
  config store's writes), lingering only adds its delay.
- ``stop()`` is idempotent; it ends the tail task and closes both clients.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from pyconnect.concurrency import cancel_and_wait
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.kafka.end_offsets import end_offsets

TOPIC_METADATA_WAIT_S = 30.0
"""How long ``start`` looks for a topic missing from the metadata (Java's ``CREATE_TOPIC_TIMEOUT``)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One record of the tailed topic; ``value`` is None for a tombstone."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()


RecordsCallback = Callable[[Sequence[LogRecord]], None]

CATCH_UP_POLL_MS = 10
"""How long the tail waits for records while a read-to-end waits on it (it returns as soon as records come)."""


class KafkaLog:
    """Tail-and-append access to one topic; see the module docstring for the contract."""

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        on_records: RecordsCallback,
        *,
        producer_config: Mapping[str, Any] | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        partitions: Sequence[int] | None = None,
        read_only: bool = False,
        poll_timeout_ms: int = 100,
        topic_wait_s: float = TOPIC_METADATA_WAIT_S,
    ) -> None:
        self.topic = topic
        self._topic_wait_s = topic_wait_s
        self._client_config = dict(client_config)
        self._producer_config = dict(producer_config or {})
        self._consumer_config = dict(consumer_config or {})
        self._on_records = on_records
        self._wanted_partitions = list(partitions) if partitions is not None else None
        self._read_only = read_only
        self._poll_timeout_ms = poll_timeout_ms
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._partitions: list[TopicPartition] = []
        self._tail: asyncio.Task[None] | None = None
        self._barriers: list[tuple[dict[TopicPartition, int], asyncio.Future[None]]] = []

    @property
    def partitions(self) -> list[int]:
        return [tp.partition for tp in self._partitions]

    async def _wait_for_partitions(self, consumer: AIOKafkaConsumer) -> set[int]:
        """The topic's partitions, looked up again (100 ms doubling to 1 s) for up to ``topic_wait_s``
        while the metadata has none: a topic another worker just created reaches every broker's
        metadata a moment later (Java's KafkaBasedLog waits 30 s the same way)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._topic_wait_s
        pause = 0.1
        while True:
            available = consumer.partitions_for_topic(self.topic)
            if not available:
                await seam.consumer_client(consumer).force_metadata_update()
                available = consumer.partitions_for_topic(self.topic)
            if available:
                return set(available)
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await asyncio.sleep(min(pause, remaining))
            pause = min(2 * pause, 1.0)
        if self._topic_wait_s <= 0:
            raise LookupError(f"topic {self.topic} does not exist")
        raise LookupError(
            f"Could not look up partition metadata for topic '{self.topic}' in the allotted period. This could "
            "indicate a connectivity issue, unavailable topic partitions, or if this is your first use of the "
            "topic it may have taken too long to create."
        )

    async def start(self) -> None:
        if self._tail is not None:
            return
        consumer = create_consumer(
            {**self._client_config, **self._consumer_config},
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        self._consumer = consumer
        try:
            await consumer.start()
            available = await self._wait_for_partitions(consumer)
            numbers = sorted(available) if self._wanted_partitions is None else self._wanted_partitions
            self._partitions = [TopicPartition(self.topic, p) for p in numbers]
            # Every leader answers before the consumer resets its positions: the reset's own retry on
            # a just-created topic waits retry.backoff.ms per round, ours starts at 20 ms.
            await end_offsets(
                seam.consumer_client(consumer),
                self._partitions,
                timeout_s=seam.consumer_request_timeout_ms(consumer) / 1000,
            )
            consumer.assign(self._partitions)
            await consumer.seek_to_beginning(*self._partitions)
            if not self._read_only:
                self._producer = create_producer({**self._client_config, **self._producer_config})
                await self._producer.start()
            self._tail = asyncio.create_task(self._run(), name=f"kafka-log-{self.topic}")
            await self.read_to_end()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        tail, self._tail = self._tail, None
        try:
            await cancel_and_wait(tail, log=None)  # _run logged its own failure
        finally:  # the clients are closed even when this stop is cancelled
            self._fail_barriers(RuntimeError(f"KafkaLog {self.topic} stopped"))
            producer, self._producer = self._producer, None
            consumer, self._consumer = self._consumer, None
            try:
                if producer is not None:
                    await producer.stop()
            finally:
                if consumer is not None:
                    await consumer.stop()

    async def read_to_end(self) -> None:
        tail, consumer = self._tail, self._consumer
        if tail is None or consumer is None or tail.done():
            raise RuntimeError(f"KafkaLog {self.topic} is not started or stopped tailing")
        # Java's KafkaBasedLog: even a read_committed tail reads until its position reaches the
        # read_uncommitted end (the high watermark), so that a transaction just committed (whose
        # markers may not be written yet, leaving the last stable offset behind it) is read too.
        targets = await end_offsets(
            seam.consumer_client(consumer),
            self._partitions,
            read_committed=False,
            timeout_s=seam.consumer_request_timeout_ms(consumer) / 1000,
        )
        if await self._reached(consumer, targets):
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._barriers.append((targets, fut))
        await fut

    @staticmethod
    async def _reached(consumer: AIOKafkaConsumer, targets: Mapping[TopicPartition, int]) -> bool:
        """Whether the tail consumed up to ``targets``. The tail hands what ``getmany`` drained to
        ``on_records`` in the same step that moved the positions, so a position at the target means
        the records before it were delivered."""
        for tp, end in targets.items():
            if await consumer.position(tp) < end:
                return False
        return True

    async def _release_barriers(self, consumer: AIOKafkaConsumer) -> None:
        for targets, fut in list(self._barriers):
            if fut.done() or await self._reached(consumer, targets):
                self._barriers.remove((targets, fut))
                if not fut.done():
                    fut.set_result(None)

    def _fail_barriers(self, error: Exception) -> None:
        barriers, self._barriers = self._barriers, []
        for _, fut in barriers:
            if not fut.done():
                fut.set_exception(error)

    async def send(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[Any]:
        """Enqueue one record; await the returned future for the broker's acknowledgement."""
        if self._producer is None:
            raise RuntimeError(f"KafkaLog {self.topic} is not started or is read-only")
        return await self._producer.send(
            self.topic, value=value, key=key, partition=partition, headers=list(headers or ())
        )

    async def send_now(
        self, records: Sequence[tuple[bytes | None, bytes | None]], *, partition: int
    ) -> list[asyncio.Future[Any]]:
        """Append ``records`` to ``partition`` in order, in as few batches as ``batch.size`` allows,
        each closed so the sender takes it at once; returns each batch's acknowledgement future."""
        producer = self._producer
        if producer is None:
            raise RuntimeError(f"KafkaLog {self.topic} is not started or is read-only")
        acks: list[asyncio.Future[Any]] = []
        batch = producer.create_batch()
        for key, value in records:
            if batch.append(key=key, value=value, timestamp=None) is None:
                batch.close()
                acks.append(await producer.send_batch(batch, self.topic, partition=partition))
                batch = producer.create_batch()
                batch.append(key=key, value=value, timestamp=None)  # the first record always fits
        if batch.record_count():
            batch.close()
            acks.append(await producer.send_batch(batch, self.topic, partition=partition))
        return acks

    async def _run(self) -> None:
        try:
            await self._tail_loop()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("KafkaLog %s: tailing failed", self.topic)
            self._fail_barriers(RuntimeError(f"KafkaLog {self.topic} stopped tailing: {exc}"))
            raise

    async def _tail_loop(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while True:
            timeout_ms = CATCH_UP_POLL_MS if self._barriers else self._poll_timeout_ms
            batch = await consumer.getmany(*self._partitions, timeout_ms=timeout_ms)
            if batch:
                self._deliver(batch)
            if self._barriers:
                await self._release_barriers(consumer)

    def _deliver(self, batch: Mapping[TopicPartition, Sequence[Any]]) -> None:
        records = [
            LogRecord(m.topic, m.partition, m.offset, m.timestamp, m.key, m.value, tuple(m.headers or ()))
            for tp in sorted(batch, key=lambda t: t.partition)
            for m in batch[tp]
        ]
        try:
            self._on_records(records)
        except Exception:
            log.exception(
                "KafkaLog %s: the records callback failed on %d record(s); tailing goes on",
                self.topic,
                len(records),
            )
