"""The benchmark's Kafka side: topics, sequence-numbered traffic at a fixed rate, and reading it back.

Timestamps: every topic the benchmark creates, source and target, has
``message.timestamp.type=LogAppendTime``, but the backlog sources of the throughput-like scenarios
(``BenchSettings.backlog_timestamps``, Kafka's default CreateTime unless asked otherwise). MirrorMaker 2 copies the source record's timestamp into the
record it produces, so with CreateTime on the target the target timestamp would be the *source's*
and latency would read as zero; with LogAppendTime the target broker stamps its own append time. The
benchmark therefore pre-creates each target topic (``<alias>.<topic>``, same partition count) before
the connector starts, and end-to-end latency is target append time minus source append time, matched
by the sequence number each value carries (robust to duplicates and reordering). Both brokers run on
this machine, so they share one clock; the resolution is one millisecond.

Values are ``SEQ_BYTES`` big-endian sequence-number bytes padded to the record size; keys are null,
as with ProducerPerformance. Every loop here is bounded in count and time. Kafka clients come from
``pyconnect.kafka`` (the one package that imports aiokafka).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pyconnect.kafka.clients import create_admin, create_consumer, create_producer
from pyconnect.kafka.log import TopicPartition
from pyconnect.kafka.topics import TopicSpec, ensure_topic

SEQ = struct.Struct(">q")
LOG_APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}


def value_for(seq: int, size: int) -> bytes:
    """``size`` bytes (at least 8) whose first 8 are ``seq`` big-endian."""
    return SEQ.pack(seq) + b"x" * max(0, size - SEQ.size)


def seq_of(value: bytes | None) -> int | None:
    if value is None or len(value) < SEQ.size:
        return None
    return int(SEQ.unpack_from(value)[0])


def run(coro: object, timeout: float) -> object:
    """Run one coroutine to completion on a fresh event loop, bounded by ``timeout`` seconds."""

    async def bounded() -> object:
        return await asyncio.wait_for(coro, timeout)  # type: ignore[arg-type]

    return asyncio.run(bounded())


async def _create_topics(
    bootstrap: str, names: Iterable[str], partitions: int, configs: dict[str, str]
) -> None:
    admin = create_admin({"bootstrap.servers": bootstrap}, request_timeout_ms=30000)
    await admin.start()
    try:
        for name in names:
            await ensure_topic(admin, TopicSpec(name, partitions, 1, configs))
    finally:
        await admin.close()


def create_topics(
    bootstrap: str, names: Iterable[str], partitions: int, configs: dict[str, str] | None = None
) -> None:
    """Create each topic with LogAppendTime (unless ``configs`` says otherwise); existing topics are left alone."""
    run(
        _create_topics(
            bootstrap, list(names), partitions, dict(LOG_APPEND_TIME if configs is None else configs)
        ),
        60,
    )


async def _end_offsets(bootstrap: str, topic: str) -> int:
    consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic)
        if not parts:
            await consumer._client.force_metadata_update()
            parts = consumer.partitions_for_topic(topic) or set()
        if not parts:
            return 0
        offsets = await consumer.end_offsets([TopicPartition(topic, p) for p in parts])
        return int(sum(offsets.values()))
    finally:
        await consumer.stop()


class OffsetWatcher:
    """Polls the summed end offset of one topic, reusing one consumer on a private event loop.

    For the throughput and start-up timelines: ``count()`` costs one ListOffsets round trip.
    """

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self._loop = asyncio.new_event_loop()
        self._consumer: Any = self._loop.run_until_complete(asyncio.wait_for(self._start(bootstrap), 30))
        self._partitions: list[TopicPartition] = []

    @staticmethod
    async def _start(bootstrap: str) -> Any:
        consumer = create_consumer({"bootstrap.servers": bootstrap}, enable_auto_commit=False)
        await consumer.start()
        return consumer

    def count(self) -> int:
        return int(self._loop.run_until_complete(asyncio.wait_for(self._count(), 15)))

    async def _count(self) -> int:
        if not self._partitions:
            parts = self._consumer.partitions_for_topic(self.topic)
            if not parts:
                await self._consumer._client.force_metadata_update()
                parts = self._consumer.partitions_for_topic(self.topic)
            if not parts:
                return 0
            self._partitions = [TopicPartition(self.topic, p) for p in sorted(parts)]
        offsets = await self._consumer.end_offsets(self._partitions)
        return int(sum(offsets.values()))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.run_until_complete(asyncio.wait_for(self._consumer.stop(), 15))
        self._loop.close()


def end_offset_total(bootstrap: str, topic: str) -> int:
    return int(run(_end_offsets(bootstrap, topic), 30))  # type: ignore[call-overload]


@dataclass
class TopicContents:
    """What a topic holds, by sequence number: the first append timestamp of each, plus counts."""

    timestamps: dict[int, int] = field(default_factory=dict)
    records: int = 0

    @property
    def duplicates(self) -> int:
        return self.records - len(self.timestamps)


async def _read_all(bootstrap: str, topic: str, idle_s: float, max_s: float) -> TopicContents:
    consumer = create_consumer(
        {"bootstrap.servers": bootstrap},
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=4 * 1024 * 1024,
    )
    await consumer.start()
    out = TopicContents()
    try:
        await consumer._client.force_metadata_update()
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not parts:
            return out
        consumer.assign(parts)
        await consumer.seek_to_beginning(*parts)
        ends = await consumer.end_offsets(parts)
        deadline = time.monotonic() + max_s
        last_progress = time.monotonic()
        while time.monotonic() < deadline:
            positions = [await _position(consumer, tp) for tp in parts]
            if all(pos >= ends[tp] for pos, tp in zip(positions, parts, strict=True)):
                break
            got = await consumer.getmany(timeout_ms=500, max_records=20000)
            if got:
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > idle_s:
                break
            for messages in got.values():
                for m in messages:
                    out.records += 1
                    seq = seq_of(m.value)
                    if seq is not None and seq not in out.timestamps:
                        out.timestamps[seq] = m.timestamp
    finally:
        await consumer.stop()
    return out


async def _position(consumer: Any, tp: TopicPartition) -> int:
    return int(await consumer.position(tp))


def read_all(bootstrap: str, topic: str, *, idle_s: float = 10.0, max_s: float = 180.0) -> TopicContents:
    """Every record of ``topic`` up to its end offsets at the start of the read (bounded by ``max_s``)."""
    return run(_read_all(bootstrap, topic, idle_s, max_s), max_s + 30)  # type: ignore[return-value]


@dataclass
class RateProducer:
    """Produces sequence-numbered records to ``topic`` at a fixed rate on its own thread and event loop.

    ``produce(rate, seconds)`` appends one phase and blocks until it is sent and acknowledged;
    ``start_background(rate, max_seconds)`` runs one phase on the thread until ``stop_background()`` or
    the bound. ``next_seq`` is the next sequence number; phases number records consecutively.
    Producer settings: acks=all, linger.ms=5 (the Java producer's default in Kafka 4).
    """

    bootstrap: str
    topic: str
    size: int = 100
    next_seq: int = 0
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)
    _error: BaseException | None = field(default=None, init=False, repr=False)

    def produce(self, rate: float, seconds: float) -> tuple[int, int, float]:
        """One phase at ``rate`` records/s for ``seconds``: ``(first_seq, last_seq_exclusive, achieved_rate)``."""
        self._stop.clear()
        first = self.next_seq
        started = time.monotonic()
        asyncio.run(asyncio.wait_for(self._phase(rate, seconds), seconds + 60))
        elapsed = max(time.monotonic() - started, 1e-9)
        return first, self.next_seq, (self.next_seq - first) / elapsed

    async def _phase(self, rate: float, seconds: float) -> None:
        producer = create_producer({"bootstrap.servers": self.bootstrap, "acks": "all", "linger.ms": 5})
        await producer.start()
        try:
            started = time.monotonic()
            total = int(rate * seconds)
            tick = max(1, int(rate / 100))
            sent = 0
            pending: list[asyncio.Future[object]] = []
            while sent < total and not self._stop.is_set() and time.monotonic() - started < seconds + 30:
                for _ in range(min(tick, total - sent)):
                    pending.append(await producer.send(self.topic, value=value_for(self.next_seq, self.size)))
                    self.next_seq += 1
                    sent += 1
                if len(pending) > 5000:
                    await asyncio.gather(*pending)
                    pending.clear()
                delay = started + sent / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            await asyncio.gather(*pending)
        finally:
            await producer.stop()

    def start_background(self, rate: float, max_seconds: float) -> None:
        def body() -> None:
            try:
                self.produce(rate, max_seconds)
            except BaseException as exc:  # reported by stop_background
                self._error = exc

        self._stop.clear()
        self._thread = threading.Thread(target=body, name="rate-producer", daemon=True)
        self._thread.start()

    def stop_background(self, timeout: float = 60.0) -> int:
        """Stop the background phase; returns how many records were produced in total."""
        self._stop.set()
        if self._thread:
            self._thread.join(timeout)
        if self._error:
            raise RuntimeError(f"rate producer failed: {self._error!r}") from self._error
        return self.next_seq
