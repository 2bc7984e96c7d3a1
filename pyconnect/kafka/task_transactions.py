"""An exactly-once source task's transactional producer (KIP-618; Java ``ExactlyOnceWorkerSourceTask``).

Contract:
- One instance per source task, over a producer configured with the task's ``transactional.id``
  (``<group.id>-<connector>-<task>``, :func:`pyconnect.config.client_configs.task_transactional_id`).
  Used from the task's loop only: no two calls overlap.
- ``initialize()`` (Java ``initTransactions``) returns once the broker gave this producer its id and
  epoch (the aiokafka producer asks for them as soon as it is started). That bumps the epoch of the
  transactional id: an older instance of the same task (a zombie on a worker that lost it) is fenced,
  its open transaction is aborted by the broker and its next transactional request fails, so it
  writes nothing more.
- ``send(records)`` begins a transaction if none is open and hands the records to the producer through
  the :class:`~pyconnect.kafka.batch_sender.BatchSender`; the returned batches' futures resolve on
  acknowledgement. A record for the task's own offsets topic is refused before anything is sent
  (:data:`OWN_OFFSETS_TOPIC_MESSAGE`, Java's): its open transaction would block the task's next
  offset read, which reads that topic ``read_committed`` to its end.
- ``commit(offset_records)`` writes the offset records (already serialized ``[connector, partition]``
  keys and offset values) to the offsets topic through the same producer, in the open transaction
  (one is begun for offsets alone when none is open), waits for every batch of the transaction, then
  commits it. So the records of a transaction and the source offsets they advance become visible to
  ``read_committed`` readers together, or not at all. Offset records go to the partition Java's
  producer picks for their key, as the offset store's own writes do. Any failure (a batch the broker
  refused, a fenced producer, an expired transaction) raises :class:`TransactionCommitError`; the
  transaction is then abandoned (never committed) and the caller fails the task, as Java does.
- ``worker_copy`` (a connector with its own offsets topic, Java's secondary store): the tombstones of
  a commit's offset records go to the worker's offsets topic before the transaction begins (a failure
  fails the commit), and its regular offsets once it committed (best effort).
- ``abort()`` aborts the open transaction (connector-defined boundaries); the next ``commit`` begins a
  new one (for offsets alone if nothing else was sent).
- ``open`` says whether a transaction is open (records sent and not yet committed).
- ``refusal(exc)`` words a failure the task met for an operator (a refused ACL on the task's
  ``transactional_id`` or on a topic, naming the resource and the operations), or gives None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from aiokafka import AIOKafkaProducer
from aiokafka.errors import InvalidProducerEpoch, ProducerFenced

from pyconnect.errors import ConnectError
from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord, SentBatch
from pyconnect.kafka.parked_errors import read_parked_errors
from pyconnect.kafka.transaction_access import transaction_refusal
from pyconnect.metrics.client_metrics import ProducerMetrics


class WorkerOffsetsCopy(Protocol):
    """The worker-store half of a connector's own offsets topic
    (:class:`~pyconnect.stores.connector_offsets.ConnectorOffsets`)."""

    async def copy_tombstones_first(self, records: Sequence[tuple[bytes, bytes | None]]) -> None: ...

    async def copy_after_commit(self, records: Sequence[tuple[bytes, bytes | None]]) -> None: ...


OWN_OFFSETS_TOPIC_MESSAGE = (
    "Source tasks may not produce to their own offsets topics when exactly-once support is enabled"
)


class TransactionCommitError(ConnectError):
    """A task's transaction could not be committed; the task must fail."""


def transaction_timeout_message(task: str) -> str:
    """Java ``ExactlyOnceWorkerSourceTask.wrapTransactionTimeoutError``'s message."""
    return (
        f"The task {task} was unable to finish writing records to Kafka before its producer transaction "
        "expired. It may be necessary to reconfigure this connector in order for it to run healthily with "
        "exactly-once support. Options for this include: tune the connector's producer configuration for "
        "higher throughput, increase the transaction timeout for the connector's producers, decrease the "
        "offset commit interval (if using interval-based transaction boundaries), or use the 'poll' "
        "transaction boundary (if the connector is not already configured to use it)."
    )


