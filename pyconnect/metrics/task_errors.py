"""``task-error-metrics,connector=C,task=N`` of one task (Java's ``ErrorHandlingMetrics``).

Cumulative counts: ``total-record-failures`` (failed attempts, retriable ones included),
``total-record-errors`` (operations that gave up), ``total-records-skipped``, ``total-retries``,
``total-errors-logged`` (``errors.log.enable``), ``deadletterqueue-produce-requests`` and
``deadletterqueue-produce-failures``; and ``last-error-timestamp`` (ms, 0 before any error). Recorded
by :mod:`pyconnect.worker.retry_with_tolerance` and :mod:`pyconnect.worker.errant_records` on the
task's loop, only when something fails: nothing is recorded for a record that goes through.
"""

from __future__ import annotations

from pyconnect.metrics.connect import CONNECTOR_TAG, TASK_TAG, ConnectMetrics
from pyconnect.metrics.stats import CumulativeSum

TASK_ERROR_GROUP = "task-error-metrics"

_COUNTS = (
    ("total-record-failures", "The number of record processing failures in this task."),
    ("total-record-errors", "The number of record processing errors in this task."),
    ("total-records-skipped", "The number of records skipped due to errors."),
    ("total-retries", "The number of operations retried."),
    ("total-errors-logged", "The number of errors that were logged."),
    ("deadletterqueue-produce-requests", "The number of attempted writes to the dead letter queue."),
    ("deadletterqueue-produce-failures", "The number of failed writes to the dead letter queue."),
)


class TaskErrorMetrics:
    def __init__(self, metrics: ConnectMetrics, connector: str, task: int) -> None:
        self._metrics = metrics
        group = self.group = metrics.group(
            TASK_ERROR_GROUP, (CONNECTOR_TAG, connector), (TASK_TAG, str(task))
        )
        group.close()
        sensors = []
        for name, description in _COUNTS:
            sensor = group.sensor(name)
            group.add_stat(sensor, name, CumulativeSum(), description)
            sensors.append(sensor)
        (
            self._failures,
            self._errors,
            self._skipped,
            self._retries,
            self._logged,
            self._dlq_requests,
            self._dlq_failures,
        ) = sensors
        self.last_error_ms = 0
        group.add_value_metric(
            "last-error-timestamp",
            lambda now_ms: self.last_error_ms,
            "The epoch timestamp when this task last encountered an error.",
        )

    def record_failure(self) -> None:
        self._failures.record(1.0, self._metrics.now_ms())

    def record_error(self) -> None:
        self._errors.record(1.0, self._metrics.now_ms())

    def record_skipped(self) -> None:
        self._skipped.record(1.0, self._metrics.now_ms())

    def record_retry(self) -> None:
        self._retries.record(1.0, self._metrics.now_ms())

    def record_error_logged(self) -> None:
        self._logged.record(1.0, self._metrics.now_ms())

    def record_dlq_request(self) -> None:
        self._dlq_requests.record(1.0, self._metrics.now_ms())

    def record_dlq_failure(self) -> None:
        self._dlq_failures.record(1.0, self._metrics.now_ms())

    def record_error_timestamp(self, now_ms: int) -> None:
        """The wall-clock time of the error (the task's clock may be monotonic: the registry's is used)."""
        self.last_error_ms = self._metrics.now_ms()

    def close(self) -> None:
        self.group.close()
