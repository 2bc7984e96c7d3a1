"""Runs one source task: poll, transform, convert, send, for records and raw batches (spec §5.1-5.3).

The loop lives here; what it is made of lives beside it, in the order a record meets them:
:mod:`~pyconnect.worker.source_records` (transformation chain and converters, with retries),
:mod:`~pyconnect.kafka.batch_sender` (partition batches to the producer, waiting for a target that is
not ready), :mod:`~pyconnect.worker.submitted_records` (what may commit),
:mod:`~pyconnect.worker.source_commits` (the commit policy the plan chose: offset commits or
transactions), :mod:`~pyconnect.worker.source_hooks` (the plugin's acknowledgement hooks),
:mod:`~pyconnect.worker.source_status` (what the task reports).

Contract:
- ``WorkerSourceTask(task_id, task, task_config, context, parts, commits, target_state)``: ``parts``
  (:class:`SourceTaskParts`) are the live pieces assembled from the task plan, ``commits`` its
  :class:`~pyconnect.worker.source_commits.CommitPolicy`. ``start()`` launches the loop in a task owned
  by this object and returns at once. A task whose target state is PAUSED reports PAUSED and waits
  before starting the plugin.
- Before the plugin starts: ``open_offsets()`` (the connector's own offsets topic, when it has one:
  created if missing and read to the end), then the policy's ``prepare`` (exactly-once: fencing and
  the transactional producer); a failure of either fails the task, a stop request ends it there.
- Each ``poll()`` batch goes through the record pipeline, then to the policy's sender (one future per
  partition batch), tracked in ``SubmittedRecords``: only offsets of records Kafka acknowledged
  commit. A record the chain drops (or skipped after an error under ``errors.tolerance=all``) is still
  submitted in poll order and acknowledged at once, so its source offset commits like its neighbours',
  and ``commit_record(record, None)`` runs for it (Java's ``recordDropped``): a MirrorSourceTask writes
  no offset sync for it, and the gap makes the next record's sync exact. Hooks of sent records get the
  record as polled, as in Java. A stop while an operation waits to be retried drops the whole batch
  unsent and unsubmitted.
- A target that is not ready never fails the task at once (the sender's lanes,
  :mod:`pyconnect.kafka.target_lanes`): a batch for a missing topic or partition, a refused WRITE or a
  batch too large waits in its partition's lane while the others flow, with a condition on the task's
  board (TARGET_TOPIC_MISSING, ACL_DENIED, RECORD_TOO_LARGE; TARGET_UNREACHABLE), until the target is
  ready or ``target_bounds.wait_max_s`` passes (then the task fails naming topic, partition and what
  the target has). ``stop()`` abandons the batches still waiting: never sent, never committed; under
  exactly-once the open transaction is then aborted.
- While ``may_commit()`` (the worker's stale-membership fence, :mod:`pyconnect.herder.commit_fence`)
  refuses, polled records are not dispatched: the loop rechecks every ``FENCE_RECHECK_S`` until
  commits are allowed or the task stops (then they are dropped unsent, and the next owner reads them
  again): a worker woken from a long pause writes no stale copies.
- A failed delivery fails the task before the next poll (or, with tolerance all, is counted, logged
  with ``errors.log.enable`` as stage ``KAFKA_PRODUCE``, skipped, and given to ``commit_record(record,
  None)``: Java's ``producerSendFailed``). A refusal by the cluster (``Not authorized to access topics:
  [t]``) is reported as an access error naming ``cluster`` (:mod:`pyconnect.kafka.access`).
- KIP-558: ``on_topic(task_id, topic)`` once per acknowledged batch. Metrics per batch, as Java's:
  each ``poll()`` that returns (empty too) its size and duration, each acknowledged or skipped
  partition batch its written records and those still in flight, each commit its duration and
  outcome.
- Raw record batches (:mod:`pyconnect.api.source`): a task that accepts them is told after
  ``initialize`` whether it may return :class:`~pyconnect.api.source.RawRecordBatch` items
  (:func:`~pyconnect.worker.raw_batches.raw_batch_target`). Each goes to the producer as one batch, in
  poll order with the records around it (under exactly-once in the open transaction), submitted as one
  entry of ``record_count`` records; then ``commit_raw_batch(item, base_offset)``. A failed one fails
  the task, or under ``errors.tolerance=all`` counts ``record_count`` skipped records.
- The plugin's methods go through :class:`~pyconnect.worker.plugin_calls.PluginCalls`: coroutine
  methods on the loop, plain ones on a plugin thread (one hop per ``poll``), so a blocking task never
  blocks the loop; ``stop()`` is bounded by ``stop_timeout_s``. A plain ``poll`` still running at a
  stop is left to return on its thread (its records dropped), as a Java task's ``stop`` runs while its
  ``poll`` may block.
- ``stop()`` asks the loop to end (a blocking ``poll`` is cancelled); ``wait_stopped(timeout)`` waits
  for a clean end and otherwise cancels the loop: then no UNASSIGNED is reported, and the offsets of
  what the target acknowledged are still committed (beyond Java), before the plugin stops and once more
  after the producer closed. Either way the plugin's ``stop()`` runs exactly once when its ``start()``
  was called, and no task of this object outlives it. A failed task reports FAILED with its trace; its
  log line is an ERROR with the trace's first line (never a WARN for a retriable cause), a WARN only
  for a task fenced by a newer instance of itself (exactly-once: it runs elsewhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from pyconnect.api.source import RawRecordBatch, SourceTask, SourceTaskContext
from pyconnect.concurrency import cancel_and_wait
from pyconnect.errors import RetriableError
from pyconnect.kafka.access import access_error
from pyconnect.kafka.batch_sender import BatchSender
from pyconnect.kafka.target_lanes import SendAbandoned
from pyconnect.kafka.target_watch import TargetWatch
from pyconnect.log_context import enter_task
from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.raw_batches import raw_batch_target
from pyconnect.worker.source_commits import CommitPolicy, CommitSite
from pyconnect.worker.source_dispatch import SourceDispatch
from pyconnect.worker.source_hooks import SourceHooks
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_records import SourceRecordPipeline
from pyconnect.worker.source_status import SourceTaskStatus
from pyconnect.worker.submitted_records import SubmittedRecords
from pyconnect.worker.target_wait_config import target_label
from pyconnect.worker.task_lifecycle import TaskLifecycle

log = logging.getLogger(__name__)

FENCE_RECHECK_S = 0.1
"""How often a task held back by a refused ``may_commit()`` asks again."""


class WorkerSourceTask(TaskLifecycle):
    """The loop of one source task (see the module contract)."""

    kind = "source"

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_config: Mapping[str, str],
        context: SourceTaskContext,
        parts: SourceTaskParts,
        commits: CommitPolicy,
        target_state: TargetState = TargetState.STARTED,
    ) -> None:
        super().__init__(task_id, target_state)
        self.task = task
        self._calls = parts.calls
        self._stop_timeout_s = parts.stop_timeout_s
        self._owner = owner = f"{task_id.connector}-{task_id.task}"
        self._start_plugin = self._calls.bind(owner, "start", task.start)
        self._poll_plugin = self._calls.bind(owner, "poll", task.poll, routine_cancel=True)
        self._config = dict(task_config)
        self._status = SourceTaskStatus(
            task_id,
            parts.reporter,
            context,
            lambda: self._target == TargetState.STARTED and not self._stopping.is_set(),
        )
        self._context = self._status.context
        self.conditions = self._status.conditions
        self._parts = parts
        self._errors = parts.errors
        self._meters = parts.meters
        watch = TargetWatch(
            self._status.conditions,
            target_label(parts.cluster, task_config),
            str(task_id),
            parts.target_bounds,
            wait_refused=not parts.errors.tolerate_all,
            alias=task_config.get("target.cluster.alias") or None,
        )
        self._sender = BatchSender(parts.producer, metrics=parts.meters.producer, watch=watch)
        self._transformations = parts.transformations if parts.transformations else None
        self._records = SourceRecordPipeline(
            parts.converters, self._transformations, parts.errors, self._retry_sleep, self._calls, owner
        )
        self._hooks = SourceHooks(task_id, task, self._calls, owner)
        self._submitted = SubmittedRecords()
        self._close_producer = parts.close_producer
        self._abandoned = False
        self._plugin_started = False
        self._send_error: BaseException | None = None
        self._commits = commits
        self._dispatch = SourceDispatch(
            task_id,
            parts,
            self._records,
            self._hooks,
            self._submitted,
            commits,
            self._send_failed,
        )
        self._dispatch.raw_target = raw_batch_target(
            task, parts.producer, parts.converters.all(), self._transformations
        )
        commit_plugin = self._calls.bind(owner, "commit", task.commit)
        commits.attach(
            CommitSite(
                task_id=task_id,
                sender=self._sender,
                watch=watch,
                submitted=self._submitted,
                stopping=self._stopping.is_set,
                commit_plugin=commit_plugin,
                plugin_running=lambda: not self._dispatch.plugin_stopping,
                settle_hooks=self._hooks.close,
                record_commit=self._record_commit,
                may_commit=parts.may_commit,
            )
        )
        self.records_polled = 0

    # what the task did, for its tests and its worker's views

    @property
    def records_written(self) -> int:
        return self._dispatch.records_written

    @property
    def raw_batches_written(self) -> int:
        return self._dispatch.raw_batches_written

    @property
    def records_skipped(self) -> int:
        return self._dispatch.records_skipped

    @property
    def commits(self) -> int:
        return self._commits.commits

    @property
    def commits_refused(self) -> int:
        return self._commits.commits_refused

    @property
    def last_commit_error(self) -> BaseException | None:
        return self._commits.last_commit_error

    @property
    def send_error(self) -> BaseException | None:
        """A send that failed for good: the task fails with it before its next poll."""
        return self._send_error

    @property
    def dispatcher(self) -> SourceDispatch:
        """How the task's poll batches reach the producer (its ``raw_target``, its ``dispatch``)."""
        return self._dispatch

    @property
    def sender(self) -> BatchSender:
        """The task's producer-side sender (its lanes and waits)."""
        return self._sender

    def stop(self) -> None:
        """Ask the loop to end; batches waiting for their target partition are abandoned (never sent,
        so never committed: the task's next owner copies them)."""
        super().stop()
        self._abandon_waits()

    def _abandon_waits(self) -> None:
        self._sender.abandon()
        self._commits.abandon()

    async def _close_senders(self) -> None:
        await self._sender.close()
        await self._commits.close()

    async def _release(self) -> None:
        """After a cancelled loop: commit the offsets of what the target acknowledged (at-least-once),
        stop the plugin and close the producer (as the loop's end would), then commit what the target
        acknowledged while the producer closed."""
        await self._hooks.close()
        self._abandon_waits()
        with contextlib.suppress(Exception):
            await self._commits.commit_acknowledged()
        self._dispatch.plugin_stopping = True
        await self._hooks.close()
        with contextlib.suppress(Exception):
            await self._stop_plugin()
        with contextlib.suppress(Exception):
            await self._stop_producer()
        with contextlib.suppress(Exception):
            await self._commits.commit_acknowledged()
        with contextlib.suppress(Exception):
            await self._close_senders()
        self._status.forget()

    async def _run(self) -> None:
        enter_task(self.id.connector, self.id.task)  # every line of this task names it (Java's MDC)
        failed = False
        started = False
        try:
            self._status.version = await self._calls.version(self._owner, self.task)
            if await self._wait_while_paused():
                # Stopped before it began (as Java's WorkerTask: closed, and reported as shut down).
                await self._finish(started, failed)
                return
            if self._parts.open_offsets is not None:
                await self._unless_stopping(self._parts.open_offsets())
            await self._commits.prepare(self._unless_stopping)
            if self._stopping.is_set():
                await self._finish(started, failed)
                return
            self.task.initialize(self._context)
            if type(self.task).accept_raw_batches is not SourceTask.accept_raw_batches:
                if not self.task.accept_raw_batches(self._dispatch.raw_target):
                    self._dispatch.raw_target = None  # the record path as it always was
            self._plugin_started = True
            await self._start_plugin(self._config)
            started = True
            self._status.running()
            self._commits.begin()
            while not self._stopping.is_set():
                if self._target != TargetState.STARTED:
                    await self._commits.before_pause()
                    if await self._wait_while_paused():
                        break
                    self._status.running()
                if self._send_error is not None:
                    raise self._send_error
                self._state_changed.clear()
                records = await self._poll()
                if records:
                    if await self._wait_while_fenced():
                        break  # dropped unsent: never acknowledged, never committed
                    await self._commits.dispatch(records, self._dispatch.dispatch)
                else:
                    await self._commits.idle()
        except asyncio.CancelledError:
            raise
        except SendAbandoned:  # stopped while a batch waited for its target partition: a clean stop
            self._abandoned = True
        except Exception as raised:
            failed = True
            self._report_failure(raised)
        finally:
            self._status.stopped_running()
            await self._commits.end()
        await self._finish(started, failed)

    def _report_failure(self, raised: BaseException) -> None:
        refusal, fenced = self._commits.explain(raised)
        exc = refusal or access_error(raised, self._parts.cluster) or raised
        if exc is not raised:
            exc.__cause__ = raised
        if fenced:
            log.warning(  # a zombie's end by design: its task goes on where it was reassigned
                "Task %s failed: %s (a newer instance of this task fenced this one: it runs elsewhere)",
                self.id,
                exc,
            )
        else:  # the first line as text: a retriable cause must not turn this line into a WARN
            log.error("Task %s failed: %s", self.id, first_line(exc))
        self._status.failed(exc)

    async def _finish(self, started: bool, failed: bool) -> None:
        """The loop's end: batches still waiting for their partition are abandoned; the final commit
        (or transaction) covers what the target acknowledged; then the plugin and the producer stop, and
        records acknowledged while the producer closed are committed too."""
        self._abandon_waits()
        if started:
            try:
                await self._commits.finish(failed=failed, abandoned=self._abandoned)
            except Exception as exc:
                failed = True
                log.error("Task %s failed: %s", self.id, first_line(exc))
                self._status.failed(exc)
        self._dispatch.plugin_stopping = True
        await self._hooks.close()
        await self._stop_plugin()
        await self._stop_producer()
        if started:
            await self._commits.commit_acknowledged()
        await self._close_senders()
        self._status.forget()
        if not failed:
            self._status.unassigned()

    async def _stop_producer(self) -> None:
        closer, self._close_producer = self._close_producer, None
        if closer is not None:
            await closer()

    async def _wait_while_paused(self) -> bool:
        """Report PAUSED and wait until STARTED again; True when stopping instead."""
        if self._target == TargetState.STARTED:
            return self._stopping.is_set()
        self._status.paused()
        while self._target != TargetState.STARTED and not self._stopping.is_set():
            self._state_changed.clear()
            await self._state_changed.wait()
        return self._stopping.is_set()

    async def _wait_while_fenced(self) -> bool:
        """Wait while ``may_commit()`` refuses (see the module docstring); True when stopping instead."""
        may_commit = self._parts.may_commit
        if may_commit is None:
            return False
        held_back = False
        while not may_commit():
            if self._stopping.is_set():
                return True
            if not held_back:
                log.warning(
                    "Task %s: holding polled records back: this worker's group membership lapsed", self.id
                )
                held_back = True
            self._state_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._state_changed.wait(), FENCE_RECHECK_S)
        return self._stopping.is_set()

    async def _poll(self) -> list[Any] | None:
        started = time.monotonic()
        poll = asyncio.ensure_future(self._poll_plugin())
        stopped = asyncio.ensure_future(self._state_changed.wait())
        try:
            await asyncio.wait({poll, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            await cancel_and_wait(poll, stopped, log=log)
            raise
        if not poll.done():
            errors = await cancel_and_wait(poll, stopped, log=None)
            if errors:
                raise errors[0]
            return None
        await cancel_and_wait(stopped, log=None)
        try:
            records = poll.result()
        except RetriableError as exc:
            log.info("Task %s: poll() raised a retriable error, polling again: %s", self.id, exc)
            return None
        if records is not None:
            count = len(records)
            if self._dispatch.raw_target is not None:
                count += sum(r.record_count - 1 for r in records if type(r) is RawRecordBatch)
            self.records_polled += count
            if self._meters.source is not None:
                self._meters.source.record_poll(count, (time.monotonic() - started) * 1000)
            if self._meters.task is not None:
                self._meters.task.record_batch(count)
        return list(records) if records is not None and type(records) is not list else records

    def _send_failed(self, error: BaseException) -> None:
        """A send failed for good: the task fails before its next poll."""
        self._send_error = error
        self._state_changed.set()

    def _record_commit(self, started: float, success: bool) -> None:
        if self._meters.task is not None:
            self._meters.task.record_commit((time.monotonic() - started) * 1000, success)


def first_line(exc: BaseException) -> str:
    """The first line of a failed task's trace (``module.Class: message``), as its log line says it."""
    return failure_trace(exc).partition("\n")[0]
