"""StatusStore: connector, task and topic statuses in the status topic (Java ``KafkaStatusBackingStore``).

Writes (spec §2.4):
- ``put(status)`` / ``put_safe(status)`` return at once; records go out in call order through one
  sender task owned by the store. ``put_safe`` (FAILED/UNASSIGNED from a stopping worker) is skipped
  when the cached status was written by another worker at a higher generation.
- A send that fails with a retriable error is sent again unless, by then, the entry was deleted, the
  store's generation moved on, or (safe writes) a newer write of the entry exists. Other errors are
  logged. ``DESTROYED`` is written as a tombstone.
- ``flush()`` waits until everything handed to ``put*`` so far was acknowledged or given up.
Reads: the cache holds what was *read back* from the topic (our own writes included) by the log's tail
task; an incoming UNASSIGNED task status is ignored when the cached one is RUNNING at a generation >=
its own (Java). The same holds for connectors when the UNASSIGNED comes from another worker than the
RUNNING one (beyond Java, whose connector statuses have the same race): a worker cut off from the
cluster stops its connector and writes UNASSIGNED with its cache still naming itself as the owner, so
its ``put_safe`` passes; delivered after the heal, behind the new owner's RUNNING, it would leave the
connector UNASSIGNED for good, since the new owner writes nothing more while it runs it.
Tombstones remove entries (a connector tombstone also removes its tasks' entries).
Corrupt records are logged with topic/partition/offset and skipped.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pyconnect.concurrency import TaskSet, cancel_and_wait
from pyconnect.config.client_configs import client_id_base, internal_producer_config, worker_client_config
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError
from pyconnect.kafka.log import LogRecord
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    InternalRecordError,
    State,
    StatusKey,
    TaskStatus,
    TopicStatus,
    decode_status_record,
    encode_status,
    encode_topic_status,
    encode_topic_status_tombstone,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.base import RecordLog, TopicSource, is_retriable
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.memory import MemoryTopic

log = logging.getLogger(__name__)

S = TypeVar("S", ConnectorStatus, TaskStatus)

RETRY_BACKOFF_S = 0.1


class CacheEntry(Generic[S]):
    """The last status read for one connector/task plus the write bookkeeping of Java's ``CacheEntry``."""

    def __init__(self) -> None:
        self.value: S | None = None
        self.sequence = 0
        self.deleted = False

    def can_write_safely(self, status: S, sequence: int | None = None) -> bool:
        ok = (
            self.value is None
            or self.value.worker_id == status.worker_id
            or self.value.generation <= status.generation
        )
        return ok and (sequence is None or sequence == self.sequence)


@dataclass
class _Send:
    key: bytes
    value: bytes | None
    status: Any = None
    entry: CacheEntry[Any] | None = None
    sequence: int = 0
    safe: bool = False


