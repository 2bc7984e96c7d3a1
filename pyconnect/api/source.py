"""Source tasks and their records (``org.apache.kafka.connect.source``).

Calling contract for :class:`SourceTask`: ``start``, ``poll``, ``commit``, ``commit_record`` and
``stop`` may be coroutines (run on the worker's event loop; they must never block it, and cost no
thread hop) or plain methods (run on one of the worker's plugin threads, :mod:`pyconnect.worker.plugin_calls`:
they may block as a Java task's do; a plain ``poll`` costs one thread hop per batch, the
``commit_record`` calls of one batch share one). A plain ``stop`` may run while a plain ``poll`` still
blocks on another thread, as in Java. ``version`` runs on a plugin thread once per start (1 s bound,
kept for the status reports). ``initialize`` and ``commit_record_batch`` run on the loop and must be
quick.

* ``initialize(context)`` then ``await start(props)``, then a loop of ``await poll()``. ``poll`` may
  wait for data, but should return within about a second so pause/stop stay responsive; ``None`` or
  an empty list means "nothing now". A :class:`~pyconnect.errors.RetriableError` from ``poll`` means
  the same and the loop polls again; any other exception fails the task.
* To stop, the runtime calls ``await stop()`` and then cancels a ``poll`` still pending. ``poll``
  must therefore be cancellation-safe: it must not advance its own position before it returns the
  records (a cancelled poll's records are never sent). ``stop`` is bounded by
  ``task.shutdown.graceful.timeout.ms``.
* ``commit_record(record, metadata)`` runs after each record is acknowledged by Kafka (``metadata``
  ``None`` if it was filtered or dropped); ``commit()`` after each offset flush. Both may run while
  ``poll`` is pending; exceptions from them are logged and ignored.
* A task that overrides ``commit_record_batch(records, topic, partition, base_offset)`` gets it instead
  of ``commit_record`` for acknowledged records: one synchronous call per acknowledged producer batch,
  whose ``records`` (in send order) were written to ``topic``/``partition`` at ``base_offset``,
  ``base_offset + 1``, ... (no per-record metadata objects or coroutines: the batch-first data path).
  Records dropped before sending still go to ``commit_record(record, None)``.

Raw record batches (pyconnect's own extension, for tasks that copy Kafka record batches as they are,
e.g. MirrorSourceTask): a task that overrides ``accept_raw_batches`` is told once, on the loop after
``initialize`` and before ``start``, whether it may return :class:`RawRecordBatch` items from ``poll``
among its SourceRecords: it gets a :class:`RawBatchTarget` when the worker can write them unchanged
(key, value and header converters all ``ByteArrayConverter``, no transformation), else ``None``, and
then must return SourceRecords only; it answers whether it will return any. The worker produces each item as one batch through the task's
producer (inside the task's transaction under exactly-once), in poll order with the records of the
same call, so per target partition the order is kept; the item's source offset commits like a
record's once the whole batch is acknowledged; ``commit_raw_batch(item, base_offset)`` (on the loop,
quick, exceptions logged) then says where it was written: record ``i`` of the batch at
``base_offset + i``. Task metrics (polled, written) count the item's ``record_count`` records.

Offsets: ``source_partition``/``source_offset`` are maps with ``str`` keys and ``str``/``int``/
``float``/``bool``/``None`` values, stored as JSON in the offsets topic (integers read back as ``int``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from pyconnect.api.data import Schema
from pyconnect.errors import ConnectError

if TYPE_CHECKING:
    from pyconnect.conditions import ConditionBoard
    from pyconnect.metrics.registry import MetricsHub


class Header(NamedTuple):
    """One Connect header: key, optional schema and value (converted by the header converter)."""

    key: str
    schema: Schema | None
    value: Any


class SourceRecord:
    """One record produced by a source task. Plain slots: building one costs a few attribute stores."""

    __slots__ = (
        "headers",
        "kafka_partition",
        "key",
        "key_schema",
        "source_offset",
        "source_partition",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None,
        source_offset: Mapping[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Sequence[Header] = (),
    ) -> None:
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self.headers = headers

    def new_record(self, **changes: Any) -> SourceRecord:
        """A copy with some fields replaced (what transformations use)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return SourceRecord(**fields)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceRecord):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SourceRecord{{sourcePartition={self.source_partition}, sourceOffset={self.source_offset}}} "
            f"ConnectRecord{{topic='{self.topic}', kafkaPartition={self.kafka_partition}, key={self.key!r}, "
            f"keySchema={self.key_schema}, value={self.value!r}, valueSchema={self.value_schema}, "
            f"timestamp={self.timestamp}, headers={list(self.headers)}}}"
        )


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where Kafka stored an acknowledged record (passed to ``commit_record``)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class RawBatchTarget:
    """What a task returning :class:`RawRecordBatch` items must respect: the codec id of the target
    producer's ``compression.type`` (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd: a batch is copied only in
    that codec) and the largest batch the producer may send (``max.request.size``)."""

    compression_codec: int
    max_batch_bytes: int


