"""What a sink task does with a record it cannot process (Java's ``RetryWithToleranceOperator``
reporters for sinks: ``LogReporter``, ``DeadLetterQueueReporter`` and ``WorkerErrantRecordReporter``).

Contract:
- :meth:`ErrantRecords.report_failure` is the ``report`` callback of the task's
  :class:`~pyconnect.worker.retry_with_tolerance.RetryWithTolerance` (Java's reporters): a sink record
  goes to :meth:`ErrantRecords.report`; a source record is only logged (Java has no dead-letter queue
  for sources). With ``metrics`` (``task-error-metrics``) each logged error, DLQ write and failed DLQ
  write is counted.
- :meth:`ErrantRecords.report` (on the task's loop) logs the failure at WARN when
  ``errors.log.enable`` (the record's key and value too with ``errors.log.include.messages``) and,
  with a dead-letter queue, sends the record's original bytes (key, value, headers, timestamp) to it,
  plus Java's ``__connect.errors.*`` context headers with ``errors.deadletterqueue.context.headers.enable``.
  Sends are tracked: :meth:`ErrantRecords.flush` waits for them, and the task calls it before every
  offset commit, so a record's offset never commits before its DLQ copy is acknowledged.
- :class:`TaskErrantRecordReporter` is KIP-610's reporter handed to the plugin (``None`` unless the
  connector has a DLQ topic or ``errors.log.enable``): ``report(record, error)`` may be called from
  ``put`` on the loop or on a plugin thread; it reports the record as stage ``TASK_PUT`` and returns
  a future (an ``asyncio`` future on the loop, a ``concurrent.futures.Future`` from a thread) done
  once the DLQ write is. It goes through the task's ``RetryWithTolerance.execute_failed`` (counted as
  a failure; with ``errors.tolerance=none`` it raises ``ConnectError("Tolerance exceeded in error
  handler")`` after reporting, as Java's does, and the task then fails).
- :func:`context_headers` is pure.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyconnect.api.sink import SinkRecord
from pyconnect.errors import ConnectError
from pyconnect.kafka.dead_letter_queue import DeadLetterQueueWriter
from pyconnect.kafka.sink_consumer import FetchedRecord
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.retry_with_tolerance import TASK_PUT, ProcessingFailure, RetryWithTolerance

if TYPE_CHECKING:
    from pyconnect.metrics.task_errors import TaskErrorMetrics

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
ORIG_TOPIC = HEADER_PREFIX + "topic"
ORIG_PARTITION = HEADER_PREFIX + "partition"
ORIG_OFFSET = HEADER_PREFIX + "offset"
CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
TASK_ID = HEADER_PREFIX + "task.id"
STAGE = HEADER_PREFIX + "stage"
EXECUTING_CLASS = HEADER_PREFIX + "class.name"
EXCEPTION = HEADER_PREFIX + "exception.class.name"
EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"

SINK_TASK_CLASS = "org.apache.kafka.connect.sink.SinkTask"


def exception_class_name(error: BaseException) -> str:
    cls = type(error)
    return f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__


def context_headers(
    record: FetchedRecord, task: ConnectorTaskId, stage: str, executing_class: str, error: BaseException
) -> list[tuple[str, bytes | None]]:
    """Java's ``populateContextHeaders``, in its order, values as UTF-8 text."""
    headers: list[tuple[str, bytes | None]] = [
        (ORIG_TOPIC, record.topic.encode()),
        (ORIG_PARTITION, str(record.partition).encode()),
        (ORIG_OFFSET, str(record.offset).encode()),
        (CONNECTOR_NAME, task.connector.encode()),
        (TASK_ID, str(task.task).encode()),
        (STAGE, stage.encode()),
        (EXECUTING_CLASS, executing_class.encode()),
        (EXCEPTION, exception_class_name(error).encode()),
        (EXCEPTION_MESSAGE, str(error).encode()),
        (EXCEPTION_STACK_TRACE, "".join(traceback.format_exception(error)).encode()),
    ]
    return headers


