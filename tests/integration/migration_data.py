"""Source data for the migration matrix, and reading it back on either cluster (real Kafka, aiokafka).

Contract:

- :class:`TopicSpec` describes one source topic: partitions, the producer's compression, whether it is
  written in transactions (every third one aborted), and on a pre-3.0 broker an old message format
  (``message.format.version``: ``0.9.0`` stores v0 messages, ``0.10.2`` v1; neither carries headers).
- :func:`fill` creates a topic and writes records ``first ... first+count-1``: key ``k<i>`` (none for
  ``i % 7 == 3``), a value (a tombstone for ``i % 11 == 5`` when keyed), up to three headers (repeated
  names, binary values) and the timestamp ``RECENT_MS + i``. Every write is acknowledged before it
  returns.
- :func:`read_rows` reads a topic under ``read_committed`` up to its last stable offsets, per partition
  as ``(key, value, headers, timestamp)`` (``None`` for a record without one: message format v0).
- :func:`differences` compares a target topic with its source per partition, in order.
- :class:`SteadyProducer` writes to some topics from its own thread until stopped, riding out a broker
  that stops and starts again meanwhile (a write that fails is skipped: the source stays the truth).
- :func:`wait_counts` times a copy from the target's end offsets (cheap enough to poll while the
  systems measured run); :func:`behind` is a copy's lag in records; :func:`grow_and_alter` adds
  partitions and changes configs of a source topic; :func:`commit` commits a group's offsets.

Every read and wait is bounded.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError
from aiokafka.structs import OffsetAndMetadata

from tests.integration.fleet import RECENT_MS

Headers = tuple[tuple[str, bytes], ...]
Row = tuple[bytes | None, bytes | None, Headers, int | None]
Rows = dict[int, list[Row]]
CHUNK = 2000
ABORT_EVERY = 3


@dataclass(frozen=True)
class TopicSpec:
    """One source topic of the matrix; ``name`` is the suffix after the run's prefix."""

    name: str
    partitions: int
    compression: str | None = None
    transactional: bool = False
    message_format: str | None = None
    configs: Mapping[str, str] = field(default_factory=dict)

    @property
    def headers(self) -> bool:
        return self.message_format is None

    def topic_configs(self) -> dict[str, str]:
        found = dict(self.configs)
        if self.message_format is not None:
            found["message.format.version"] = self.message_format
        return found


def record(i: int, headers: bool = True) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]], int]:
    """The ``i``-th record of every generated topic: key, value, headers, timestamp."""
    key = None if i % 7 == 3 else f"k{i}".encode()
    value = None if i % 11 == 5 and key is not None else f"v{i}-".encode() * (1 + i % 5)
    found = [("h", f"x{i}".encode()), ("h", b"\x00\xff"), ("n", str(i).encode())][: i % 4] if headers else []
    return key, value, found, RECENT_MS + i


async def create(bootstrap: str, topic: str, spec: TopicSpec) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, spec.partitions, 1, topic_configs=spec.topic_configs())])
    finally:
        await admin.close()


async def fill(bootstrap: str, topic: str, spec: TopicSpec, count: int, first: int = 0) -> None:
    """Create ``topic`` as ``spec`` says (when ``first`` is 0) and write ``count`` records to it, in
    round-robin over its partitions; transactional topics in transactions of 50, every third aborted."""
    if first == 0:
        await create(bootstrap, topic, spec)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        compression_type=spec.compression,
        linger_ms=5,
        transactional_id=f"{topic}-writer" if spec.transactional else None,
    )
    await producer.start()
    try:
        if spec.transactional:
            await _write_transactions(producer, topic, spec, count, first)
        else:
            await _write(producer, topic, spec, range(first, first + count))
    finally:
        await producer.stop()


async def _write(producer: AIOKafkaProducer, topic: str, spec: TopicSpec, numbers: range) -> None:
    pending = []
    for i in numbers:
        key, value, headers, timestamp = record(i, spec.headers)
        pending.append(
            await producer.send(
                topic, value, key=key, partition=i % spec.partitions, timestamp_ms=timestamp, headers=headers
            )
        )
        if len(pending) >= CHUNK:
            await asyncio.gather(*pending)
            pending.clear()
    await asyncio.gather(*pending)


async def _write_transactions(
    producer: AIOKafkaProducer, topic: str, spec: TopicSpec, count: int, first: int
) -> None:
    size = 50
    for n, start in enumerate(range(first, first + count, size)):
        await producer.begin_transaction()
        await _write(producer, topic, spec, range(start, min(start + size, first + count)))
        if n % ABORT_EVERY == ABORT_EVERY - 1:
            await producer.abort_transaction()
        else:
            await producer.commit_transaction()


