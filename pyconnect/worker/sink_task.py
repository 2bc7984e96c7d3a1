"""Runs one sink task: fetch a batch, convert, transform, ``put``, commit what ``pre_commit`` allows
(Java's ``WorkerSinkTask``).

Size: over 600 lines because the sink loop, its offset commits and the consumer rebalance callbacks share
one task state (Java's ``WorkerSinkTask``); the task plan and assembly live in task_plan.py and
task_assembly.py.

Contract:
- Same lifecycle interface as :class:`~pyconnect.worker.source_task.WorkerSourceTask`: ``start()``
  launches the loop in a task owned by this object; ``transition_to`` pauses (every assigned
  partition is paused on the consumer, the group membership is kept) or resumes; ``stop()`` asks the
  loop to end; ``wait_stopped(timeout)`` waits and otherwise cancels it. The plugin's ``stop()`` runs
  exactly once when its ``start()`` was entered, and the consumer is closed on every path (clean stop,
  failure, cancellation).
- Batch-first: each consumer fetch (up to ``max.poll.records``) becomes one list of
  :class:`~pyconnect.api.sink.SinkRecord` converted by the key, value and header converters, passed
  through the transformation chain (a record it drops still counts as consumed) and handed to one
  ``put`` call (one plugin-thread hop for a plain ``put``). Conversion runs on a plugin thread when
  any converter is not one of the runtime's own.
- Offsets (:mod:`pyconnect.worker.sink_offsets`): a partition's offset advances only after ``put``
  returned for its records. Every ``offset_flush_interval_s`` (or at the end of the batch in which the
  task called ``context.request_commit()``) ``pre_commit`` gets the current offsets and what it returns
  is committed to the group (only that; invalid entries are ignored with a WARN). A failed commit is
  logged at WARN and retried at the next interval. When partitions are revoked by a rebalance, and for
  all partitions when the task stops or fails: ``pre_commit``, then ``close(partitions)``, then a
  commit of those partitions; then ``open`` for newly assigned partitions. A commit waits at most
  ``offset_flush_timeout_s`` (``offset.flush.timeout.ms``). ``pre_commit`` is given the
  partitions that delivered records since their assignment (Java also lists quiet ones, at their
  position: the same commit, since nothing changed).
- ``put`` raising :class:`~pyconnect.errors.RetriableError`: every partition is paused, the same batch
  is delivered again after ``context.timeout(ms)`` (else at the next commit time), then the
  partitions the task did not pause itself resume. Any other exception from ``put`` (or ``open``,
  ``close``, ``pre_commit`` outside a stop) fails the task: FAILED with its trace; the worker and its
  other tasks go on.
- Metrics: ``connector-task-metrics`` (batch sizes, commit times and outcomes) and
  ``sink-task-metrics`` (:mod:`pyconnect.metrics.sink_task`), recorded per batch and per commit.
- Conversion and transformation errors go through the task's
  :class:`~pyconnect.worker.retry_with_tolerance.RetryWithTolerance` (``errors.retry.timeout``,
  ``errors.retry.delay.max.ms``, ``errors.tolerance``): a retriable error is retried after a backoff,
  awaited on the loop (a stop ends the wait, and the batch is dropped unprocessed: nothing of it is
  delivered or committed); an error that gives up fails the task, or with ``errors.tolerance=all``
  skips the record (its offset still commits); either way it is reported (logged with
  ``errors.log.enable``, the record's bytes too with ``errors.log.include.messages``; written to the
  dead-letter queue when there is one) and counted in ``task-error-metrics``. The batch fast path
  costs nothing more when nothing fails: at the first error it stops, that record goes on stage by
  stage through the core (only the failing operation is attempted again), and the fast path resumes
  after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyconnect.api.sink import SinkRecord, SinkTask, TopicPartition
from pyconnect.api.source import Header
from pyconnect.errors import ConnectError, RetriableError
from pyconnect.kafka.sink_consumer import FetchedRecord, SinkCommitError, SinkConsumer
from pyconnect.log_context import enter_task
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.errant_records import SINK_TASK_CLASS, TaskErrantRecordReporter
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.plugin_calls import PluginCallTimeout
from pyconnect.worker.retry_with_tolerance import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    SKIPPED,
    TRANSFORMATION,
    VALUE_CONVERTER,
    RetryInterrupted,
)
from pyconnect.worker.sink_offsets import SinkOffsets
from pyconnect.worker.sink_parts import SinkTaskParts
from pyconnect.worker.source_records import monotonic_ms
from pyconnect.worker.task_converters import call_on_loop, call_operation
from pyconnect.worker.task_lifecycle import TaskLifecycle
from pyconnect.worker.worker_connector import java_class_name

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StoppedAt:
    """Where the batch fast path stopped: the record at ``index`` failed in ``stage`` with ``error``;
    what it had made of the record so far (``transform`` is the index of the failed stage's input)."""

    index: int
    stage: str
    executing_class: str
    error: BaseException
    key: Any
    value: Any
    record: Any
    transform: int


Converted = tuple[list[SinkRecord], dict[TopicPartition, int], StoppedAt | None]


MAX_FETCH_WAIT_S = 0.5
"""Longest single fetch: how soon a stop, pause or commit request is seen while no data arrives."""


class WorkerSinkTaskContext:
    """The :class:`~pyconnect.api.sink.SinkTaskContext` of one task: requests are recorded under a lock
    (a plain plugin method calls from a plugin thread) and applied by the task loop between batches."""

    def __init__(self, config: Mapping[str, str], metrics: Any = None) -> None:
        self._config = dict(config)
        self._metrics = metrics
        self._lock = threading.Lock()
        self._offsets: dict[TopicPartition, int] = {}
        self._timeout_ms = -1
        self._commit_requested = False
        self._paused: set[TopicPartition] = set()
        self._pause_changed = False
        self._assignment: frozenset[TopicPartition] = frozenset()
        self.reporter: Any = None

    @property
    def config(self) -> Mapping[str, str]:
        return self._config

    @property
    def metrics(self) -> Any:
        return self._metrics

    def offset(
        self, offsets: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None
    ) -> None:
        if isinstance(offsets, TopicPartition):
            if offset is None:
                raise ValueError("offset(partition, offset) needs an offset")
            offsets = {offsets: offset}
        with self._lock:
            self._offsets.update({TopicPartition(*p): int(o) for p, o in offsets.items()})

    def timeout(self, timeout_ms: int) -> None:
        with self._lock:
            self._timeout_ms = int(timeout_ms)

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        with self._lock:
            self._paused.update(TopicPartition(*p) for p in partitions)
            self._pause_changed = True

    def resume(self, *partitions: TopicPartition) -> None:
        with self._lock:
            self._paused.difference_update(TopicPartition(*p) for p in partitions)
            self._pause_changed = True

    def request_commit(self) -> None:
        with self._lock:
            self._commit_requested = True

    def errant_record_reporter(self) -> Any:
        return self.reporter

    # -- the runtime's side ------------------------------------------------------------------------

    def take_offsets(self) -> dict[TopicPartition, int]:
        with self._lock:
            offsets, self._offsets = self._offsets, {}
        return offsets

    def take_commit_request(self) -> bool:
        with self._lock:
            requested, self._commit_requested = self._commit_requested, False
        return requested

    def retry_timeout_s(self) -> float | None:
        with self._lock:
            return self._timeout_ms / 1000 if self._timeout_ms > 0 else None

    def paused(self) -> set[TopicPartition]:
        with self._lock:
            return set(self._paused)

    def take_pause_change(self) -> bool:
        with self._lock:
            changed, self._pause_changed = self._pause_changed, False
        return changed

    def set_assignment(self, partitions: Iterable[TopicPartition]) -> None:
        self._assignment = frozenset(partitions)
        with self._lock:
            self._paused &= self._assignment


class WorkerSinkTask(TaskLifecycle):
    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SinkTask,
        task_config: Mapping[str, str],
        context: WorkerSinkTaskContext,
        parts: SinkTaskParts,
        target_state: TargetState = TargetState.STARTED,
    ) -> None:
        super().__init__(task_id, target_state)
        self.task = task
        self._calls = parts.calls
        self._owner = f"{task_id.connector}-{task_id.task}"
        self._config = dict(task_config)
        self._context = context
        self._consumer: SinkConsumer | None = parts.consumer
        key_converter, value_converter, header_converter = parts.converters.all()
        self._key_converter = key_converter
        self._value_converter = value_converter
        self._header_converter = header_converter
        self._reporter = parts.reporter
        self._flush_interval_s = parts.offset_flush_interval_s
        self._commit_timeout_s = parts.offset_flush_timeout_s
        self._errors = parts.errors
        self._transformations = parts.transformations if parts.transformations else None
        self._task_metrics = parts.task_metrics
        self._stop_timeout_s = parts.stop_timeout_s
        self._put = self._calls.bind(self._owner, "put", task.put, routine_cancel=True)
        on_loop = parts.converters.runtime_only
        self._convert = (
            self._convert_on_loop
            if on_loop
            else self._calls.bind(self._owner, "convert", self._convert_batch, routine_cancel=True)
        )
        self._operate = (
            call_on_loop
            if on_loop
            else self._calls.bind(self._owner, "convert", call_operation, routine_cancel=True)
        )
        self.offsets = SinkOffsets()
        self._lock = asyncio.Lock()
        """Held while the loop delivers or commits, and by the rebalance callbacks: never both at once."""
        self._plugin_started = False
        self._started = False
        self._consumer_started = False
        self._version_text: str | None = None
        self._retry_batch: list[SinkRecord] | None = None
        self._retry_next: dict[TopicPartition, int] = {}
        self._retry_at = 0.0
        self._rebalance_error: BaseException | None = None
        self._class_name = parts.class_name or (lambda plugin: java_class_name(type(plugin)))
        self._sink_metrics = parts.sink_metrics
        self._commit_seq = 0
        self._converter_names = (
            self._class_name(key_converter),
            self._class_name(value_converter),
            self._class_name(header_converter),
        )
        self._errant = errant = parts.errant
        if errant is not None and self._errors.report is None:
            self._errors.report = errant.report_failure
        self._originals: dict[tuple[str, int, int], FetchedRecord] = {}
        self._retry_originals: dict[tuple[str, int, int], FetchedRecord] = {}
        if errant is not None and errant.enabled:
            context.reporter = TaskErrantRecordReporter(
                self._errors,
                asyncio.get_running_loop(),
                lambda: self._originals,
                SINK_TASK_CLASS,  # Java names the SinkTask interface as the executing class of put
                monotonic_ms,
            )
        self.records_read = 0
        self.records_put = 0
        self.records_skipped = 0
        self.commits = 0

    # -- lifecycle ---------------------------------------------------------------------------------

    kind = "sink"

    async def _release(self) -> None:
        await self._close_clients()

    async def _release_unstarted(self) -> None:
        await self._close_clients()

    async def _close_clients(self) -> None:
        with contextlib.suppress(Exception):
            await self._stop_plugin()
        if self._errant is not None:
            with contextlib.suppress(Exception):
                await self._errant.stop()
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            with contextlib.suppress(Exception):
                await consumer.stop()

    # -- the loop ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        enter_task(self.id.connector, self.id.task)
        failed = False
        try:
            self._version_text = await self._calls.version(self._owner, self.task)
            if await self._wait_while_paused():
                await self._finish(failed)
                return
            self.task.initialize(self._context)
            self._plugin_started = True
            await self._calls.call(self._owner, "start", self.task.start, self._config)
            self._started = True
            consumer = self._client()
            if self._errant is not None:
                await self._errant.start()
            await consumer.start(self._on_assigned, self._on_revoked)
            self._consumer_started = True
            self._reporter.report(self.id, State.RUNNING, version=self._version_text)
            next_commit = time.monotonic() + self._flush_interval_s
            while not self._stopping.is_set():
                if self._rebalance_error is not None:
                    raise self._rebalance_error
                if self._target != TargetState.STARTED:
                    await self._pause_all()
                    if await self._wait_while_paused():
                        break
                    self._resume_unpaused()
                    self._reporter.report(self.id, State.RUNNING, version=self._version_text)
                self._state_changed.clear()
                await self._apply_context()
                now = time.monotonic()
                if self._context.take_commit_request() or now >= next_commit:
                    async with self._lock:
                        await self._commit(self.offsets.requested(), closing=False)
                    next_commit = time.monotonic() + self._flush_interval_s
                    continue
                wait_s = min(max(0.0, next_commit - now), MAX_FETCH_WAIT_S)
                if self._retry_batch is not None:
                    if now < self._retry_at:
                        await self._wait(min(wait_s, self._retry_at - now))
                        continue
                    async with self._lock:
                        self._originals = self._retry_originals
                        await self._deliver(self._retry_batch, self._retry_next)
                    continue
                fetched = await consumer.fetch(wait_s)
                self.records_read += len(fetched)
                if fetched and self._sink_metrics is not None:
                    self._sink_metrics.record_read(len(fetched))
                converted = await self._convert_fetched(fetched) if fetched else ([], {})
                if converted is None:
                    continue  # stopped while waiting to retry: the batch is dropped, nothing commits
                records, next_offsets = converted
                async with self._lock:
                    self._originals = {(r.topic, r.partition, r.offset): r for r in fetched}
                    live = self._context.assignment()
                    next_offsets = {p: o for p, o in next_offsets.items() if p in live}
                    records = [r for r in records if (r.original_topic, r.original_kafka_partition) in live]
                    await self._deliver(records, next_offsets)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failed = True
            log.error("Task %s failed: %s", self.id, exc)
            self._reporter.report(self.id, State.FAILED, failure_trace(exc), self._version_text)
        await self._finish(failed)

    async def _finish(self, failed: bool) -> None:
        """Close every partition (``pre_commit``, ``close``, commit) when the plugin started, then stop
        the plugin and the consumer; UNASSIGNED unless the task failed."""
        if self._started and self._consumer is not None:
            try:
                async with self._lock:
                    partitions = sorted(self._context.assignment())
                    if partitions:
                        await self._commit(
                            self.offsets.requested(partitions), closing=True, closed=partitions
                        )
            except Exception:
                log.warning("Task %s: committing offsets while stopping failed", self.id, exc_info=True)
        self._started = False  # a rebalance callback during the consumer's close calls no plugin method
        await self._close_clients()
        if not failed:
            self._reporter.report(self.id, State.UNASSIGNED)

    def _client(self) -> SinkConsumer:
        if self._consumer is None:
            raise ConnectError(f"Task {self.id}: its consumer was closed")
        return self._consumer

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._state_changed.wait(), max(0.0, seconds))

    async def _wait_while_paused(self) -> bool:
        if self._target == TargetState.STARTED:
            return self._stopping.is_set()
        self._reporter.report(self.id, State.PAUSED, version=self._version_text)
        while self._target != TargetState.STARTED and not self._stopping.is_set():
            self._state_changed.clear()
            if self._consumer is not None and self._consumer_started:
                # keep polling (every partition is paused), as Java's loop does: aiokafka leaves the
                # group when it is not polled within max.poll.interval.ms
                await self._consumer.fetch(MAX_FETCH_WAIT_S)
            else:
                await self._state_changed.wait()
        return self._stopping.is_set()

    async def _pause_all(self) -> None:
        if self._consumer is not None:
            self._consumer.pause(self._context.assignment())

    def _resume_unpaused(self) -> None:
        if self._consumer is not None and self._retry_batch is None:
            self._consumer.resume(self._context.assignment() - self._context.paused())

    async def _apply_context(self) -> None:
        """Seeks and pause/resume the task asked for since the last batch."""
        consumer = self._client()
        rewinds = self._context.take_offsets()
        if rewinds:
            live = {p: o for p, o in rewinds.items() if p in self._context.assignment()}
            consumer.seek(live)
            self.offsets.rewound(live)
            if self._retry_batch is not None:
                self._drop_retry(live)
        if (
            self._context.take_pause_change()
            and self._retry_batch is None
            and self._target == TargetState.STARTED
        ):
            paused = self._context.paused()
            consumer.pause(paused)
            consumer.resume(self._context.assignment() - paused)

    def _drop_retry(self, partitions: Iterable[TopicPartition]) -> None:
        gone = set(partitions)
        assert self._retry_batch is not None
        self._retry_batch = [
            r for r in self._retry_batch if (r.original_topic, r.original_kafka_partition) not in gone
        ]
        self._retry_next = {p: o for p, o in self._retry_next.items() if p not in gone}
        if not self._retry_next:
            self._retry_batch = None
            self._resume_unpaused()

    # -- delivery ----------------------------------------------------------------------------------

    async def _deliver(self, records: list[SinkRecord], next_offsets: dict[TopicPartition, int]) -> None:
        """One ``put``; on success the offsets advance; a retriable error keeps the batch for later."""
        started = time.monotonic()
        try:
            await self._put(list(records))
        except RetriableError as exc:
            log.warning(
                "Task %s: put() raised a retriable error; delivering the batch again: %s", self.id, exc
            )
            if self._retry_batch is None and self._consumer is not None:
                self._consumer.pause(self._context.assignment())
            self._retry_batch, self._retry_next, self._retry_originals = (
                records,
                next_offsets,
                self._originals,
            )
            timeout = self._context.retry_timeout_s()
            self._retry_at = time.monotonic() + (timeout if timeout is not None else self._flush_interval_s)
            return
        self.records_put += len(records)
        if self._task_metrics is not None:
            self._task_metrics.record_batch(len(records))
        self.offsets.delivered(next_offsets)
        if self._sink_metrics is not None and (records or next_offsets):
            self._sink_metrics.record_put(len(records), (time.monotonic() - started) * 1000)
            self._record_active()
        if self._retry_batch is not None:
            self._retry_batch, self._retry_next = None, {}
            self._resume_unpaused()
        log.debug(
            "Task %s: put %d record(s) in %.1f ms", self.id, len(records), (time.monotonic() - started) * 1000
        )

    async def _convert_fetched(
        self, fetched: list[FetchedRecord]
    ) -> tuple[list[SinkRecord], dict[TopicPartition, int]] | None:
        """The batch as sink records and the next offset per partition (see :meth:`_convert_batch`),
        every failure handled by the retry-with-tolerance core; ``None`` when the task was asked to stop
        while an operation waited to be retried."""
        records, next_offsets, stopped = await self._convert(fetched, 0)
        while stopped is not None:
            try:
                record = await self._recover(fetched[stopped.index], stopped)
            except RetryInterrupted:
                return None
            if record is SKIPPED:
                self.records_skipped += 1
            elif record is not None:
                records.append(record)
            more, offsets, stopped = await self._convert(fetched, stopped.index + 1)
            records += more
            next_offsets.update(offsets)
        return records, next_offsets

    async def _convert_on_loop(self, fetched: list[FetchedRecord], start: int) -> Converted:
        return self._convert_batch(fetched, start)

    def _convert_batch(self, fetched: Sequence[FetchedRecord], start: int) -> Converted:
        """From ``fetched[start]`` on: the records as sink records (converted, then transformed), the
        next offset per partition (past every record visited, dropped ones included) and, when one
        failed, where it stopped (that record's offset is already counted). May run on a plugin
        thread: no task state changes."""
        key_converter, value_converter = self._key_converter, self._value_converter
        stages = self._transformations.stages if self._transformations is not None else ()
        key_name, value_name, header_name = self._converter_names
        records: list[SinkRecord] = []
        next_offsets: dict[TopicPartition, int] = {}
        record: Any
        for index in range(start, len(fetched)):
            r = fetched[index]
            next_offsets[TopicPartition(r.topic, r.partition)] = r.offset + 1
            stage, executing = KEY_CONVERTER, key_name
            key = value = record = None
            position = 0
            try:
                key = key_converter.to_connect_data(r.topic, None, r.key)
                stage, executing = VALUE_CONVERTER, value_name
                value = value_converter.to_connect_data(r.topic, None, r.value)
                stage, executing = HEADER_CONVERTER, header_name
                record = self._sink_record(r, key, value, self._convert_headers(r) if r.headers else [])
                stage = TRANSFORMATION
                for position, transform in enumerate(stages):  # noqa: B007  (read by the except)
                    executing = self._class_name(transform.transformation)
                    record = transform.apply(record)
                    if record is None:
                        break
            except Exception as exc:
                return (
                    records,
                    next_offsets,
                    StoppedAt(index, stage, executing, exc, key, value, record, position),
                )
            if record is not None:
                records.append(record)
        return records, next_offsets, None

    def _convert_headers(self, r: FetchedRecord) -> list[Header]:
        header_converter = self._header_converter
        headers: list[Header] = []
        for header_key, header_value in r.headers:
            converted = header_converter.to_connect_header(r.topic, header_key, header_value)
            if converted is not None:
                headers.append(Header(header_key, converted.schema, converted.value))
        return headers

    @staticmethod
    def _sink_record(r: FetchedRecord, key: Any, value: Any, headers: list[Header]) -> SinkRecord:
        return SinkRecord(
            r.topic,
            r.partition,
            key.schema,
            key.value,
            value.schema,
            value.value,
            r.offset,
            r.timestamp,
            r.timestamp_type,
            headers,
        )

    async def _recover(self, r: FetchedRecord, stopped: StoppedAt) -> Any:
        """The rest of one record's pipeline after the fast path stopped on it, operation by operation
        through the core (the failed one first, with its error): the sink record, ``None`` when a
        transformation dropped it, or ``SKIPPED``; raises when the error fails the task."""
        first: BaseException | None = stopped.error
        key, value, record, stage = stopped.key, stopped.value, stopped.record, stopped.stage
        key_name, value_name, header_name = self._converter_names

        async def attempt(operation: Callable[[], Any], stage: str, executing: str) -> Any:
            nonlocal first
            error, first = first, None
            return await self._errors.execute_async(
                lambda: self._operate(operation),
                r,
                stage,
                executing,
                clock_ms=monotonic_ms,
                sleep=self._retry_sleep,
                first_error=error,
            )

        if stage == KEY_CONVERTER:
            key = await attempt(
                lambda: self._key_converter.to_connect_data(r.topic, None, r.key), KEY_CONVERTER, key_name
            )
            if key is SKIPPED:
                return SKIPPED
        if stage in (KEY_CONVERTER, VALUE_CONVERTER):
            value = await attempt(
                lambda: self._value_converter.to_connect_data(r.topic, None, r.value),
                VALUE_CONVERTER,
                value_name,
            )
            if value is SKIPPED:
                return SKIPPED
        position = stopped.transform
        if stage != TRANSFORMATION:
            headers = await attempt(lambda: self._convert_headers(r), HEADER_CONVERTER, header_name)
            if headers is SKIPPED:
                return SKIPPED
            record = self._sink_record(r, key, value, headers)
            position = 0
        stages = self._transformations.stages if self._transformations is not None else ()
        for transform in stages[position:]:
            current = record
            record = await attempt(
                lambda t=transform, c=current: t.apply(c),  # type: ignore[misc]
                TRANSFORMATION,
                self._class_name(transform.transformation),
            )
            if record is SKIPPED or record is None:
                return record
        return record

    # -- commits and rebalances --------------------------------------------------------------------

    async def _commit(
        self,
        requested: dict[TopicPartition, int],
        *,
        closing: bool,
        closed: Sequence[TopicPartition] = (),
    ) -> None:
        """``pre_commit``, then (``closing``) ``close(closed)``, then commit what may be; held lock.
        Dead-letter-queue writes queued so far are awaited first (Java's ``awaitFutures``)."""
        if self._errant is not None:
            await self._errant.flush()
        try:
            if requested or closing:
                provided = await self._calls.call(
                    self._owner, "pre_commit", self.task.pre_commit, dict(requested)
                )
            else:
                provided = {}
        except Exception as exc:
            if not closing:
                raise
            log.warning("Task %s: pre_commit() failed while closing partitions: %s", self.id, exc)
            provided = {}
        finally:
            if closing and closed:
                await self._close_partitions(closed)
        plan = self.offsets.to_commit(requested, dict(provided or {}), self._context.assignment())
        for warning in plan.warnings if plan is not None else ():
            log.warning("Task %s: %s", self.id, warning)
        if not requested:
            return
        self._commit_seq += 1
        if plan is None or not plan.offsets:
            if self._sink_metrics is not None:
                self._sink_metrics.record_commit(self._commit_seq, skipped=True)
            return
        started = time.monotonic()
        try:
            await self._client().commit(plan.offsets, self._commit_timeout_s)
        except SinkCommitError as exc:
            log.warning("Task %s: offset commit failed, retrying at the next commit: %s", self.id, exc)
            if self._task_metrics is not None:
                self._task_metrics.record_commit((time.monotonic() - started) * 1000, False)
            return
        self.offsets.committed(plan.offsets)
        self.commits += 1
        if self._task_metrics is not None:
            self._task_metrics.record_commit((time.monotonic() - started) * 1000, True)
        if self._sink_metrics is not None:
            self._sink_metrics.record_commit(self._commit_seq, skipped=False)
            self._record_active()

    def _record_active(self) -> None:
        assert self._sink_metrics is not None
        committed = self.offsets.last_committed
        active = sum(max(0, o - committed[p]) for p, o in self.offsets.current.items() if p in committed)
        self._sink_metrics.record_active(active)

    async def _close_partitions(self, partitions: Sequence[TopicPartition]) -> None:
        try:
            await self._calls.call(
                self._owner, "close", self.task.close, list(partitions), timeout=self._stop_timeout_s
            )
        except PluginCallTimeout as exc:
            log.error("Task %s: %s", self.id, exc)

    async def _on_assigned(self, partitions: list[TopicPartition]) -> None:
        async with self._lock:
            if self._consumer is None:  # closing
                return
            self._context.set_assignment(self._client().assignment())
            if self._sink_metrics is not None:
                self._sink_metrics.record_partition_count(len(self._context.assignment()))
            log.info("Task %s: assigned %s", self.id, ", ".join(str(p) for p in partitions))
            if self._retry_batch is not None or self._target != TargetState.STARTED:
                self._client().pause(self._context.assignment())
            elif self._context.paused():
                self._client().pause(self._context.paused())
            if not self._started or self._stopping.is_set():
                return
            try:
                await self._calls.call(self._owner, "open", self.task.open, list(partitions))
            except Exception as exc:
                self._rebalance_error = exc
                self._state_changed.set()

    async def _on_revoked(self, partitions: list[TopicPartition]) -> None:
        async with self._lock:
            log.info("Task %s: revoked %s", self.id, ", ".join(str(p) for p in partitions))
            if self._retry_batch is not None:
                self._drop_retry(partitions)
            if self._started:
                try:
                    await self._commit(self.offsets.requested(partitions), closing=True, closed=partitions)
                except Exception as exc:
                    log.warning("Task %s: committing revoked partitions failed: %s", self.id, exc)
            self.offsets.revoked(partitions)
            self._context.set_assignment(self._context.assignment() - set(partitions))
            if self._sink_metrics is not None:
                self._sink_metrics.record_partition_count(len(self._context.assignment()))
