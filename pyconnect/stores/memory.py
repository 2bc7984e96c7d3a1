"""An in-memory stand-in for a Kafka topic and for :class:`pyconnect.kafka.log.KafkaLog`.

The in-memory twins of the stores (``MemoryConfigStore``, ``MemoryOffsetStore``, ``MemoryStatusStore``)
are the Kafka-backed stores wired to a :class:`MemoryTopic`, so both run the same reader state
machines on the same record bytes. Several stores may share one ``MemoryTopic`` to play several
workers on one cluster.

Contract (mirrors ``KafkaLog``):
- ``MemoryLog.start()`` delivers every record already in the topic, then returns.
- ``send()`` appends at once (partition = Kafka's murmur2 partitioner for keyed records) and returns
  an already-completed acknowledgement future (or a failed one, see :meth:`MemoryTopic.fail_sends`);
  ``send_now()`` does the same for several records to one partition.
- Other started logs of the topic receive new records from a ``loop.call_soon`` callback (the "tail");
  ``read_to_end()`` delivers anything still pending before it returns. Delivery is in offset order
  per partition, each batch is handed to ``on_records`` and an exception from it is logged.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from pyconnect.kafka.batch_sender import java_partition
from pyconnect.kafka.log import LogRecord

log = logging.getLogger(__name__)

RecordsCallback = Callable[[Sequence[LogRecord]], None]


class MemoryTopic:
    """The records of one topic, shared by every :class:`MemoryLog` opened on it."""

    def __init__(self, name: str = "memory-topic", partitions: int = 1) -> None:
        self.name = name
        self.partition_count = partitions
        self.records: list[list[LogRecord]] = [[] for _ in range(partitions)]
        self._logs: list[MemoryLog] = []
        self._failures: list[BaseException] = []
        self._round_robin = itertools.count()
        self._clock = itertools.count(1)

    def fail_sends(self, *errors: BaseException) -> None:
        """The next ``len(errors)`` sends fail with these errors (in order) and append nothing."""
        self._failures.extend(errors)

    def append(self, key: bytes | None, value: bytes | None, partition: int | None = None) -> LogRecord:
        """Append a raw record (tests use this to inject what another writer, or garbage, would)."""
        if partition is None:
            partition = (
                java_partition(key, self.partition_count)
                if key is not None
                else next(self._round_robin) % self.partition_count
            )
        records = self.records[partition]
        record = LogRecord(self.name, partition, len(records), next(self._clock), key, value)
        records.append(record)
        for memory_log in self._logs:
            memory_log._schedule()
        return record

    async def prepare(self) -> None:
        """Nothing to create: the topic exists with its fixed partition count."""

    def open(self, on_records: RecordsCallback, *, read_only: bool = False) -> MemoryLog:
        return MemoryLog(self, on_records, read_only=read_only)

    def all_records(self) -> list[LogRecord]:
        return [r for partition in self.records for r in partition]


class MemoryLog:
    """A ``KafkaLog`` over a :class:`MemoryTopic` (same methods and delivery contract)."""

    def __init__(self, topic: MemoryTopic, on_records: RecordsCallback, *, read_only: bool = False) -> None:
        self.topic = topic.name
        self._memory_topic = topic
        self._on_records = on_records
        self._read_only = read_only
        self._positions = [0] * topic.partition_count
        self._started = False
        self._scheduled = False

    @property
    def partitions(self) -> list[int]:
        return list(range(self._memory_topic.partition_count))

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._memory_topic._logs.append(self)
        self._deliver()

    async def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self._memory_topic._logs.remove(self)

    async def read_to_end(self) -> None:
        if not self._started:
            raise RuntimeError(f"MemoryLog {self.topic} is not started")
        self._deliver()

    async def send(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        partition: int | None = None,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[Any]:
        if not self._started or self._read_only:
            raise RuntimeError(f"MemoryLog {self.topic} is not started or is read-only")
        ack: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        topic = self._memory_topic
        if topic._failures:
            ack.set_exception(topic._failures.pop(0))
            return ack
        record = topic.append(key, value, partition)
        ack.set_result(record)
        return ack

    async def send_now(
        self, records: Sequence[tuple[bytes | None, bytes | None]], *, partition: int
    ) -> list[asyncio.Future[Any]]:
        return [await self.send(key, value, partition=partition) for key, value in records]

    def _schedule(self) -> None:
        if self._started and not self._scheduled:
            self._scheduled = True
            try:
                asyncio.get_running_loop().call_soon(self._tail)
            except RuntimeError:
                self._scheduled = False

    def _tail(self) -> None:
        self._scheduled = False
        if self._started:
            self._deliver()

    def _deliver(self) -> None:
        for partition, records in enumerate(self._memory_topic.records):
            start = self._positions[partition]
            if start >= len(records):
                continue
            batch = records[start:]
            self._positions[partition] = len(records)
            try:
                self._on_records(batch)
            except Exception:
                log.exception(
                    "MemoryLog %s: the records callback failed on %d record(s)", self.topic, len(batch)
                )