async def grow_and_alter(bootstrap: str, topic: str, partitions: int, configs: Mapping[str, str]) -> None:
    """Add partitions to ``topic`` (to ``partitions`` in all) and set ``configs`` on it."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_partitions({topic: NewPartitions(partitions)})
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, dict(configs))])
    finally:
        await admin.close()


def _timestamp(value: int | None) -> int | None:
    return None if value is None or value < 0 else value


async def read_rows(bootstrap: str, topic: str, timeout_s: float = 120.0) -> Rows:
    """partition -> every committed record of ``topic`` up to its last stable offset (``{}`` when the
    topic does not exist); TimeoutError after ``timeout_s``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        isolation_level="read_committed",
        max_partition_fetch_bytes=4 * 1024 * 1024,
    )
    await consumer.start()
    try:
        metadata = await consumer._client.fetch_all_metadata()
        tps = [TopicPartition(topic, p) for p in sorted(metadata.partitions_for_topic(topic) or ())]
        rows: Rows = {tp.partition: [] for tp in tps}
        if not tps:
            return rows
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        pending = {tp for tp in tps if ends[tp] > 0}
        deadline = time.monotonic() + timeout_s
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"reading {topic}: {len(pending)} partitions unread after {timeout_s:.0f} s"
                )
            for tp, messages in (await consumer.getmany(*pending, timeout_ms=1000)).items():
                rows[tp.partition].extend(
                    (m.key, m.value, tuple(m.headers), _timestamp(m.timestamp))
                    for m in messages
                    if m.offset < ends[tp]
                )
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return rows
    finally:
        await consumer.stop()


def differences(source: Rows, target: Rows, *, not_before_ms: int | None = None) -> list[str]:
    """What makes ``target`` differ from ``source``: partition counts, then per partition the first
    record that differs (key, value, headers, timestamp) and the lengths. A source record without a
    timestamp (message format v0) matches any target timestamp from ``not_before_ms`` on."""
    found: list[str] = []
    if sorted(source) != sorted(target):
        found.append(f"partitions {sorted(target)} instead of {sorted(source)}")
    for p in sorted(set(source) & set(target)):
        want, got = source[p], target[p]
        for n, (expected, actual) in enumerate(zip(want, got, strict=False)):
            if expected[:3] != actual[:3] or not _same_time(expected[3], actual[3], not_before_ms):
                found.append(f"partition {p} record {n}: {actual!r} instead of {expected!r}")
                break
        if len(want) != len(got):
            found.append(f"partition {p}: {len(got)} records instead of {len(want)}")
    return found


def _same_time(source: int | None, target: int | None, not_before_ms: int | None) -> bool:
    if source is not None:
        return source == target
    return target is not None and (not_before_ms is None or target >= not_before_ms)


def counts(rows: Rows) -> dict[int, int]:
    return {p: len(r) for p, r in rows.items()}


async def end_counts(
    consumer: AIOKafkaConsumer, expected: Mapping[str, Mapping[int, int]]
) -> dict[str, dict[int, int]]:
    """The end offsets of the topics of ``expected`` whose partitions all exist (others left out)."""
    metadata = await consumer._client.fetch_all_metadata()
    tps = [
        TopicPartition(topic, p)
        for topic, wanted in expected.items()
        if set(wanted) <= set(metadata.partitions_for_topic(topic) or ())
        for p in wanted
    ]
    found: dict[str, dict[int, int]] = {}
    if tps:
        for tp, offset in (await consumer.end_offsets(tps)).items():
            found.setdefault(tp.topic, {})[tp.partition] = offset
    return found


@dataclass
class Progress:
    """When (``time.monotonic()``) a target first held a record of the expected topics, and when it
    held all of them (``None``: not within the bound)."""

    first: float | None = None
    done: float | None = None


async def _wait_counts(
    bootstrap: str,
    expected: Mapping[str, Mapping[str, Mapping[int, int]]],
    timeout_s: float,
    alive: Callable[[], None],
) -> dict[str, Progress]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    progress = {name: Progress() for name in expected}
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and any(p.done is None for p in progress.values()):
            alive()
            for name, topics in expected.items():
                if progress[name].done is not None:
                    continue
                try:
                    found = await end_counts(consumer, topics)
                except KafkaError:
                    continue
                now = time.monotonic()
                if progress[name].first is None and any(
                    n > 0 for ends in found.values() for n in ends.values()
                ):
                    progress[name].first = now
                if all(
                    found.get(t, {}).get(p, -1) >= n for t, want in topics.items() for p, n in want.items()
                ):
                    progress[name].done = now
            await asyncio.sleep(0.25)
        return progress
    finally:
        await consumer.stop()


