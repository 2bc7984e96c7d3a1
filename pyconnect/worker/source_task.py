"""Runs one source task: poll, convert, produce in batches, commit acknowledged offsets (spec §5.1-5.3).

Size: over 600 lines; splitting it into a task plan, a loop and commit policies is the worker redesign
that is planned next (the target waits already live in pyconnect.kafka.target_lanes/target_waits).

Contract:
- ``start()`` launches the task loop in a task owned by this object and returns at once. A task
  whose target state is PAUSED reports PAUSED and waits before starting the plugin.
- Records of a ``poll()`` first go through the connector's transformation chain (``transforms``),
  then are converted (header, key, value converters), produced through the
  ``BatchSender`` (one future per partition batch) and tracked in ``SubmittedRecords``. Offsets are
  committed only for records Kafka acknowledged: at-least-once. ``commit_record`` hooks run only when
  the plugin overrides them, so a plain task costs no per-record callback.
- Every ``offset_flush_interval_s`` (first after one interval) committable offsets go to the offset
  writer (bounded by ``offset_flush_timeout_s``); offsets that fail to commit are retried next time,
  newer ones winning. ``task.commit()`` follows each flush. On stop: wait up to the flush timeout
  for the records handed to the producer, then a final commit; records the target acknowledges while
  the producer closes are committed after it (without hooks: the plugin has stopped).
- The target side never fails the task for a target that is not ready (the
  :class:`~pyconnect.kafka.batch_sender.BatchSender`'s lanes, :mod:`pyconnect.kafka.target_lanes`): a
  batch for a missing topic or partition, a refused WRITE or a batch too large for the topic waits in
  its partition's lane while the others flow, with a condition on the task's board
  (TARGET_TOPIC_MISSING, ACL_DENIED, RECORD_TOO_LARGE; TARGET_UNREACHABLE when the target acknowledges
  nothing), until the target is ready or ``target_bounds.wait_max_s`` passes (then the task fails with
  the error naming topic, partition and what the target has). ``stop()`` abandons the batches still
  waiting: never sent, never committed (the task's next owner copies them); under exactly-once the open
  transaction is then aborted instead of committed.
- Every commit, the final one too, first asks ``may_commit()`` (the worker's stale-membership fence,
  :mod:`pyconnect.herder.commit_fence`; beyond Java, which always commits). When refused, nothing is
  written and ``task.commit()`` is not called: a running task keeps its offsets for its next commit; a
  stopping task drops them (its worker lost the task while its membership had lapsed, and committing
  them could rewind what the task's new owner committed). Logged at WARN once per refusal streak.
  While refused, polled records are not dispatched either: the loop waits (rechecking every
  ``FENCE_RECHECK_S``) until commits are allowed again or the task stops, and a stopping task drops
  them unsent (never acknowledged, so never committed: the next owner reads them again). A worker woken
  from a long pause thus writes no stale copies of what the task's new owner already copied.
- A record the chain drops (a transformation returned ``None``) is still submitted in poll order and
  acknowledged at once, so its source offset commits like its neighbours', and the task's
  ``commit_record(record, None)`` runs for it (Java's ``recordDropped``): a MirrorSourceTask writes no
  offset sync for it, and the gap it leaves upstream makes the next record's sync exact. Hooks of
  records that were sent get the record as polled (before transformation), as in Java.
- Transformation and conversion errors go through the task's
  :class:`~pyconnect.worker.retry_with_tolerance.RetryWithTolerance` (``errors.retry.timeout``,
  ``errors.retry.delay.max.ms``, ``errors.tolerance``, ``errors.log.enable``): a retriable error is
  retried after a backoff awaited on the loop (a stop ends the wait and drops the whole poll batch,
  unsubmitted: its offsets never commit); an error that gives up fails the task, or with
  ``errors.tolerance=all`` skips the record like a dropped one; all counted in ``task-error-metrics``.
  The fast paths are unchanged when nothing fails: the chain's stages are applied inline per record
  (a failing record goes on stage by stage through the core), and a batch conversion that raises is
  redone record by record and converter by converter through the core. A
  failed delivery fails the task before the next poll (or, with tolerance all, is counted, logged
  with ``errors.log.enable`` as stage ``KAFKA_PRODUCE``, skipped, and given to
  ``commit_record(record, None)``, as Java's ``producerSendFailed``). A task that
  fails on a cluster's refusal (its producer lacks WRITE on a topic: ``Not authorized to access
  topics: [t]``) reports it as an access error naming ``cluster`` (:mod:`pyconnect.kafka.access`).
- KIP-558: ``on_topic(task_id, topic)`` is called once per acknowledged batch (the callee decides
  whether the topic is new for the connector).
- Metrics, recorded per batch as Java's: each ``poll()`` that returns (an empty list too) records its
  size and duration (``source-record-poll-*``, ``poll-batch-*-time-ms``, ``batch-size-*``); each
  acknowledged or skipped partition batch records its written records (``source-record-write-*``) and
  the records still in flight (``source-record-active-count*``); each offset commit its duration and
  outcome (a commit with nothing to write is a success, as in Java).
- Exactly-once (KIP-618, ``transactions`` given; the worker has ``exactly.once.source.support=enabled``):
  ``preflight()`` runs first (the herder's zombie fencing of older task generations, then the start of
  the producer), then the task's transactional producer is initialised (fencing an older instance of
  the task), then ``postflight()`` (the herder checks the task is still current and assigned here);
  all before the plugin starts, and a failure of any fails the task. Records go through it; the offsets of records the producer accepted are
  written to the offsets topic in the same transaction (serialized by ``encode_offsets``), which is
  committed at each transaction boundary: after every dispatched ``poll()`` batch (``poll``, the
  default), or at the first batch end ``transaction_interval_s`` after the last commit (``interval``;
  a ``poll()`` that returns nothing ends a batch too, so a quiet source's records still commit);
  also before pausing and on a clean stop. With ``transaction_context`` (``connector``) the task's own
  requests end transactions: a commit or an abort (whose offsets are still committed, in a new
  transaction) after a given record or at the end of a batch; no commit on pause, and at a clean stop
  only when requested (an open transaction is aborted). The periodic committer and ``may_commit()`` are not used for
  commits (the producer fence is the guard). A failed commit fails the task; a failed task abandons its
  open transaction. ``commit_record`` hooks of sent records and ``task.commit()`` run after the
  transaction commits.
- Raw record batches (:mod:`pyconnect.api.source`): a task that accepts them is told after
  ``initialize`` whether it may return :class:`~pyconnect.api.source.RawRecordBatch` items
  (:func:`~pyconnect.worker.raw_batches.raw_batch_target`). Each item is handed to the producer as one
  batch (:class:`~pyconnect.kafka.raw_batches_io.RawBatch`; under exactly-once inside the open
  transaction, its offset written with the transaction's), in poll order with the records around it,
  submitted as one entry of ``record_count`` records, acknowledged as one; then
  ``commit_raw_batch(item, base_offset)`` (after the transaction commits, under exactly-once). A
  failed batch fails the task, or under ``errors.tolerance=all`` is counted as ``record_count``
  skipped records (no per-record error log: the records were never decoded). Metrics count records.
- ``open_offsets()`` (the connector's own offsets topic, when it has one: created if missing and read
  to the end) runs first in the loop, before any offset is read; its failure fails the task.
- The plugin's ``start``/``poll``/``commit``/``commit_record``/``stop`` go through
  :class:`~pyconnect.worker.plugin_calls.PluginCalls`: coroutine methods run on the loop as they are
  (no thread hop), plain ones on a plugin thread, so a task that blocks never blocks the loop. A plain
  ``poll`` costs one thread hop per batch; the ``commit_record`` calls of one batch share one hop.
  ``stop()`` is bounded by ``stop_timeout_s`` (an overrun is abandoned and logged). A plain ``poll``
  still running when the task stops is left to return on its thread (its records are dropped, never
  sent), as a Java task's ``stop`` runs while its ``poll`` may still block.
- Converters: the runtime's own (``pyconnect.*`` classes: quick, never blocking) convert a batch on
  the loop; when any of the task's converters comes from elsewhere (a plugin that may block, e.g. on a
  schema registry), each batch is converted on a plugin thread (one hop per batch, no bound, as
  ``poll``); the record-by-record conversion after a failed batch makes one hop per converter call.
- ``stop()`` asks the loop to end (a blocking ``poll`` is cancelled); ``wait_stopped(timeout)``
  waits for a clean end and otherwise cancels the loop: then no UNASSIGNED is reported; the offsets of
  the records the target acknowledged are still committed (beyond Java, which may skip that commit and
  copy them again), before the plugin stops and once more after the producer closed; the same when
  ``wait_stopped`` itself is cancelled. Either way
  the plugin's ``stop()`` runs exactly once when its ``start()`` was called (even a failed or
  cancelled ``start``), so its clients are always closed, and no task of this object outlives it. A
  failed task reports FAILED with its trace and leaves other tasks alone; its log line is an ERROR
  with the trace's first line on every path (never demoted to WARN for a retriable cause).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from pyconnect.api.source import (
    RawRecordBatch,
    RecordMetadata,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionContext,
)
from pyconnect.concurrency import TaskSet, cancel_and_wait
from pyconnect.conditions import ConditionBoard, ConditionRegistry
from pyconnect.errors import RetriableError
from pyconnect.kafka.access import access_error
from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord, SentBatch
from pyconnect.kafka.raw_batches_io import RawBatch
from pyconnect.kafka.target_lanes import SendAbandoned
from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.kafka.target_watch import TargetWatch
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.log_context import enter_task
from pyconnect.log_guard import is_retriable
from pyconnect.metrics.client_metrics import ProducerMetrics
from pyconnect.metrics.connect import SourceTaskMetrics, TaskMetrics
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.transforms.chain import TransformationChain
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.plugin_calls import PluginCalls, is_coroutine_method
from pyconnect.worker.raw_batches import interleaved, raw_batch_target
from pyconnect.worker.retry_with_tolerance import (
    HEADER_CONVERTER,
    KAFKA_PRODUCE,
    KEY_CONVERTER,
    SKIPPED,
    TRANSFORMATION,
    VALUE_CONVERTER,
    RetryInterrupted,
    RetryWithTolerance,
)
from pyconnect.worker.status import StatusReporter
from pyconnect.worker.submitted_records import (
    DispatchedRuns,
    SubmittedRecord,
    SubmittedRecords,
)
from pyconnect.worker.target_wait_config import target_label
from pyconnect.worker.task_lifecycle import TaskLifecycle
from pyconnect.worker.worker_connector import java_class_name

log = logging.getLogger(__name__)

WORKER_SOURCE_TASK_CLASS = "org.apache.kafka.connect.runtime.WorkerSourceTask"
"""The executing class Java names for a failed produce (stage ``KAFKA_PRODUCE``)."""

FENCE_RECHECK_S = 0.1
"""How often a task held back by a refused ``may_commit()`` asks again."""

OffsetWriter = Callable[
    [dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]], Awaitable[None]
]
OffsetEncoder = Callable[
    [list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]], list[tuple[bytes, bytes | None]]
]
"""Serializes ``(source partition, source offset)`` pairs into offsets-topic records (key, value)."""


def _picked(records: list[SourceRecord], indices: list[int]) -> list[SourceRecord]:
    """``records`` at these ascending ``indices``: one slice when they are consecutive (a batch of one
    partition's run, the usual case)."""
    if indices and indices[-1] - indices[0] == len(indices) - 1:
        return records[indices[0] : indices[-1] + 1]
    return [records[i] for i in indices]


class WorkerSourceTask(TaskLifecycle):
    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_config: Mapping[str, str],
        context: SourceTaskContext,
        *,
        producer: Any,
        key_converter: Any,
        value_converter: Any,
        header_converter: Any,
        write_offsets: OffsetWriter,
        reporter: StatusReporter,
        may_commit: Callable[[], bool] | None = None,
        target_state: TargetState = TargetState.STARTED,
        offset_flush_interval_s: float = 60.0,
        offset_flush_timeout_s: float = 5.0,
        errors: RetryWithTolerance | None = None,
        close_producer: Callable[[], Awaitable[None]] | None = None,
        on_topic: Callable[[ConnectorTaskId, str], None] | None = None,
        metrics: SourceTaskMetrics | None = None,
        task_metrics: TaskMetrics | None = None,
        cluster: str = "the worker's Kafka cluster",
        transformations: TransformationChain | None = None,
        transactions: TaskTransactions | None = None,
        encode_offsets: OffsetEncoder | None = None,
        transaction_interval_s: float | None = None,
        producer_metrics: ProducerMetrics | None = None,
        transaction_context: TransactionContext | None = None,
        preflight: Callable[[], Awaitable[None]] | None = None,
        postflight: Callable[[], Awaitable[None]] | None = None,
        open_offsets: Callable[[], Awaitable[None]] | None = None,
        calls: PluginCalls | None = None,
        stop_timeout_s: float = 5.0,
        target_bounds: WaitBounds | None = None,
    ) -> None:
        super().__init__(task_id, target_state)
        self.task = task
        self._calls = calls if calls is not None else PluginCalls()
        self._stop_timeout_s = stop_timeout_s
        owner = f"{task_id.connector}-{task_id.task}"
        self._owner = owner
        self._version_text: str | None = None
        self._start_plugin = self._calls.bind(owner, "start", task.start)
        self._poll_plugin = self._calls.bind(owner, "poll", task.poll, routine_cancel=True)
        self._commit_plugin = self._calls.bind(owner, "commit", task.commit)
        self._commit_record_async = is_coroutine_method(task.commit_record)
        self._config = dict(task_config)
        if context.conditions is None:
            registry = context.metrics.conditions if context.metrics is not None else ConditionRegistry()
            self._conditions_registry: ConditionRegistry | None = registry
            board = registry.board(task_id.connector, task_id.task, on_change=self._conditions_changed)
            context = dataclasses.replace(context, conditions=board)
        else:
            self._conditions_registry = None
        self._context = context
        assert context.conditions is not None
        self.conditions: ConditionBoard = context.conditions
        self._problem: str | None = None
        self._running = False
        self._producer = producer
        watch = TargetWatch(
            self.conditions,
            target_label(cluster, task_config),
            str(task_id),
            target_bounds or WaitBounds(),
            wait_refused=errors is None or not errors.tolerate_all,
            alias=task_config.get("target.cluster.alias") or None,
        )
        self._sender = BatchSender(producer, metrics=producer_metrics, watch=watch)
        if transactions is not None:
            transactions.sender.observe(watch)
        self._abandoned = False
        self._plugin_stopping = False
        self._key_converter = key_converter
        self._value_converter = value_converter
        self._header_converter = header_converter
        self._convert_records = (
            self._convert_on_loop
            if all(runtime_converter(c) for c in (key_converter, value_converter, header_converter))
            else self._calls.bind(owner, "convert", self._convert_batch, routine_cancel=True)
        )
        self._write_offsets = write_offsets
        self._may_commit = may_commit
        self._refusing = False
        self.commits_refused = 0
        self._reporter = reporter
        self._flush_interval_s = offset_flush_interval_s
        self._flush_timeout_s = offset_flush_timeout_s
        self._errors = errors if errors is not None else RetryWithTolerance()
        self._operate = (
            call_on_loop
            if all(runtime_converter(c) for c in (key_converter, value_converter, header_converter))
            else self._calls.bind(owner, "convert", call_operation, routine_cancel=True)
        )
        self._close_producer = close_producer
        self._on_topic = on_topic
        self._metrics = metrics
        self._task_metrics = task_metrics
        self._cluster = cluster
        self._transformations = transformations if transformations else None
        self._transactions = transactions
        self._encode_offsets = encode_offsets
        self._txn_interval_s = transaction_interval_s
        self._preflight = preflight
        self._open_offsets = open_offsets
        self._txn_context = transaction_context
        self._postflight = postflight
        self._last_txn_commit = 0.0
        self._txn_offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}
        self._after_commit: list[Callable[[], object]] = []
        self._submitted = SubmittedRecords()
        self._unflushed: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}
        self._plugin_started = False
        self._send_error: BaseException | None = None
        self._hooks = TaskSet(log)
        self._hooks_commit_batch = type(task).commit_record_batch is not SourceTask.commit_record_batch
        self._hooks_commit_record = type(task).commit_record is not SourceTask.commit_record
        self._hooks_commit_raw = type(task).commit_raw_batch is not SourceTask.commit_raw_batch
        self._raw_target = raw_batch_target(
            task, producer, (key_converter, value_converter, header_converter), self._transformations
        )
        self.raw_batches_written = 0
        self.records_polled = 0
        self.records_written = 0
        self.records_skipped = 0
        self.commits = 0
        self.last_commit_error: BaseException | None = None

    kind = "source"

    def stop(self) -> None:
        """Ask the loop to end; batches waiting for their target partition are abandoned (never sent,
        so never committed: the task's next owner copies them)."""
        super().stop()
        self._abandon_waits()

    def _abandon_waits(self) -> None:
        self._sender.abandon()
        if self._transactions is not None:
            self._transactions.sender.abandon()

    async def _close_senders(self) -> None:
        await self._sender.close()
        if self._transactions is not None:
            await self._transactions.sender.close()

    async def _release(self) -> None:
        """After a cancelled loop: commit the offsets of what the target acknowledged (at-least-once),
        stop the plugin and close the producer (as the loop's end would), then commit what the target
        acknowledged while the producer closed."""
        await self._hooks.close()
        self._abandon_waits()
        if self._transactions is None:
            with contextlib.suppress(Exception):
                await self._commit_acknowledged()
        self._plugin_stopping = True
        await self._hooks.close()
        with contextlib.suppress(Exception):
            await self._stop_plugin()
        with contextlib.suppress(Exception):
            await self._stop_producer()
        if self._transactions is None:
            with contextlib.suppress(Exception):
                await self._commit_acknowledged()
        with contextlib.suppress(Exception):
            await self._close_senders()
        self._forget_conditions()

    async def _run(self) -> None:
        enter_task(self.id.connector, self.id.task)  # every line of this task names it (Java's MDC)
        failed = False
        committer: asyncio.Task[None] | None = None
        started = False
        try:
            self._version_text = await self._calls.version(self._owner, self.task)
            if await self._wait_while_paused():
                # Stopped before it began (as Java's WorkerTask: closed, and reported as shut down).
                await self._finish(started, failed)
                return
            if self._open_offsets is not None:
                await self._unless_stopping(self._open_offsets())
            if self._transactions is not None:
                if self._preflight is not None:
                    await self._unless_stopping(self._preflight())
                if self._stopping.is_set():
                    await self._finish(started, failed)
                    return
                await self._transactions.initialize()
                if self._postflight is not None:
                    await self._postflight()
                if self._stopping.is_set():
                    await self._finish(started, failed)
                    return
            self.task.initialize(self._context)
            if type(self.task).accept_raw_batches is not SourceTask.accept_raw_batches:
                if not self.task.accept_raw_batches(self._raw_target):
                    self._raw_target = None  # the record path as it always was
            self._plugin_started = True
            await self._start_plugin(self._config)
            started = True
            self._report_running()
            if self._transactions is None:
                committer = asyncio.create_task(
                    self._commit_loop(), name=f"offset-commit-{self.id.connector}-{self.id.task}"
                )
            self._last_txn_commit = time.monotonic()
            while not self._stopping.is_set():
                if self._target != TargetState.STARTED:
                    if self._transactions is not None and self._txn_context is None:
                        await self._commit_transaction()  # no transaction hangs open while paused
                    if await self._wait_while_paused():
                        break
                    self._report_running()
                if self._send_error is not None:
                    raise self._send_error
                self._state_changed.clear()
                records = await self._poll()
                if records:
                    if await self._wait_while_fenced():
                        break  # dropped unsent: never acknowledged, never committed
                    if self._txn_context is not None:
                        await self._dispatch_in_connector_transactions(records, self._txn_context)
                    else:
                        await self._dispatch(records)
                        if self._transactions is not None and self._transaction_boundary():
                            await self._commit_transaction()
                elif self._idle_transaction_due():
                    await self._commit_transaction()
        except asyncio.CancelledError:
            raise
        except SendAbandoned:  # stopped while a batch waited for its target partition: a clean stop
            self._abandoned = True
        except Exception as raised:
            failed = True
            refusal = self._transactions.refusal(raised) if self._transactions is not None else None
            exc = refusal or access_error(raised, self._cluster) or raised
            if exc is not raised:
                exc.__cause__ = raised
            if self._transactions is not None and self._transactions.fenced(raised):
                log.warning(  # a zombie's end by design: its task goes on where it was reassigned
                    "Task %s failed: %s (a newer instance of this task fenced this one: it runs elsewhere)",
                    self.id,
                    exc,
                )
            else:  # the first line as text: a retriable cause must not turn this line into a WARN
                log.error("Task %s failed: %s", self.id, first_line(exc))
            self._running = False
            self._reporter.report(self.id, State.FAILED, failure_trace(exc), self._version())
        finally:
            self._running = False
            await cancel_and_wait(committer, log=log)
        await self._finish(started, failed)

    async def _finish(self, started: bool, failed: bool) -> None:
        """The loop's end: batches still waiting for their partition are abandoned; the final commit
        (or transaction) covers what the target acknowledged; then the plugin and the producer stop, and
        records acknowledged while the producer closed are committed too."""
        self._abandon_waits()
        if started and self._transactions is not None:
            if not failed:  # a failed task abandons its open transaction (Java)
                try:
                    if self._abandoned:  # part of a dispatch was never sent: its offsets must not commit
                        await self._abort_abandoned_transaction()
                    else:
                        self._transactions.sender.resume()  # the offsets of the final transaction
                        if self._txn_context is None:
                            await self._commit_transaction()
                        else:
                            await self._end_connector_transaction(self._txn_context, final=True)
                except Exception as exc:
                    failed = True
                    log.error("Task %s failed: %s", self.id, first_line(exc))
                    self._reporter.report(self.id, State.FAILED, failure_trace(exc), self._version())
            await self._hooks.close(grace_s=self._flush_timeout_s)
        elif started:
            await self._sender.wait_settled(self._flush_timeout_s)
            await self._hooks.close(grace_s=self._flush_timeout_s)
            await self._commit_offsets(final=True)
        self._plugin_stopping = True
        await self._hooks.close()
        await self._stop_plugin()
        await self._stop_producer()
        if started and self._transactions is None:
            await self._commit_acknowledged()
        await self._close_senders()
        self._forget_conditions()
        if not failed:
            self._reporter.report(self.id, State.UNASSIGNED)

    async def _abort_abandoned_transaction(self) -> None:
        """A stop interrupted a dispatch: the open transaction (records of that dispatch included) is
        aborted, nothing of it is visible to ``read_committed``, and the task's next owner copies it."""
        transactions = self._transactions
        assert transactions is not None
        self._txn_offsets, self._after_commit = {}, []
        if transactions.open:
            log.info("Task %s: aborting the open transaction: the task stopped during a dispatch", self.id)
            await transactions.abort()

    async def _commit_acknowledged(self) -> None:
        """Offsets of records acknowledged since the last commit (the producer's close, a cancelled
        task), written before the task goes: its next owner never copies what the target has."""
        self._unflushed.update(self._submitted.committable().offsets)
        if self._unflushed:
            await self._commit_offsets(final=True)

    async def _stop_producer(self) -> None:
        closer, self._close_producer = self._close_producer, None
        if closer is not None:
            await closer()

    def _report_running(self) -> None:
        self._running = True
        self._reporter.report(self.id, State.RUNNING, self._problem, self._version())

    def _conditions_changed(self) -> None:
        """The task's conditions changed (``context.conditions``): RUNNING again, with them as its trace."""
        self._report_problem(self.conditions.trace())

    def _forget_conditions(self) -> None:
        """The task is done: its conditions leave the worker's registry (idempotent)."""
        registry, self._conditions_registry = self._conditions_registry, None
        if registry is not None:
            registry.remove(self.conditions)

    def _report_problem(self, text: str | None) -> None:
        """RUNNING again, with ``text`` as its trace (``None``: without)."""
        if text == self._problem:
            return
        self._problem = text
        if self._running and self._target == TargetState.STARTED and not self._stopping.is_set():
            self._reporter.report(self.id, State.RUNNING, text, self._version())

    def _version(self) -> str | None:
        """The task's version, asked once on a plugin thread when it began (never on the loop)."""
        return self._version_text

    async def _wait_while_paused(self) -> bool:
        """Report PAUSED and wait until STARTED again; True when stopping instead."""
        if self._target == TargetState.STARTED:
            return self._stopping.is_set()
        self._running = False
        self._reporter.report(self.id, State.PAUSED, version=self._version())
        while self._target != TargetState.STARTED and not self._stopping.is_set():
            self._state_changed.clear()
            await self._state_changed.wait()
        return self._stopping.is_set()

    async def _wait_while_fenced(self) -> bool:
        """Wait while ``may_commit()`` refuses (see the module docstring); True when stopping instead."""
        if self._may_commit is None:
            return False
        held_back = False
        while not self._may_commit():
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

    async def _unless_stopping(self, step: Awaitable[None]) -> None:
        """Run ``step`` (the preflight, which may wait for the herder's loop) unless the task is asked
        to stop first: then it is cancelled, so stopping a task never waits for its fencing round."""
        work = asyncio.ensure_future(step)
        stopped = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            await cancel_and_wait(work, stopped, log=log)
            raise
        if not work.done():
            await cancel_and_wait(work, stopped, log=None)
            return
        await cancel_and_wait(stopped, log=None)
        work.result()

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
            if self._raw_target is not None:
                count += sum(r.record_count - 1 for r in records if type(r) is RawRecordBatch)
            self.records_polled += count
            if self._metrics is not None:
                self._metrics.record_poll(count, (time.monotonic() - started) * 1000)
            if self._task_metrics is not None:
                self._task_metrics.record_batch(count)
        return list(records) if records is not None and type(records) is not list else records

    async def _dispatch(self, records: list[Any]) -> None:
        """Records and raw batches in poll order: runs of records through :meth:`_dispatch_records`,
        raw batches through :meth:`_send_raw`."""
        if self._raw_target is None or not any(type(r) is RawRecordBatch for r in records):
            await self._dispatch_records(records)
            return
        for raw, run in itertools.groupby(records, key=lambda r: type(r) is RawRecordBatch):
            if raw:
                await self._send_raw(list(run))
            else:
                await self._dispatch_records(list(run))

    async def _send_raw(self, items: list[RawRecordBatch]) -> None:
        """Each raw batch to the producer as one batch, one submitted entry each (see the module
        docstring)."""
        submit = self._submitted.submit
        transactions = self._transactions
        sender = self._sender if transactions is None else transactions.sender
        await sender.learn_topics({item.topic for item in items})
        for item in interleaved(items):
            builder = RawBatch.of_batch(self._producer, item.data)
            entry = submit(item.source_partition, item.source_offset, item.record_count)
            if transactions is not None:
                future = await transactions.send_raw(item.topic, item.kafka_partition, builder)
                self._txn_offsets[entry.key] = (entry.partition, entry.offset)
            else:
                future = await self._sender.send_raw(item.topic, item.kafka_partition, builder)
            future.add_done_callback(functools.partial(self._on_raw_done, item=item, entry=entry))

    def _on_raw_done(self, fut: asyncio.Future[Any], *, item: RawRecordBatch, entry: SubmittedRecord) -> None:
        count = item.record_count
        if fut.cancelled() or fut.exception() is not None:
            error: BaseException = (  # a cancelled future raises from exception(): a producer stopped
                asyncio.CancelledError() if fut.cancelled() else fut.exception() or asyncio.CancelledError()
            )
            if isinstance(error, SendAbandoned):  # never sent: not acknowledged, never committed
                return
            if not self._errors.tolerate_all:
                self._send_error = error
                self._state_changed.set()
                return
            log.warning(
                "Task %s: skipping a batch of %d records for %s-%d that failed to send (errors.tolerance=all): %s",
                self.id,
                count,
                item.topic,
                item.kafka_partition,
                "cancelled" if fut.cancelled() else error,
            )
            self.records_skipped += count
            entry.ack()
            if self._metrics is not None:
                self._metrics.record_write(count, count)
            return
        meta = fut.result()
        self.records_written += count
        self.raw_batches_written += 1
        if self._metrics is not None:
            self._metrics.record_write(count, 0)
        entry.ack()
        if self._on_topic is not None:
            try:
                self._on_topic(self.id, item.topic)
            except Exception:
                log.exception("Task %s: recording active topic %s failed", self.id, item.topic)
        if not self._hooks_commit_raw or self._plugin_stopping:
            return
        if self._transactions is not None:  # hooks run once the transaction has committed
            self._after_commit.append(functools.partial(self._raw_hook, item, meta.offset))
        else:
            self._raw_hook(item, meta.offset)

    def _raw_hook(self, item: RawRecordBatch, base_offset: int) -> None:
        try:
            self.task.commit_raw_batch(item, base_offset)
        except Exception:
            log.exception("Task %s: commit_raw_batch() failed", self.id)

    async def _dispatch_records(self, records: list[SourceRecord]) -> None:
        """Transform and convert ``records`` (each failure through the retry-with-tolerance core), then
        submit every one in poll order (those dropped by the chain or skipped after an error are
        acknowledged at once) and send the rest. A stop while an operation waits to be retried drops
        the whole batch unsent and unsubmitted."""
        chain = self._transformations
        try:
            if chain is None:
                try:
                    converted = await self._convert_records(records)
                except Exception:
                    outgoing = await self._convert_one_by_one(records, records)
                    results: list[SourceRecord | None] = list(records)
                else:  # the fast path: nothing dropped, nothing skipped
                    await self._send(converted, records, None)
                    return
            else:
                results = await self._transform_all(records, chain)
                transformed = [r for r in results if r is not None]
                originals = [r for r, t in zip(records, results, strict=True) if t is not None]
                outgoing = await self._convert_all(transformed, originals) if transformed else []
        except RetryInterrupted:
            return
        submit = self._submitted.submit
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
            if self._metrics is not None:
                self._metrics.record_write(len(dropped), len(dropped))
            if self._hooks_commit_record:
                await self._records_dropped(dropped)
        await self._send(sent, kept, DispatchedRuns.one_per_record(tracked))

    async def _transform_all(
        self, records: list[SourceRecord], chain: TransformationChain
    ) -> list[SourceRecord | None]:
        """Each record through the chain (``None``: dropped, or skipped after an error). The fast path
        applies the stages inline; a record whose stage raises goes on through :meth:`_transform_slowly`."""
        stages = chain.stages
        results: list[SourceRecord | None] = []
        for record in records:
            current: SourceRecord | None = record
            position = 0
            try:
                for position, stage in enumerate(stages):  # noqa: B007  (read by the except)
                    current = stage.apply(current)  # type: ignore[arg-type]
                    if current is None:
                        break
            except Exception as exc:
                current = await self._transform_slowly(record, current, position, exc)
            results.append(current)
        return results

    async def _transform_slowly(
        self, original: SourceRecord, current: Any, position: int, error: BaseException
    ) -> SourceRecord | None:
        """The chain from the stage at ``position`` (which raised ``error`` on ``current``) on, stage by
        stage through the core; ``None`` when dropped or skipped."""
        assert self._transformations is not None
        first: BaseException | None = error
        for stage in self._transformations.stages[position:]:
            value = current

            async def apply(stage: Any = stage, value: Any = value) -> Any:
                return stage.apply(value)

            current = await self._errors.execute_async(
                apply,
                original,
                TRANSFORMATION,
                java_class_name(type(stage.transformation)),
                clock_ms=monotonic_ms,
                sleep=self._retry_sleep,
                first_error=first,
            )
            first = None
            if current is SKIPPED:
                self.records_skipped += 1
                return None
            if current is None:
                return None
        return current

    async def _convert_all(
        self, records: list[SourceRecord], originals: list[SourceRecord]
    ) -> list[OutgoingRecord | None]:
        """``records`` converted (``None`` for one skipped after an error): the whole batch at once, or,
        when that raises, :meth:`_convert_one_by_one`."""
        try:
            return cast("list[OutgoingRecord | None]", await self._convert_records(records))
        except Exception:
            return await self._convert_one_by_one(records, originals)

    async def _convert_one_by_one(
        self, records: list[SourceRecord], originals: list[SourceRecord]
    ) -> list[OutgoingRecord | None]:
        """Record by record and converter by converter through the core, after a batch conversion
        raised (that call is not counted as an attempt of any record: which record failed is unknown)."""
        return [await self._convert_slowly(r, o) for r, o in zip(records, originals, strict=True)]

    async def _convert_slowly(self, record: SourceRecord, original: SourceRecord) -> OutgoingRecord | None:
        """One record through the header, key and value converters (Java's order), each a core operation."""
        topic = record.topic
        header_converter, key_converter, value_converter = (
            self._header_converter,
            self._key_converter,
            self._value_converter,
        )

        async def attempt(operation: Callable[[], Any], stage: str, converter: Any) -> Any:
            return await self._errors.execute_async(
                lambda: self._operate(operation),
                original,
                stage,
                java_class_name(type(converter)),
                clock_ms=monotonic_ms,
                sleep=self._retry_sleep,
            )

        headers = await attempt(
            lambda: [
                (h.key, header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                for h in record.headers
            ],
            HEADER_CONVERTER,
            header_converter,
        )
        if headers is not SKIPPED:
            key = await attempt(
                lambda: key_converter.from_connect_data(topic, headers, record.key_schema, record.key),
                KEY_CONVERTER,
                key_converter,
            )
            if key is not SKIPPED:
                value = await attempt(
                    lambda: value_converter.from_connect_data(
                        topic, headers, record.value_schema, record.value
                    ),
                    VALUE_CONVERTER,
                    value_converter,
                )
                if value is not SKIPPED:
                    timestamp = record.timestamp
                    return OutgoingRecord(
                        topic,
                        key,
                        value,
                        record.kafka_partition,
                        timestamp if timestamp is not None and timestamp >= 0 else None,
                        headers,
                    )
        self.records_skipped += 1
        return None

    async def _records_dropped(self, records: Sequence[SourceRecord]) -> None:
        """``commit_record(record, None)`` for each, now, or with exactly-once once the transaction
        commits."""
        pairs: list[tuple[SourceRecord, RecordMetadata | None]] = [(record, None) for record in records]
        if self._transactions is None:
            await self._commit_records(pairs)
            return
        self._after_commit.append(
            lambda: self._hooks.spawn(self._commit_records(pairs), name=f"commit-record-{self.id}")
        )

    async def _commit_records(self, acked: Sequence[tuple[SourceRecord, RecordMetadata | None]]) -> None:
        """``commit_record`` for each pair, in order; a plain method gets one thread hop for all."""
        if self._commit_record_async:
            for record, metadata in acked:
                try:
                    await self.task.commit_record(record, metadata)
                except Exception:
                    log.exception("Task %s: commit_record() failed", self.id)
            return
        await self._calls.call(self._owner, "commit_record", self._commit_records_plain, acked)

    def _commit_records_plain(self, acked: Sequence[tuple[SourceRecord, RecordMetadata | None]]) -> None:
        """On a plugin thread: a plain ``commit_record`` for each pair."""
        commit_record: Any = self.task.commit_record
        for record, metadata in acked:
            try:
                commit_record(record, metadata)
            except Exception:
                log.exception("Task %s: commit_record() failed", self.id)

    async def _send(
        self, outgoing: list[OutgoingRecord], kept: list[SourceRecord], tracked: DispatchedRuns | None
    ) -> None:
        """Hand ``outgoing`` over and follow each batch's acknowledgement. ``tracked`` ``None`` (the fast
        path): the records are submitted once their batches are known, in runs that end where a batch
        begins, so that each batch's acknowledgement commits on its own (a task stopped while one batch
        of a run waits still commits the batches before it)."""
        if not outgoing:
            return
        if self._transactions is not None:
            batches = await self._transactions.send(outgoing)
            if tracked is None:
                tracked = DispatchedRuns(self._submitted, kept, batch_starts(batches, len(kept)))
            offsets = self._txn_offsets
            for entry in tracked.entries:  # offsets of records the producer accepted (recordDispatched)
                offsets[entry.key] = (entry.partition, entry.offset)
        else:
            batches = await self._sender.send(outgoing)
            if tracked is None:
                tracked = DispatchedRuns(self._submitted, kept, batch_starts(batches, len(kept)))
        for batch in batches:
            batch.future.add_done_callback(
                functools.partial(self._on_batch_done, batch=batch, kept=kept, tracked=tracked)
            )

    async def _convert_on_loop(self, records: list[SourceRecord]) -> list[OutgoingRecord]:
        return self._convert_batch(records)

    def _convert_batch(self, records: list[SourceRecord]) -> list[OutgoingRecord]:
        """Keys and values through ``from_connect_batch``, one call per run of records sharing topic and
        schemas (the batch-first converter contract); headers per record, only where there are any."""
        count = len(records)
        keys: list[bytes | None] = [None] * count
        values: list[bytes | None] = [None] * count
        start = 0
        while start < count:
            first = records[start]
            topic, key_schema, value_schema = first.topic, first.key_schema, first.value_schema
            end = start + 1
            while (
                end < count
                and records[end].topic == topic
                and records[end].key_schema is key_schema
                and records[end].value_schema is value_schema
            ):
                end += 1
            run = records[start:end]
            keys[start:end] = _batch(self._key_converter, topic, key_schema, [r.key for r in run])
            values[start:end] = _batch(self._value_converter, topic, value_schema, [r.value for r in run])
            start = end
        header_converter = self._header_converter
        outgoing = []
        for record, key, value in zip(records, keys, values, strict=True):
            topic = record.topic
            headers = (
                [
                    (h.key, header_converter.from_connect_header(topic, h.key, h.schema, h.value))
                    for h in record.headers
                ]
                if record.headers
                else []
            )
            timestamp = record.timestamp
            outgoing.append(
                OutgoingRecord(
                    topic,
                    key,
                    value,
                    record.kafka_partition,
                    timestamp if timestamp is not None and timestamp >= 0 else None,
                    headers,
                )
            )
        return outgoing

    def _on_batch_done(
        self,
        fut: asyncio.Future[Any],
        *,
        batch: SentBatch,
        kept: list[SourceRecord],
        tracked: DispatchedRuns,
    ) -> None:
        if fut.cancelled() or fut.exception() is not None:
            error: BaseException = (  # a cancelled future raises from exception(): a producer stopped
                asyncio.CancelledError() if fut.cancelled() else fut.exception() or asyncio.CancelledError()
            )
            if isinstance(error, SendAbandoned):  # never sent: not acknowledged, never committed
                return
            if not self._errors.tolerate_all:
                self._send_error = error
                self._state_changed.set()
                return
            now = monotonic_ms()
            for i in batch.indices:  # counted and logged (errors.log.enable) as Java's executeFailed
                self._errors.execute_failed(kept[i], KAFKA_PRODUCE, WORKER_SOURCE_TASK_CLASS, error, now)
            self.records_skipped += len(batch.indices)
            tracked.ack(batch.indices)
            if self._metrics is not None:
                self._metrics.record_write(len(batch.indices), len(batch.indices))
            if self._hooks_commit_record:  # Java's producerSendFailed: commitTaskRecord(record, null)
                failed = [kept[i] for i in batch.indices]
                self._hooks.spawn(self._records_dropped(failed), name=f"commit-record-{self.id}")
            return
        meta = fut.result()
        self.records_written += len(batch.indices)
        if self._metrics is not None:
            self._metrics.record_write(len(batch.indices), 0)
        tracked.ack(batch.indices)
        if self._on_topic is not None:
            try:
                self._on_topic(self.id, batch.topic)
            except Exception:
                log.exception("Task %s: recording active topic %s failed", self.id, batch.topic)
        if not (self._hooks_commit_batch or self._hooks_commit_record) or self._plugin_stopping:
            return  # (acknowledged while the producer closed, after the plugin stopped: no hook)
        if self._transactions is not None:  # hooks run once the transaction has committed
            self._after_commit.append(functools.partial(self._batch_hooks, batch, kept, meta))
        else:
            self._batch_hooks(batch, kept, meta)

    def _batch_hooks(self, batch: SentBatch, kept: list[SourceRecord], meta: Any) -> None:
        if self._hooks_commit_batch:
            try:
                self.task.commit_record_batch(
                    _picked(kept, batch.indices), batch.topic, batch.partition, meta.offset
                )
            except Exception:
                log.exception("Task %s: commit_record_batch() failed", self.id)
        elif self._hooks_commit_record:
            acked = [
                (
                    kept[i],
                    RecordMetadata(batch.topic, batch.partition, meta.offset + position, kept[i].timestamp),
                )
                for position, i in enumerate(batch.indices)
            ]
            self._hooks.spawn(self._commit_record_hooks(acked), name=f"commit-record-{self.id}")

    async def _commit_record_hooks(self, acked: Sequence[tuple[SourceRecord, RecordMetadata | None]]) -> None:
        """``commit_record`` for one acknowledged batch, in order, from one task (not one per record)."""
        await self._commit_records(acked)

    async def _dispatch_in_connector_transactions(
        self, records: list[SourceRecord], context: TransactionContext
    ) -> None:
        """``transaction.boundary=connector``: dispatch ``records`` in segments ending at each record the
        task asked to commit or abort on, ending each such transaction there; then the batch's own
        request, if any (Java ``ExactlyOnceWorkerSourceTask``'s connector boundary manager)."""
        start = 0
        for index, record in enumerate(records):
            abort = context.should_abort_on(record)
            if abort or context.should_commit_on(record):
                await self._dispatch(records[start : index + 1])
                start = index + 1
                if abort:
                    await self._abort_transaction()
                await self._commit_transaction()
        if start < len(records):
            await self._dispatch(records[start:])
        await self._end_connector_transaction(context)

    async def _end_connector_transaction(self, context: TransactionContext, *, final: bool = False) -> None:
        """The batch-level request of the task: abort (offsets still committed), commit, or nothing. At
        a clean stop without a request the open transaction is aborted rather than left to expire."""
        if context.should_abort_batch():
            await self._abort_transaction()
            await self._commit_transaction()
        elif context.should_commit_batch():
            await self._commit_transaction()
        elif final and self._transactions is not None and self._transactions.open:
            await self._transactions.abort()

    async def _abort_transaction(self) -> None:
        transactions = self._transactions
        assert transactions is not None
        if not transactions.open:
            log.warning("Task %s: ignoring the task's request to abort the transaction: it is empty", self.id)
            return
        log.info("Task %s: aborting the transaction as requested by the connector", self.id)
        await transactions.abort()

    def _idle_transaction_due(self) -> bool:
        """After a poll that returned nothing: whether the open transaction is due (Java calls
        ``batchDispatched`` then too), so that with ``interval`` the records of a source gone quiet are
        committed within the interval instead of waiting for the next records (or the transaction
        timeout, which would abort them and fail the task)."""
        if self._transactions is None or self._txn_context is not None:
            return False
        if not (self._transactions.open or self._txn_offsets):
            return False
        return self._transaction_boundary()

    def _transaction_boundary(self) -> bool:
        """Whether the batch just dispatched ends the transaction: always for ``poll``; for
        ``interval``, the first batch end at least ``transaction_interval_s`` after the last commit."""
        if self._txn_interval_s is None:
            return True
        now = time.monotonic()
        if now >= self._last_txn_commit + self._txn_interval_s:
            self._last_txn_commit = now
            return True
        return False

    async def _commit_transaction(self) -> None:
        """Exactly-once commit (Java ``ExactlyOnceWorkerSourceTask.commitTransaction``): the offsets of
        the records dispatched since the last commit go to the offsets topic in the open transaction,
        which is then committed; ``commit_record`` hooks and ``task.commit()`` follow. Failures raise
        (the caller fails the task); nothing of the transaction is then visible to ``read_committed``."""
        transactions = self._transactions
        assert transactions is not None
        started = time.monotonic()
        offsets, self._txn_offsets = self._txn_offsets, {}
        hooks, self._after_commit = self._after_commit, []
        if offsets or transactions.open:
            try:
                encode = self._encode_offsets
                records = encode(list(offsets.values())) if encode is not None and offsets else []
                await transactions.commit(records)
            except Exception as exc:
                self.last_commit_error = exc
                self._record_commit(started, False)
                raise
            self.commits += 1
            self.last_commit_error = None
        self._record_commit(started, True)
        for hook in hooks:
            hook()
        try:
            await self.task.commit()
        except Exception:
            log.exception("Task %s: commit() failed", self.id)

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self._flush_interval_s)
            await self._commit_offsets()

    async def _commit_offsets(self, *, final: bool = False) -> None:
        """Flush acknowledged offsets (and earlier failures), then call ``task.commit()``.

        Nothing at all while ``may_commit()`` refuses (see the module docstring).
        """
        committable = self._submitted.committable()
        self._unflushed.update(committable.offsets)
        if self._may_commit is not None and not self._may_commit():
            self.commits_refused += 1
            if final or not self._refusing:
                log.warning(
                    "Task %s: %s the offsets of %d partition(s): this worker's group membership lapsed "
                    "and the task is not (yet) confirmed as still assigned to it",
                    self.id,
                    "dropping" if final else "not committing",
                    len(self._unflushed),
                )
            self._refusing = True
            if final:
                self._unflushed = {}
            return
        self._refusing = False
        started = time.monotonic()
        if self._unflushed:
            pending, self._unflushed = self._unflushed, {}
            try:
                await asyncio.wait_for(self._write_offsets(pending), self._flush_timeout_s)
                self.commits += 1
                self.last_commit_error = None
            except asyncio.CancelledError:
                # Stopping: the final commit in _finish writes these again (newer offsets win).
                for key, value in pending.items():
                    self._unflushed.setdefault(key, value)
                raise
            except Exception as exc:
                self.last_commit_error = exc
                log.log(  # a timeout or a retriable error (a broker restarting) heals at the next commit
                    logging.WARNING if isinstance(exc, TimeoutError) or is_retriable(exc) else logging.ERROR,
                    "Task %s: offset commit of %d partition(s) failed after %.1f s: %s; the offsets are "
                    "committed again at the next commit",
                    self.id,
                    len(pending),
                    time.monotonic() - started,
                    "timed out (offset.flush.timeout.ms)"
                    if isinstance(exc, TimeoutError)
                    else (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__),
                )
                for key, value in pending.items():
                    self._unflushed.setdefault(key, value)
                self._record_commit(started, False)
                return
        self._record_commit(started, True)
        if self._plugin_stopping:  # offsets of records acknowledged after the plugin stopped
            return
        try:
            await self._commit_plugin()
        except Exception:
            log.exception("Task %s: commit() failed", self.id)

    def _record_commit(self, started: float, success: bool) -> None:
        if self._task_metrics is not None:
            self._task_metrics.record_commit((time.monotonic() - started) * 1000, success)


