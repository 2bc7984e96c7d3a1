"""``sink-task-metrics,connector=C,task=N`` of one sink task (Java's ``SinkTaskMetricsGroup``).

``sink-record-read-{rate,total}`` (records fetched), ``sink-record-send-{rate,total}`` (records handed
to ``put`` after transformations), ``put-batch-{max,avg}-time-ms``, ``partition-count``,
``offset-commit-seq-no``, ``offset-commit-completion-{rate,total}``, ``offset-commit-skip-{rate,total}``
and ``sink-record-active-count`` (+ ``-max``, ``-avg``: records read since their partition's last
commit). Recorded from the task's loop at batch granularity; nothing blocks.
"""

from __future__ import annotations

from pyconnect.metrics.connect import CONNECTOR_TAG, TASK_TAG, ConnectMetrics
from pyconnect.metrics.stats import Avg, CumulativeSum, Max, Rate, Value

SINK_TASK_GROUP = "sink-task-metrics"


class SinkTaskMetrics:
    def __init__(self, metrics: ConnectMetrics, connector: str, task: int) -> None:
        """The data-path recordings (read, put, active) do nothing when the hub does not record."""
        self._metrics = metrics
        self._recording = metrics.hub.recording
        group = self.group = metrics.group(SINK_TASK_GROUP, (CONNECTOR_TAG, connector), (TASK_TAG, str(task)))
        group.close()
        self._read = group.sensor("sink-record-read")
        group.add_stat(self._read, "sink-record-read-rate", Rate())
        group.add_stat(self._read, "sink-record-read-total", CumulativeSum())
        self._send = group.sensor("sink-record-send")
        group.add_stat(self._send, "sink-record-send-rate", Rate())
        group.add_stat(self._send, "sink-record-send-total", CumulativeSum())
        self._put_time = group.sensor("put-batch-time")
        group.add_stat(self._put_time, "put-batch-max-time-ms", Max())
        group.add_stat(self._put_time, "put-batch-avg-time-ms", Avg())
        self._active = group.sensor("sink-record-active-count")
        group.add_stat(self._active, "sink-record-active-count", Value())
        group.add_stat(self._active, "sink-record-active-count-max", Max())
        group.add_stat(self._active, "sink-record-active-count-avg", Avg())
        self._partitions = group.sensor("partition-count")
        group.add_stat(self._partitions, "partition-count", Value())
        self._seq = group.sensor("offset-commit-seq-no")
        group.add_stat(self._seq, "offset-commit-seq-no", Value())
        self._completed = group.sensor("offset-commit-completion")
        group.add_stat(self._completed, "offset-commit-completion-rate", Rate())
        group.add_stat(self._completed, "offset-commit-completion-total", CumulativeSum())
        self._skipped = group.sensor("offset-commit-skip")
        group.add_stat(self._skipped, "offset-commit-skip-rate", Rate())
        group.add_stat(self._skipped, "offset-commit-skip-total", CumulativeSum())

    def record_read(self, count: int) -> None:
        if self._recording:
            self._read.record(float(count), self._metrics.now_ms())

    def record_put(self, count: int, duration_ms: float) -> None:
        if not self._recording:
            return
        now = self._metrics.now_ms()
        self._send.record(float(count), now)
        self._put_time.record(duration_ms, now)

    def record_active(self, count: int) -> None:
        if self._recording:
            self._active.record(float(count), self._metrics.now_ms())

    def record_partition_count(self, count: int) -> None:
        self._partitions.record(float(count), self._metrics.now_ms())

    def record_commit(self, seq_no: int, skipped: bool) -> None:
        now = self._metrics.now_ms()
        self._seq.record(float(seq_no), now)
        (self._skipped if skipped else self._completed).record(1.0, now)

    def close(self) -> None:
        self.group.close()