def wait_counts(
    bootstrap: str,
    expected: Mapping[str, Mapping[str, Mapping[int, int]]],
    timeout_s: float,
    alive: Callable[[], None] = lambda: None,
) -> dict[str, Progress]:
    """Poll the end offsets on ``bootstrap`` of the topics of each name in ``expected`` (name -> topic
    -> partition -> records) until each reaches its count or ``timeout_s`` passed; per name when the
    first record and the last arrived. ``alive`` runs before each poll (a process's
    ``check_alive``, to fail at once with its reason)."""
    return asyncio.run(_wait_counts(bootstrap, expected, timeout_s, alive))


class SteadyProducer:
    """Writes :func:`record` numbers from ``first`` on, ``burst`` to each partition of every topic
    each ``interval_s``, from its own thread, until :meth:`stop`. A write the cluster does not acknowledge
    (a broker restarting) is dropped after ``request_timeout_ms`` and the writer goes on."""

    def __init__(
        self,
        bootstrap: str,
        topics: Mapping[str, TopicSpec],
        first: int,
        interval_s: float = 0.01,
        burst: int = 10,
    ) -> None:
        self.bootstrap = bootstrap
        self.topics = dict(topics)
        self.next = first
        self.interval_s = interval_s
        self.burst = burst
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name="steady-producer", daemon=True)
        self._error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> int:
        """Stop writing; the number of writes that failed. Re-raises what broke the thread."""
        self._stop.set()
        self._thread.join(timeout=60)
        assert not self._thread.is_alive(), "the steady producer did not stop"
        if self._error is not None:
            raise self._error
        return self.failed

    def _main(self) -> None:
        try:
            asyncio.run(self._produce())
        except BaseException as exc:
            self._error = exc

    async def _produce(self) -> None:
        producers = {
            topic: AIOKafkaProducer(
                bootstrap_servers=self.bootstrap,
                compression_type=spec.compression,
                linger_ms=5,
                request_timeout_ms=10000,
            )
            for topic, spec in self.topics.items()
        }
        for producer in producers.values():
            await producer.start()
        try:
            while not self._stop.is_set():
                sends = [self._send(producers[t], t, spec) for t, spec in self.topics.items()]
                await asyncio.gather(*sends)
                await asyncio.sleep(self.interval_s)
        finally:
            for producer in producers.values():
                await producer.stop()

    async def _send(self, producer: AIOKafkaProducer, topic: str, spec: TopicSpec) -> None:
        first, size = self.next, self.burst * spec.partitions
        acks: list[asyncio.Future[object]] = []
        try:
            for n in range(first, first + size):
                key, value, headers, timestamp = record(n, spec.headers)
                acks.append(
                    await producer.send(
                        topic,
                        value,
                        key=key,
                        partition=n % spec.partitions,
                        timestamp_ms=timestamp,
                        headers=headers,
                    )
                )
        except KafkaError:
            self.failed += 1
        outcomes = await asyncio.gather(*acks, return_exceptions=True)
        if any(isinstance(o, BaseException) for o in outcomes):
            self.failed += 1
            await asyncio.sleep(0.2)
        self.next = max(self.next, first + size)


async def _ends(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        metadata = await consumer._client.fetch_all_metadata()
        wanted = {topic: dict.fromkeys(metadata.partitions_for_topic(topic) or (), 0)}
        return (await end_counts(consumer, wanted)).get(topic, {})
    finally:
        await consumer.stop()


def behind(source: str, target: str, topic: str, remote: str) -> int:
    """How many records of ``topic`` on ``source`` are not on ``remote`` on ``target`` (end offsets,
    the target's read first)."""
    copied = sum(asyncio.run(_ends(target, remote)).values())
    return sum(asyncio.run(_ends(source, topic)).values()) - copied


async def commit(
    bootstrap: str, group: str, topic: str, offsets: Mapping[int, int], timeout_s: float = 60.0
) -> None:
    """Commit ``offsets`` (partition -> offset) of ``topic`` for ``group``, as an empty group does;
    retriable refusals (a fresh cluster still creating its offsets topic) are retried until
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, p) for p in offsets])
            await consumer.commit(
                {TopicPartition(topic, p): OffsetAndMetadata(o, "") for p, o in offsets.items()}
            )
            return
        except KafkaError as error:
            if not error.retriable or time.monotonic() > deadline:
                raise
        finally:
            await consumer.stop()
        await asyncio.sleep(0.5)
