"""Sink connectors, sink tasks and their records (``org.apache.kafka.connect.sink``).

Calling contract for :class:`SinkTask` (the runtime's side is :mod:`pyconnect.worker.sink_task`):

* ``start``, ``put``, ``flush``, ``pre_commit``, ``open``, ``close`` and ``stop`` may be coroutines
  (run on the worker's event loop; they must never block it) or plain methods (run on one of the
  worker's plugin threads, :mod:`pyconnect.worker.plugin_calls`: they may block, as a Java task's do).
  The runtime never calls two of them at once, except that a plain ``stop`` may run while a plain
  ``put`` still blocks on another thread (as in Java). ``version`` runs on a plugin thread once per
  start; ``initialize`` runs on the loop and must be quick.
* Order: ``initialize(context)``, ``start(props)``, then ``open(partitions)`` for each assignment,
  ``put(records)`` with every batch the consumer returns (in Kafka offset order per partition; an
  empty list when nothing arrived, so a task can flush on time), ``pre_commit(offsets)`` every
  ``offset.flush.interval.ms`` and before a revocation, ``close(partitions)`` on revocation (after
  ``pre_commit``, before the commit of the revoked partitions, as in Java) and ``stop()`` last.
* ``pre_commit(current_offsets)`` gets ``{TopicPartition: next offset to read}`` for every assigned
  partition that has delivered records and returns what the runtime may commit: by default it calls
  ``flush(current_offsets)`` and returns them unchanged. An offset beyond what was delivered, or for
  a partition not assigned, is ignored with a WARN; an empty map skips the commit.
* A :class:`~pyconnect.errors.RetriableError` from ``put`` makes the runtime deliver the same batch
  again after ``context.timeout(ms)`` (or the next commit interval when none was set); any other
  exception fails the task (FAILED with the trace). Records handed to ``put`` are the task's to keep.
* ``context.offset(...)`` asks the runtime to rewind (seek) partitions before the next batch; it may
  be called from ``open``, ``put`` or ``pre_commit``. ``pause``/``resume`` stop and restart fetching
  from assigned partitions; ``request_commit`` asks for a commit at the end of the current batch.
  All context methods are non-blocking and thread-safe.
* Delivery is at least once: offsets are committed only after ``put`` returned for the records before
  them (and only what ``pre_commit`` returned), so after a crash or rebalance records delivered since
  the last commit are delivered again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from pyconnect.api.connector import Connector
from pyconnect.api.data import Schema
from pyconnect.api.source import Header

if TYPE_CHECKING:
    from pyconnect.metrics.registry import MetricsHub

TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"

NO_TIMESTAMP_TYPE = "NoTimestampType"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
"""Java ``TimestampType`` names, as a :class:`SinkRecord` carries them."""


class TopicPartition(NamedTuple):
    """One partition of one Kafka topic (Java ``TopicPartition``); ``str()`` is Java's ``topic-partition``."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class SinkRecord:
    """One record read from Kafka, converted and transformed, handed to :meth:`SinkTask.put`.

    ``topic``/``kafka_partition`` may be rewritten by transformations; ``original_topic``,
    ``original_kafka_partition`` and ``original_kafka_offset`` are where the runtime read it (Java's
    KIP-793 accessors), and the partition its offset commits for."""

    __slots__ = (
        "headers",
        "kafka_offset",
        "kafka_partition",
        "key",
        "key_schema",
        "original_kafka_offset",
        "original_kafka_partition",
        "original_topic",
        "timestamp",
        "timestamp_type",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: str = NO_TIMESTAMP_TYPE,
        headers: Sequence[Header] = (),
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.kafka_offset = kafka_offset
        self.timestamp = timestamp
        self.timestamp_type = timestamp_type
        self.headers = headers
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = (
            kafka_partition if original_kafka_partition is None else original_kafka_partition
        )
        self.original_kafka_offset = kafka_offset if original_kafka_offset is None else original_kafka_offset

    def new_record(self, **changes: Any) -> SinkRecord:
        """A copy with some fields replaced (what transformations use); the originals are kept."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return SinkRecord(**fields)

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SinkRecord):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"SinkRecord{{kafkaOffset={self.kafka_offset}, timestampType={self.timestamp_type}, "
            f"originalTopic={self.original_topic}, originalKafkaPartition={self.original_kafka_partition}, "
            f"originalKafkaOffset={self.original_kafka_offset}}} "
            f"ConnectRecord{{topic='{self.topic}', kafkaPartition={self.kafka_partition}, key={self.key!r}, "
            f"keySchema={self.key_schema}, value={self.value!r}, valueSchema={self.value_schema}, "
            f"timestamp={self.timestamp}, headers={list(self.headers)}}}"
        )


class ErrantRecordReporter(Protocol):
    """KIP-610: report a record ``put`` could not process; it goes to the dead-letter queue (and the
    error log) as the connector's ``errors.*`` settings say. Returns an awaitable that completes when
    the report is written."""

    def report(self, record: SinkRecord, error: BaseException) -> Awaitable[None]: ...


class SinkTaskContext(Protocol):
    """What the runtime hands a sink task (Java ``SinkTaskContext``). Every method is non-blocking and
    may be called from any thread."""

    @property
    def config(self) -> Mapping[str, str]:
        """The task's config (Java ``configs()``)."""
        ...

    @property
    def metrics(self) -> MetricsHub | None: ...

    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        """Rewind: the next records of these partitions start at these offsets (``offset(tp, n)`` or
        ``offset({tp: n, ...})``)."""
        ...

    def timeout(self, timeout_ms: int) -> None:
        """How long to wait before delivering a batch again after ``put`` raised a retriable error."""
        ...

    def assignment(self) -> set[TopicPartition]:
        """The partitions assigned to this task now."""
        ...

    def pause(self, *partitions: TopicPartition) -> None: ...

    def resume(self, *partitions: TopicPartition) -> None: ...

    def request_commit(self) -> None:
        """Commit offsets as soon as the current batch is done (``pre_commit`` decides what)."""
        ...

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The dead-letter-queue reporter, ``None`` when the connector has no error reporting."""
        ...


class SinkConnector(Connector):
    """A connector whose tasks are :class:`SinkTask` subclasses. Its config carries ``topics`` or
    ``topics.regex`` (exactly one), which the runtime copies into every task config."""

    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]) -> bool:
        """KIP-875 hook before the consumer group's offsets are altered or reset (``None`` = reset).

        Return True if the connector handled externally managed offsets; raise to refuse the request.
        """
        return False


class SinkTask:
    """Base class of sink tasks; see the module docstring for the calling contract."""

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    def version(self) -> str:
        raise NotImplementedError

    def start(self, props: Mapping[str, str]) -> Awaitable[None] | None:
        raise NotImplementedError

    def put(self, records: Sequence[SinkRecord]) -> Awaitable[None] | None:
        raise NotImplementedError

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> Awaitable[None] | None:
        """Make everything ``put`` so far durable (default: nothing to do)."""
        return None

    def pre_commit(
        self, current_offsets: Mapping[TopicPartition, int]
    ) -> Mapping[TopicPartition, int] | Awaitable[Mapping[TopicPartition, int]]:
        """What may be committed: by default ``flush(current_offsets)``, then ``current_offsets``.

        An ``async`` task whose ``flush`` is a coroutine should override this as a coroutine too."""
        result = self.flush(current_offsets)
        if result is not None and hasattr(result, "__await__"):

            async def flushed() -> Mapping[TopicPartition, int]:
                await result
                return current_offsets

            return flushed()
        return current_offsets

    def open(self, partitions: Collection[TopicPartition]) -> Awaitable[None] | None:
        """These partitions were assigned to the task (after a rebalance or at start)."""
        return None

    def close(self, partitions: Collection[TopicPartition]) -> Awaitable[None] | None:
        """These partitions were revoked: release what the task keeps for them."""
        return None

    def stop(self) -> Awaitable[None] | None:
        raise NotImplementedError
