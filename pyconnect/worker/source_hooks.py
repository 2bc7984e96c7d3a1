"""The acknowledgement hooks of a source task: ``commit_record``, ``commit_record_batch``,
``commit_raw_batch`` (Java's ``commitRecord``, ``recordDropped`` and ``producerSendFailed`` calls).

Contract:
- Only hooks the plugin overrides run (``wants_record_hooks`` / ``wants_raw_hooks`` say so up front),
  so a plain task costs no per-record callback.
- ``acknowledged(batch, kept, base_offset)``: one producer batch of ``kept`` records was written at
  ``base_offset``: ``commit_record_batch(records, topic, partition, base_offset)`` when the task
  overrides it, else ``commit_record(record, metadata)`` for each, in order, from one asyncio task per
  batch (a plain method: one plugin-thread hop for the whole batch).
- ``dropped(records)``: ``commit_record(record, None)`` for each (records the chain dropped, or skipped
  after a failed send under ``errors.tolerance=all``).
- ``raw_acknowledged(item, base_offset)``: ``commit_raw_batch``, on the loop (it is documented as
  quick).
- Every hook's error is logged and swallowed: a hook never fails the task. ``close(grace_s)`` waits up
  to ``grace_s`` for the hook tasks still running, then cancels them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pyconnect.api.source import RawRecordBatch, RecordMetadata, SourceRecord, SourceTask
from pyconnect.concurrency import TaskSet
from pyconnect.kafka.batch_sender import SentBatch
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.plugin_calls import PluginCalls, is_coroutine_method

log = logging.getLogger(__name__)

RecordAck = tuple[SourceRecord, RecordMetadata | None]


class SourceHooks:
    """The hooks of one plugin task (see the module contract)."""

    def __init__(self, task_id: ConnectorTaskId, task: SourceTask, calls: PluginCalls, owner: str) -> None:
        self._id = task_id
        self._task = task
        self._calls = calls
        self._owner = owner
        self._tasks = TaskSet(log)
        kind = type(task)
        self._batch_hook = kind.commit_record_batch is not SourceTask.commit_record_batch
        self._record_hook = kind.commit_record is not SourceTask.commit_record
        self._raw_hook = kind.commit_raw_batch is not SourceTask.commit_raw_batch
        self._record_hook_async = is_coroutine_method(task.commit_record)

    @property
    def wants_record_hooks(self) -> bool:
        """Whether an acknowledged batch of records has a hook to run."""
        return self._batch_hook or self._record_hook

    @property
    def wants_dropped(self) -> bool:
        """Whether a dropped or skipped record has a hook to run (``commit_record(record, None)``)."""
        return self._record_hook

    @property
    def wants_raw_hooks(self) -> bool:
        return self._raw_hook

    def acknowledged(self, batch: SentBatch, kept: list[SourceRecord], base_offset: int) -> None:
        if self._batch_hook:
            try:
                self._task.commit_record_batch(
                    _picked(kept, batch.indices), batch.topic, batch.partition, base_offset
                )
            except Exception:
                log.exception("Task %s: commit_record_batch() failed", self._id)
        elif self._record_hook:
            acked: list[RecordAck] = [
                (
                    kept[i],
                    RecordMetadata(batch.topic, batch.partition, base_offset + position, kept[i].timestamp),
                )
                for position, i in enumerate(batch.indices)
            ]
            self._tasks.spawn(self.commit_records(acked), name=f"commit-record-{self._id}")

    def spawn_dropped(self, records: Sequence[SourceRecord]) -> None:
        """:meth:`dropped`, in a task of its own (from a callback that cannot await)."""
        self._tasks.spawn(self.dropped(records), name=f"commit-record-{self._id}")

    async def dropped(self, records: Sequence[SourceRecord]) -> None:
        await self.commit_records([(record, None) for record in records])

    def raw_acknowledged(self, item: RawRecordBatch, base_offset: int) -> None:
        try:
            self._task.commit_raw_batch(item, base_offset)
        except Exception:
            log.exception("Task %s: commit_raw_batch() failed", self._id)

    async def commit_records(self, acked: Sequence[RecordAck]) -> None:
        """``commit_record`` for each pair, in order; a plain method gets one thread hop for all."""
        if self._record_hook_async:
            for record, metadata in acked:
                try:
                    await self._task.commit_record(record, metadata)
                except Exception:
                    log.exception("Task %s: commit_record() failed", self._id)
            return
        await self._calls.call(self._owner, "commit_record", self._commit_records_plain, acked)

    def _commit_records_plain(self, acked: Sequence[RecordAck]) -> None:
        """On a plugin thread: a plain ``commit_record`` for each pair."""
        commit_record: Any = self._task.commit_record
        for record, metadata in acked:
            try:
                commit_record(record, metadata)
            except Exception:
                log.exception("Task %s: commit_record() failed", self._id)

    async def close(self, grace_s: float = 0.0) -> None:
        await self._tasks.close(grace_s=grace_s)


def _picked(records: list[SourceRecord], indices: list[int]) -> list[SourceRecord]:
    """``records`` at these ascending ``indices``: one slice when they are consecutive (a batch of one
    partition's run, the usual case)."""
    if indices and indices[-1] - indices[0] == len(indices) - 1:
        return records[indices[0] : indices[-1] + 1]
    return [records[i] for i in indices]