def batch_starts(batches: Sequence[SentBatch], count: int) -> list[int]:
    """The record indices (ascending) where a producer batch begins, for ``count`` records."""
    if all(b.indices[-1] - b.indices[0] == len(b.indices) - 1 for b in batches):  # each batch a slice
        return sorted(b.indices[0] for b in batches)
    owner = [0] * count
    for number, batch in enumerate(batches):
        for index in batch.indices:
            owner[index] = number
    return [0] + [i for i in range(1, count) if owner[i] != owner[i - 1]]


def first_line(exc: BaseException) -> str:
    """The first line of a failed task's trace (``module.Class: message``), as its log line says it."""
    return failure_trace(exc).partition("\n")[0]


def runtime_converter(converter: Any) -> bool:
    """Whether ``converter`` is one of the runtime's own (or absent): converted on the loop."""
    return converter is None or type(converter).__module__.startswith("pyconnect.")


def _batch(converter: Any, topic: str, schema: Any, items: list[Any]) -> list[bytes | None]:
    """``converter.from_connect_batch``, or a loop over ``from_connect_data`` for converters without it."""
    batch = getattr(converter, "from_connect_batch", None)
    if batch is not None:
        return list(batch(topic, schema, items))
    return [converter.from_connect_data(topic, None, schema, item) for item in items]


def monotonic_ms() -> int:
    """The clock a task gives its retry-with-tolerance core (milliseconds)."""
    return int(time.monotonic() * 1000)


async def call_on_loop(operation: Callable[[], Any]) -> Any:
    """Run one retried operation on the loop (the runtime's own converters and transformations)."""
    return operation()


def call_operation(operation: Callable[[], Any]) -> Any:
    """Run one retried operation (on a plugin thread when the task's converters may block)."""
    return operation()