class ErrantRecords:
    def __init__(
        self,
        task: ConnectorTaskId,
        *,
        writer: DeadLetterQueueWriter | None = None,
        context_headers_enabled: bool = False,
        log_errors: bool = False,
        log_include_messages: bool = False,
        metrics: TaskErrorMetrics | None = None,
    ) -> None:
        self.task = task
        self.metrics = metrics
        self.writer = writer
        self.context_headers_enabled = context_headers_enabled
        self.log_errors = log_errors
        self.log_messages = log_include_messages
        self._pending: set[asyncio.Future[Any]] = set()
        self.reported = 0
        self.failed_writes = 0

    @property
    def enabled(self) -> bool:
        """Whether the plugin gets an errant-record reporter (Java: a DLQ topic or error logging)."""
        return self.writer is not None or self.log_errors

    async def start(self) -> None:
        if self.writer is not None:
            await self.writer.start()

    async def stop(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            await writer.stop()

    def report_failure(self, failure: ProcessingFailure) -> asyncio.Future[Any] | None:
        """The reporter of a task's :class:`RetryWithTolerance` (on the loop)."""
        if isinstance(failure.original, FetchedRecord):
            return self.report(failure.original, failure.stage, failure.executing_class, failure.error)
        self.reported += 1
        if self.log_errors:
            detail = f" record={failure.original!r}" if self.log_messages else ""
            log.warning(
                "Task %s: error in stage %s (%s) for a source record: %s%s",
                self.task,
                failure.stage,
                failure.executing_class,
                failure.error,
                detail,
            )
            if self.metrics is not None:
                self.metrics.record_error_logged()
        return None

    def report(
        self, record: FetchedRecord, stage: str, executing_class: str, error: BaseException
    ) -> asyncio.Future[Any]:
        """On the loop: log and queue the DLQ write; the returned future is done when it is."""
        self.reported += 1
        if self.log_errors:
            if self.metrics is not None:
                self.metrics.record_error_logged()
            detail = f" key={record.key!r} value={record.value!r}" if self.log_messages else ""
            log.warning(
                "Task %s: error in stage %s (%s) for the record at %s-%d offset %d: %s%s",
                self.task,
                stage,
                executing_class,
                record.topic,
                record.partition,
                record.offset,
                error,
                detail,
            )
        loop = asyncio.get_running_loop()
        if self.writer is None:
            done: asyncio.Future[Any] = loop.create_future()
            done.set_result(None)
            return done
        if self.metrics is not None:
            self.metrics.record_dlq_request()
        headers = list(record.headers)
        if self.context_headers_enabled:
            headers += context_headers(record, self.task, stage, executing_class, error)
        sending = asyncio.ensure_future(self._write(self.writer, record, headers))
        self._pending.add(sending)
        sending.add_done_callback(self._pending.discard)
        return sending

    async def _write(
        self, writer: DeadLetterQueueWriter, record: FetchedRecord, headers: list[tuple[str, bytes | None]]
    ) -> None:
        try:
            acked = await writer.send(record.key, record.value, headers, record.timestamp)
            await acked
        except Exception as exc:
            self.failed_writes += 1
            if self.metrics is not None:
                self.metrics.record_dlq_failure()
            log.error(
                "Task %s: could not produce message to dead letter queue. topic=%s: %s",
                self.task,
                writer.topic,
                exc,
            )

    async def flush(self) -> None:
        """Wait for every DLQ write queued so far (their failures are logged, never raised)."""
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)


class TaskErrantRecordReporter:
    """KIP-610's ``ErrantRecordReporter`` of one task (see the module docstring)."""

    def __init__(
        self,
        errors: RetryWithTolerance,
        loop: asyncio.AbstractEventLoop,
        originals: Callable[[], Mapping[tuple[str, int, int], FetchedRecord]],
        task_class: str,
        clock_ms: Callable[[], int],
    ) -> None:
        self._errors = errors
        self._loop = loop
        self._originals = originals
        self._task_class = task_class
        self._clock_ms = clock_ms

    def report(
        self, record: SinkRecord, error: BaseException
    ) -> Awaitable[None] | concurrent.futures.Future[Any]:
        original = self._originals().get(
            (record.original_topic, record.original_kafka_partition or 0, record.original_kafka_offset)
        )
        if original is None:
            original = FetchedRecord(
                record.original_topic,
                record.original_kafka_partition or 0,
                record.original_kafka_offset,
                record.timestamp,
                record.timestamp_type,
                None,
                None,
                [],
            )
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            reported = self._errors.execute_failed(
                original, TASK_PUT, self._task_class, error, self._clock_ms()
            )
            return _awaitable(reported)
        found = original

        async def on_the_loop() -> None:
            try:
                reported = self._errors.execute_failed(
                    found, TASK_PUT, self._task_class, error, self._clock_ms()
                )
            except ConnectError:
                return  # reported; the plugin's thread raises it below
            await _awaitable(reported)

        result = asyncio.run_coroutine_threadsafe(on_the_loop(), self._loop)
        if not self._errors.tolerate_all:
            raise ConnectError("Tolerance exceeded in error handler") from error
        return result


def _awaitable(reported: object) -> asyncio.Future[Any]:
    if isinstance(reported, asyncio.Future):
        return reported
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    done.set_result(None)
    return done