@dataclass(frozen=True, slots=True)
class RawRecordBatch:
    """One Kafka record batch (v2 format) to write to ``topic``/``kafka_partition`` as it is.

    ``data`` holds exactly one batch's bytes (base offset to end), as fetched or as the connector
    re-framed them (a LogAppendTime batch restamped as CreateTime); the worker rewrites only
    the producer state (base offset, leader epoch, producer id, epoch, sequence, transactional bit)
    and the CRC. It must be a batch the broker accepts from a client: contiguous offsets
    (``record_count`` records), CreateTime, not a control batch, compressed with
    ``RawBatchTarget.compression_codec``, at most ``RawBatchTarget.max_batch_bytes``.
    ``source_partition``/``source_offset`` are what the record path would commit after the batch's
    last record; ``first_offset`` is the upstream offset of its first record (the others follow one
    by one), ``first_timestamp``/``max_timestamp`` its header's timestamps."""

    source_partition: Mapping[str, Any] | None
    source_offset: Mapping[str, Any] | None
    topic: str
    kafka_partition: int
    data: bytes | bytearray | memoryview
    record_count: int
    first_offset: int
    first_timestamp: int
    max_timestamp: int


class OffsetStorageReader(Protocol):
    """Reads committed source offsets of the task's connector. Reads reflect the offsets topic."""

    async def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last committed offset for ``partition``, or ``None``."""
        ...

    async def offsets(self, partitions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        """One entry per requested partition, in order (``None`` where there is no offset)."""
        ...


class MemoryOffsetStorageReader:
    """An :class:`OffsetStorageReader` over a list of ``(partition, offset)`` pairs (tests, tools)."""

    def __init__(self, entries: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = ()) -> None:
        self._entries = [(dict(p), None if o is None else dict(o)) for p, o in entries]

    async def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return (await self.offsets([partition]))[0]

    async def offsets(self, partitions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        found: list[dict[str, Any] | None] = []
        for wanted in partitions:
            match = None
            for partition, offset in self._entries:
                if partition == dict(wanted):
                    match = offset
            found.append(None if match is None else dict(match))
        return found


class TransactionContext:
    """Connector-defined transaction boundaries (KIP-618, Java ``TransactionContext``): given to a task
    as ``context.transaction_context`` when the worker has ``exactly.once.source.support=enabled`` and
    the connector ``transaction.boundary=connector`` (else it is ``None``).

    Called from ``poll`` (on the records it is about to return): ``commit_transaction(record)`` commits
    the open transaction right after ``record`` is dispatched; ``abort_transaction(record)`` aborts it
    there (the records of the transaction are never visible to ``read_committed`` readers, but their
    source offsets are still committed, so they are not read again); without a record, the request
    applies at the end of the batch ``poll`` returns. Records are matched by identity. Asking to commit
    and abort the same record (or batch) fails the task. The runtime's side (``should_*``) consumes
    each request once."""

    def __init__(self) -> None:
        self._commit: dict[int, SourceRecord] = {}
        self._abort: dict[int, SourceRecord] = {}
        self._commit_batch = False
        self._abort_batch = False

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        if record is None:
            self._commit_batch = True
        else:
            self._commit[id(record)] = record

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        if record is None:
            self._abort_batch = True
        else:
            self._abort[id(record)] = record

    def should_commit_batch(self) -> bool:
        self._check_batch()
        requested, self._commit_batch = self._commit_batch, False
        return requested

    def should_abort_batch(self) -> bool:
        self._check_batch()
        requested, self._abort_batch = self._abort_batch, False
        return requested

    def should_commit_on(self, record: SourceRecord) -> bool:
        self._check_record(record)
        return self._commit.pop(id(record), None) is not None

    def should_abort_on(self, record: SourceRecord) -> bool:
        self._check_record(record)
        return self._abort.pop(id(record), None) is not None

    def _check_batch(self) -> None:
        if self._commit_batch and self._abort_batch:
            raise IllegalTransactionRequest("Connector requested both commit and abort of same transaction")

    def _check_record(self, record: SourceRecord) -> None:
        if id(record) in self._commit and id(record) in self._abort:
            raise IllegalTransactionRequest(
                "Connector requested both commit and abort of same record against topic/partition "
                f"{record.topic}/{record.kafka_partition}"
            )


class IllegalTransactionRequest(ConnectError, RuntimeError):
    """Java's ``IllegalStateException`` from ``WorkerTransactionContext``: the task fails."""


