"""One poll batch of a source task on its way to the producer, and its acknowledgements coming back.

Contract:
- ``dispatch(records)``: the records and raw batches of one ``poll()``, in poll order. Runs of
  records go through the :class:`~pyconnect.worker.source_records.SourceRecordPipeline`; each is then
  submitted in poll order to ``SubmittedRecords`` (one entry per record, or, on the fast path, one per
  run of a source partition ending where a producer batch begins, so that each batch's
  acknowledgement commits on its own) and sent through the commit policy's sender. Records the chain
  dropped or that were skipped after an error are acknowledged at once and given to
  ``commit_record(record, None)``. A stop while an operation waits to be retried drops the run unsent
  and unsubmitted. Raw batches (once ``raw_target`` is set) go one producer batch each, submitted as
  one entry of ``record_count`` records.
- An acknowledged batch counts its records (``records_written``, ``raw_batches_written``), records its
  write metrics, calls ``on_topic(task_id, topic)`` (KIP-558) and hands the plugin's hooks to the
  policy (run now, or once the transaction commits); hooks are skipped once the plugin is stopping.
- A failed send: a stop's abandonment is nothing (never sent, never committed); otherwise
  ``on_failure(error)`` (the task fails before its next poll), or under ``errors.tolerance=all`` the
  records are counted as skipped (each logged as stage ``KAFKA_PRODUCE``, Java's ``executeFailed``;
  a raw batch as one warning), acknowledged, and given to ``commit_record(record, None)``.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any, cast

from pyconnect.api.source import RawBatchTarget, RawRecordBatch, SourceRecord
from pyconnect.kafka.batch_sender import OutgoingRecord, SentBatch
from pyconnect.kafka.raw_batches_io import RawBatch
from pyconnect.kafka.target_lanes import SendAbandoned
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.raw_batches import interleaved
from pyconnect.worker.retry_with_tolerance import KAFKA_PRODUCE, RetryInterrupted
from pyconnect.worker.source_commits import CommitPolicy
from pyconnect.worker.source_hooks import SourceHooks
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_records import SourceRecordPipeline, monotonic_ms
from pyconnect.worker.submitted_records import DispatchedRuns, SubmittedRecord, SubmittedRecords, batch_starts

log = logging.getLogger(__name__)

WORKER_SOURCE_TASK_CLASS = "org.apache.kafka.connect.runtime.WorkerSourceTask"
"""The executing class Java names for a failed produce (stage ``KAFKA_PRODUCE``)."""


class SourceDispatch:
    """Dispatches the poll batches of one task (see the module contract)."""

    def __init__(
        self,
        task_id: ConnectorTaskId,
        parts: SourceTaskParts,
        records: SourceRecordPipeline,
        hooks: SourceHooks,
        submitted: SubmittedRecords,
        commits: CommitPolicy,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self.id = task_id
        self._producer = parts.producer
        self._errors = parts.errors
        self._source_metrics = parts.meters.source
        self._on_topic = parts.on_topic
        self._records = records
        self._hooks = hooks
        self.submitted = submitted
        """What was handed to the producer and what of it may commit."""
        self._commits = commits
        self._on_failure = on_failure
        self.plugin_stopping = False
        """Set by the task once its plugin stops: acknowledgements no longer run hooks."""
        self.raw_target: RawBatchTarget | None = None
        """Where raw batches may go; ``None``: the plugin returns records only."""
        self.records_written = 0
        self.raw_batches_written = 0
        self._skipped = 0

    @property
    def records_skipped(self) -> int:
        return self._skipped + self._records.skipped

    async def dispatch(self, records: list[Any]) -> None:
        """Records and raw batches of one poll, in poll order: runs of records through the record
        pipeline, raw batches each as one producer batch (see the module contract)."""
        if self.raw_target is None or not any(type(r) is RawRecordBatch for r in records):
            await self._dispatch_records(records)
            return
        for raw, run in itertools.groupby(records, key=lambda r: type(r) is RawRecordBatch):
            if raw:
                await self._send_raw(list(run))
            else:
                await self._dispatch_records(list(run))

    async def _send_raw(self, items: list[RawRecordBatch]) -> None:
        submit = self.submitted.submit
        commits = self._commits
        await commits.raw_sender.learn_topics({item.topic for item in items})
        send_raw, transactional, producer = commits.send_raw, commits.transactional, self._producer
        for item in interleaved(items):
            builder = RawBatch.of_batch(producer, item.data)
            entry = submit(item.source_partition, item.source_offset, item.record_count)
            future = await send_raw(item.topic, item.kafka_partition, builder)
            if transactional:
                commits.dispatched((entry,))
            future.add_done_callback(functools.partial(self._on_raw_done, item=item, entry=entry))

    def _on_raw_done(self, fut: asyncio.Future[Any], *, item: RawRecordBatch, entry: SubmittedRecord) -> None:
        count = item.record_count
        metrics = self._source_metrics
        if fut.cancelled() or fut.exception() is not None:
            error = _failure(fut)
            if not self._send_failed(error):
                return
            log.warning(
                "Task %s: skipping a batch of %d records for %s-%d that failed to send (errors.tolerance=all): %s",
                self.id,
                count,
                item.topic,
                item.kafka_partition,
                "cancelled" if fut.cancelled() else error,
            )
            self._skipped += count
            entry.ack()
            if metrics is not None:
                metrics.record_write(count, count)
            return
        meta = fut.result()
        self.records_written += count
        self.raw_batches_written += 1
        if metrics is not None:
            metrics.record_write(count, 0)
        entry.ack()
        if self._on_topic is not None:
            self._topic_written(item.topic)
        if not self._hooks.wants_raw_hooks or self.plugin_stopping:
            return
        if self._commits.transactional:  # hooks run once the transaction has committed
            self._commits.after_commit(functools.partial(self._hooks.raw_acknowledged, item, meta.offset))
        else:
            self._hooks.raw_acknowledged(item, meta.offset)

    def _send_failed(self, error: BaseException) -> bool:
        """A send's failure: ``True`` when it is to be skipped (``errors.tolerance=all``); otherwise the
        task fails before its next poll (or it never reached the target: a stop abandoned it)."""
        if isinstance(error, SendAbandoned):  # never sent: not acknowledged, never committed
            return False
        if not self._errors.tolerate_all:
            self._on_failure(error)
            return False
        return True

    def _record_write(self, count: int, skipped: int) -> None:
        if self._source_metrics is not None:
            self._source_metrics.record_write(count, skipped)

    def _topic_written(self, topic: str) -> None:
        assert self._on_topic is not None
        try:
            self._on_topic(self.id, topic)
        except Exception:
            log.exception("Task %s: recording active topic %s failed", self.id, topic)

    async def _dispatch_records(self, records: list[SourceRecord]) -> None:
        """Transform and convert ``records``, then submit every one in poll order (those dropped by the
        chain or skipped after an error are acknowledged at once) and send the rest."""
        try:
            prepared = await self._records.prepare(records)
        except RetryInterrupted:
            return
        outgoing, results = prepared
        if results is None:  # the fast path: nothing dropped, nothing skipped
            await self._send(cast("list[OutgoingRecord]", outgoing), records, None)
            return
        submit = self.submitted.submit
        sent: list[OutgoingRecord] = []
        kept: list[SourceRecord] = []
        tracked: list[SubmittedRecord] = []
        dropped: list[SourceRecord] = []
        outputs = iter(outgoing)
        for record, result in zip(records, results, strict=True):
            entry = submit(record.source_partition, record.source_offset)
            out = next(outputs) if result is not None else None
            if out is None:
                entry.ack()
                dropped.append(record)
            else:
                sent.append(out)
                kept.append(record)
                tracked.append(entry)
        if dropped:
            self._record_write(len(dropped), len(dropped))
            if self._hooks.wants_dropped:
                await self._records_dropped(dropped)
        await self._send(sent, kept, DispatchedRuns.one_per_record(tracked))

    async def _records_dropped(self, records: Sequence[SourceRecord]) -> None:
        """``commit_record(record, None)`` for each, now, or under exactly-once once the transaction
        commits."""
        if self._commits.transactional:
            self._commits.after_commit(lambda: self._hooks.spawn_dropped(records))
        else:
            await self._hooks.dropped(records)

    async def _send(
        self, outgoing: list[OutgoingRecord], kept: list[SourceRecord], tracked: DispatchedRuns | None
    ) -> None:
        """Hand ``outgoing`` over and follow each batch's acknowledgement. ``tracked`` ``None`` (the fast
        path): the records are submitted once their batches are known, in runs that end where a batch
        begins, so that each batch's acknowledgement commits on its own (a task stopped while one batch
        of a run waits still commits the batches before it)."""
        if not outgoing:
            return
        batches = await self._commits.send(outgoing)
        if tracked is None:
            tracked = DispatchedRuns(self.submitted, kept, batch_starts(batches, len(kept)))
        if self._commits.transactional:
            self._commits.dispatched(tracked.entries)
        for batch in batches:
            batch.future.add_done_callback(
                functools.partial(self._on_batch_done, batch=batch, kept=kept, tracked=tracked)
            )

    def _on_batch_done(
        self,
        fut: asyncio.Future[Any],
        *,
        batch: SentBatch,
        kept: list[SourceRecord],
        tracked: DispatchedRuns,
    ) -> None:
        count = len(batch.indices)
        metrics = self._source_metrics
        if fut.cancelled() or fut.exception() is not None:
            error = _failure(fut)
            if not self._send_failed(error):
                return
            now = monotonic_ms()
            for i in batch.indices:  # counted and logged (errors.log.enable) as Java's executeFailed
                self._errors.execute_failed(kept[i], KAFKA_PRODUCE, WORKER_SOURCE_TASK_CLASS, error, now)
            self._skipped += count
            tracked.ack(batch.indices)
            if metrics is not None:
                metrics.record_write(count, count)
            if self._hooks.wants_dropped:  # Java's producerSendFailed: commitTaskRecord(record, null)
                failed = [kept[i] for i in batch.indices]
                self._commits.after_commit(lambda: self._hooks.spawn_dropped(failed))
            return
        meta = fut.result()
        self.records_written += count
        if metrics is not None:
            metrics.record_write(count, 0)
        tracked.ack(batch.indices)
        if self._on_topic is not None:
            self._topic_written(batch.topic)
        if not self._hooks.wants_record_hooks or self.plugin_stopping:
            return  # (acknowledged while the producer closed, after the plugin stopped: no hook)
        if self._commits.transactional:  # hooks run once the transaction has committed
            self._commits.after_commit(functools.partial(self._hooks.acknowledged, batch, kept, meta.offset))
        else:
            self._hooks.acknowledged(batch, kept, meta.offset)


def _failure(fut: asyncio.Future[Any]) -> BaseException:
    """A failed send's error (a cancelled future: a producer stopped)."""
    if fut.cancelled():
        return asyncio.CancelledError()
    return fut.exception() or asyncio.CancelledError()