class TaskTransactions:
    """One task's transactions; see the module docstring."""

    def __init__(
        self,
        producer: AIOKafkaProducer,
        offsets_topic: str,
        task: str,
        *,
        metrics: ProducerMetrics | None = None,
        worker_copy: WorkerOffsetsCopy | None = None,
        transactional_id: str = "",
        cluster: str = "the cluster",
    ) -> None:
        self._producer = producer
        read_parked_errors(producer)
        self._transactional_id = transactional_id
        self._cluster = cluster
        self._worker_copy = worker_copy
        self._sender = BatchSender(producer, metrics=metrics)
        self._offsets_topic = offsets_topic
        self._task = task
        self._open = False
        self._pending: list[asyncio.Future[Any]] = []

    @staticmethod
    def fenced(exc: BaseException) -> bool:
        """Whether ``exc`` (or an error it was raised from) says a newer instance of this task's
        producer took its transactional id: the task is a zombie whose work already goes on elsewhere."""
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            if isinstance(current, ProducerFenced):
                return True
            seen.add(id(current))
            current = current.__cause__ or current.__context__
        return False

    def refusal(self, exc: BaseException) -> ConnectError | None:
        """The operator-facing error ``exc`` means for this task's producer (a refused ACL on its
        transactional id or a topic, no transaction coordinator), or None: see
        :func:`~pyconnect.kafka.transaction_access.transaction_refusal`."""
        return transaction_refusal(exc, self._transactional_id, self._cluster)

    @property
    def sender(self) -> BatchSender:
        return self._sender

    @property
    def open(self) -> bool:
        return self._open

    async def initialize(self) -> None:
        """Obtain the producer id and epoch (fencing older instances): an empty transaction, which
        needs both and writes nothing."""
        await self._producer.begin_transaction()
        await self._producer.commit_transaction()

    async def _begin(self) -> None:
        if not self._open:
            await self._producer.begin_transaction()
            self._open = True

    async def send(self, records: Sequence[OutgoingRecord]) -> list[SentBatch]:
        own = self._offsets_topic
        if any(record.topic == own for record in records):
            raise ConnectError(OWN_OFFSETS_TOPIC_MESSAGE)
        await self._begin()
        batches = await self._sender.send(records)
        self._pending.extend(batch.future for batch in batches)
        return batches

    async def send_raw(self, topic: str, partition: int, builder: Any) -> asyncio.Future[Any]:
        """One ready-made batch (a fetched record batch) in the transaction, as :meth:`send`."""
        if topic == self._offsets_topic:
            raise ConnectError(OWN_OFFSETS_TOPIC_MESSAGE)
        await self._begin()
        future = await self._sender.send_raw(topic, partition, builder)
        self._pending.append(future)
        return future

    async def abort(self) -> None:
        """Abort the open transaction (connector-defined boundaries): nothing sent in it becomes visible
        to ``read_committed`` readers. Failures raise :class:`TransactionCommitError`."""
        pending, self._pending = self._pending, []
        self._open = False
        try:
            await asyncio.gather(*pending, return_exceptions=True)
            await self._producer.abort_transaction()
        except Exception as exc:
            raise TransactionCommitError(
                f"Failed to abort the transaction of task {self._task}: {exc}"
            ) from exc

    async def commit(self, offset_records: Sequence[tuple[bytes, bytes | None]]) -> None:
        if not self._open and not offset_records:
            return
        pending, self._pending = self._pending, []
        try:
            if self._worker_copy is not None:
                await self._worker_copy.copy_tombstones_first(offset_records)
            await self._begin()
            if offset_records:
                offsets = [OutgoingRecord(self._offsets_topic, key, value) for key, value in offset_records]
                pending.extend(batch.future for batch in await self._sender.send(offsets))
            await asyncio.gather(*pending)
            await self._producer.commit_transaction()
        except (InvalidProducerEpoch, ProducerFenced) as exc:
            raise TransactionCommitError(
                transaction_timeout_message(self._task)
                if isinstance(exc, InvalidProducerEpoch)
                else f"Failed to flush offsets and/or records for task {self._task}: {exc}"
            ) from exc
        except Exception as exc:
            # a batch the broker refused puts the transaction in error, and what fails next ("Can't
            # send messages while not in transaction") hides why: name the batch's refusal instead
            cause = await _first_batch_failure(pending) or exc
            raise TransactionCommitError(
                f"Failed to flush offsets and/or records for task {self._task}: {cause}"
            ) from cause
        finally:
            self._open = False
        if self._worker_copy is not None:
            await self._worker_copy.copy_after_commit(offset_records)


async def _first_batch_failure(
    pending: Sequence[asyncio.Future[Any]], wait_s: float = 1.0
) -> BaseException | None:
    """The first failure among a transaction's batches, waiting ``wait_s`` at most for the unfinished."""
    unfinished = [f for f in pending if not f.done()]
    if unfinished:
        await asyncio.wait(unfinished, timeout=wait_s)
    for future in pending:
        if future.done() and not future.cancelled() and future.exception() is not None:
            return future.exception()
    return None