class StatusStore:
    """Statuses of the cluster's connectors and tasks, plus the topics they use (KIP-558)."""

    def __init__(self, topic: TopicSource, *, retry_backoff_s: float = RETRY_BACKOFF_S) -> None:
        self.topic = topic
        self._retry_backoff_s = retry_backoff_s
        self._log: RecordLog | None = None
        self._start_lock = asyncio.Lock()
        self._connectors: dict[str, CacheEntry[ConnectorStatus]] = {}
        self._tasks: dict[str, dict[int, CacheEntry[TaskStatus]]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}
        self._generation = 0
        self._queue: asyncio.Queue[_Send] = asyncio.Queue()
        self._outstanding = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._sender: asyncio.Task[None] | None = None
        self._retries = TaskSet(log)

    @classmethod
    def from_worker_config(cls, worker: WorkerConfig) -> StatusStore:
        client_id = client_id_base(worker) + "statuses"
        producer = internal_producer_config(client_id, status=True)
        return cls(
            InternalTopic(
                name=worker.status_storage_topic,
                client_config=worker_client_config(worker),
                partitions=worker.status_storage_partitions,
                replication_factor=worker.status_storage_replication_factor,
                topic_configs=worker.topic_settings("status.storage."),
                producer_config=producer,
                consumer_config={"client.id": client_id},
                worker_topic_config="status.storage.topic",
                purpose="connector and task statuses",
            )
        )

    async def start(self) -> None:
        async with self._start_lock:
            if self._log is not None:
                return
            await self.topic.prepare()
            current = self.topic.open(self._on_records)
            await current.start()
            self._log = current
            self._sender = asyncio.create_task(self._send_loop(), name=f"status-store-sender-{current.topic}")

    async def stop(self) -> None:
        async with self._start_lock:
            sender, self._sender = self._sender, None
            await cancel_and_wait(sender, log=log)
            await self._retries.close()
            while not self._queue.empty():
                self._queue.get_nowait()
            self._outstanding = 0
            self._idle.set()
            current, self._log = self._log, None
            if current is not None:
                await current.stop()

    # ---- writing

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        self._put(status, safe=False)

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self._put(status, safe=True)

    def report(self, status: ConnectorStatus | TaskStatus) -> None:
        """A herder's report of a state change, written as Java's ``AbstractHerder`` writes it: FAILED
        and UNASSIGNED with :meth:`put_safe` (a zombie's failure or shutdown never overwrites what a
        newer generation's owner wrote), every other state with :meth:`put`."""
        if status.state in (State.FAILED, State.UNASSIGNED):
            self.put_safe(status)
        else:
            self.put(status)

    def _entry(self, status: ConnectorStatus | TaskStatus) -> CacheEntry[Any]:
        if isinstance(status, TaskStatus):
            return self._tasks.setdefault(status.task_id.connector, {}).setdefault(
                status.task_id.task, CacheEntry()
            )
        return self._connectors.setdefault(status.connector, CacheEntry())

    def _put(self, status: ConnectorStatus | TaskStatus, *, safe: bool) -> None:
        entry = self._entry(status)
        self._generation = status.generation
        if safe and not entry.can_write_safely(status):
            return
        entry.sequence += 1
        key, value = encode_status(status)
        self._enqueue(_Send(key, value, status, entry, entry.sequence, safe))

    def put_topic(self, status: TopicStatus) -> None:
        key, value = encode_topic_status(status)
        self._enqueue(_Send(key, value))

    def delete_topic(self, connector: str, topic: str) -> None:
        key, value = encode_topic_status_tombstone(topic, connector)
        self._enqueue(_Send(key, value))

    def _enqueue(self, send: _Send) -> None:
        if self._log is None:
            raise ConnectError(f"The status store on {getattr(self.topic, 'name', '?')} is not started")
        self._outstanding += 1
        self._idle.clear()
        self._queue.put_nowait(send)

    def _done(self) -> None:
        self._outstanding -= 1
        if self._outstanding <= 0:
            self._outstanding = 0
            self._idle.set()

    async def flush(self) -> None:
        """Wait until every status handed to ``put*`` so far was acknowledged (or given up)."""
        await self._idle.wait()

    async def _send_loop(self) -> None:
        while True:
            send = await self._queue.get()
            current = self._log
            if current is None:
                self._done()
                continue
            try:
                ack = await current.send(send.key, send.value)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._failed(send, exc)
                continue
            ack.add_done_callback(functools.partial(self._acked, send))

    def _acked(self, send: _Send, ack: asyncio.Future[Any]) -> None:
        if ack.cancelled():
            self._done()
            return
        error = ack.exception()
        if error is None:
            self._done()
        else:
            self._failed(send, error)

    def _failed(self, send: _Send, error: BaseException) -> None:
        if self._log is None:
            self._done()
            return
        if not is_retriable(error):
            log.error("Failed to write status update %s: %s", send.key.decode("utf-8", "replace"), error)
            self._done()
            return
        if send.entry is not None and (
            send.entry.deleted
            or send.status.generation != self._generation
            or (send.safe and not send.entry.can_write_safely(send.status, send.sequence))
        ):
            self._done()
            return
        self._retries.spawn(self._retry(send), name="status-store-retry")

    async def _retry(self, send: _Send) -> None:
        await asyncio.sleep(self._retry_backoff_s)
        self._queue.put_nowait(send)

    # ---- reading

    async def read_to_end(self) -> None:
        if self._log is None:
            raise ConnectError(f"The status store on {getattr(self.topic, 'name', '?')} is not started")
        await self._log.read_to_end()

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        entry = self._connectors.get(connector)
        return None if entry is None else entry.value

    def get_task(self, task: ConnectorTaskId) -> TaskStatus | None:
        entry = self._tasks.get(task.connector, {}).get(task.task)
        return None if entry is None else entry.value

    def get_all(self, connector: str) -> list[TaskStatus]:
        """Statuses of ``connector``'s tasks, by task number."""
        entries = self._tasks.get(connector, {})
        return [e.value for _, e in sorted(entries.items()) if e.value is not None]

    def has_task_from(self, connector: str, number: int) -> bool:
        """Whether ``connector`` has a task status numbered ``number`` or above."""
        return any(n >= number and e.value is not None for n, e in self._tasks.get(connector, {}).items())

    def connectors(self) -> set[str]:
        """Connectors with a cache entry (including ones only written to, as in Java)."""
        return set(self._connectors)

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        return self._topics.get(connector, {}).get(topic)

    def get_topics(self, connector: str) -> list[TopicStatus]:
        return list(self._topics.get(connector, {}).values())

    def _on_records(self, records: Sequence[LogRecord]) -> None:
        for record in records:
            try:
                key, status = decode_status_record(record.key, record.value)
            except InternalRecordError as exc:
                log.warning(
                    "Skipping status record at %s-%d offset %d (key %r): %s",
                    record.topic,
                    record.partition,
                    record.offset,
                    record.key,
                    exc,
                )
                continue
            self._apply(key, status)

    def _apply(self, key: StatusKey, status: ConnectorStatus | TaskStatus | TopicStatus | None) -> None:
        if key.topic is not None:
            if status is None:
                self._topics.get(key.connector, {}).pop(key.topic, None)
            else:
                assert isinstance(status, TopicStatus)
                self._topics.setdefault(key.connector, {})[key.topic] = status
            return
        if key.task is not None:
            if status is None:
                removed = self._tasks.get(key.connector, {}).pop(key.task, None)
                if removed is not None:
                    removed.deleted = True
                return
            assert isinstance(status, TaskStatus)
            entry = self._tasks.setdefault(key.connector, {}).setdefault(key.task, CacheEntry())
            if _stale_unassigned(entry.value, status, other_worker_only=False):
                return
            entry.value = status
            return
        if status is None:
            removed_connector = self._connectors.pop(key.connector, None)
            if removed_connector is not None:
                removed_connector.deleted = True
            for task_entry in self._tasks.pop(key.connector, {}).values():
                task_entry.deleted = True
            return
        assert isinstance(status, ConnectorStatus)
        connector_entry = self._connectors.setdefault(key.connector, CacheEntry())
        if _stale_unassigned(connector_entry.value, status, other_worker_only=True):
            return
        connector_entry.value = status


def _stale_unassigned(
    current: ConnectorStatus | TaskStatus | None,
    incoming: ConnectorStatus | TaskStatus,
    *,
    other_worker_only: bool,
) -> bool:
    """Whether ``incoming`` is an UNASSIGNED that lost a race to ``current``, a RUNNING at the same or a
    newer generation (from another worker, with ``other_worker_only``): see the module docstring."""
    stale = (
        incoming.state is State.UNASSIGNED
        and current is not None
        and current.state is State.RUNNING
        and current.generation >= incoming.generation
        and (not other_worker_only or current.worker_id != incoming.worker_id)
    )
    if stale:
        log.debug("Ignoring stale status %s in favour of more up to date status %s", incoming, current)
    return stale


class MemoryStatusStore(StatusStore):
    """The in-memory twin (5 partitions by default, like the worker's status topic)."""

    def __init__(self, topic: MemoryTopic | None = None, *, retry_backoff_s: float = 0.0) -> None:
        super().__init__(
            topic if topic is not None else MemoryTopic("status", 5), retry_backoff_s=retry_backoff_s
        )