@dataclass(frozen=True, slots=True)
class SourceTaskContext:
    """What the runtime hands a task: its config and its connector's offsets, and the worker's
    metrics hub (``None`` outside a worker) in which a task may register its own registries
    (removing them when it stops), as Java tasks register their own metrics with the JMX server."""

    config: Mapping[str, str]
    offset_storage_reader: OffsetStorageReader
    transaction_context: TransactionContext | None = None
    metrics: MetricsHub | None = None
    conditions: ConditionBoard | None = None
    """The task's conditions (pyconnect's, pyconnect.conditions; ``None`` outside a worker): a condition
    the task keeps retrying through rather than failing on (a cluster it cannot reach, an ACL that
    refuses it) is raised with ``conditions.set(code, message, ...)`` and removed with ``clear``; while
    any is active the status stays RUNNING and carries them as its ``trace``, and ``GET /mirrors``,
    ``pyconnect status`` and ``/metrics`` show them with their code."""


class SourceTask:
    """Base class of source tasks; see the module docstring for the calling contract."""

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    def version(self) -> str:
        raise NotImplementedError

    async def start(self, props: Mapping[str, str]) -> None:
        raise NotImplementedError

    async def poll(self) -> Sequence[SourceRecord | RawRecordBatch] | None:
        raise NotImplementedError

    async def commit(self) -> None:
        return None

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        return None

    def commit_record_batch(
        self, records: Sequence[SourceRecord], topic: str, partition: int, base_offset: int
    ) -> None:
        """Acknowledged records of one producer batch (see the module docstring); overriding it
        replaces ``commit_record`` for acknowledged records."""
        return None

    def accept_raw_batches(self, target: RawBatchTarget | None) -> bool:
        """Whether ``poll`` may return :class:`RawRecordBatch` items (see the module docstring); the
        answer says whether it will (the worker then looks for them in what ``poll`` returns)."""
        return False

    def commit_raw_batch(self, batch: RawRecordBatch, base_offset: int) -> None:
        """A :class:`RawRecordBatch` acknowledged at ``base_offset`` (see the module docstring)."""
        return None

    async def stop(self) -> None:
        raise NotImplementedError
