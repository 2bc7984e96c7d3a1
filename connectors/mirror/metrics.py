"""MirrorMaker 2's task metrics (Java's ``MirrorSourceMetrics`` and ``MirrorCheckpointMetrics``).

Domain ``kafka.connect.mirror``; one registry per task in the worker's hub, removed by ``close`` (the
task's stop), as each Java task's own ``Metrics`` with its ``JmxReporter``.

- ``MirrorSourceConnector`` with tags ``source``, ``target``, ``topic`` (the remote topic on the target),
  ``partition``: ``record-count``/``record-rate`` (records acknowledged by the target), ``byte-count``/
  ``byte-rate`` (value bytes polled), ``record-age-ms`` (+ ``-min``, ``-max``, ``-avg``: now minus the
  record timestamp when polled) and ``replication-latency-ms`` (+ ``-min``, ``-max``, ``-avg``: now minus
  the record timestamp when acknowledged). ``-ms`` is the last record's value, ``-min``/``-max``/``-avg``
  windowed. The task's partitions are registered at its start, others on first use. Beyond Java (no
  such JMX attributes there; Prometheus ``kafka_connect_mirror_mirrorsourceconnector_<name>``):
  ``truncated-record-count`` (records of the partition lost to truncation: deleted at the source
  before they were copied, or missing on a target rebuilt behind the committed offsets) and
  ``truncation-count`` (gaps reported, of any kind: connectors.mirror.truncation), both cumulative
  over the task's life and registered with the partition (0 until a gap); ``raw-batch-count`` and
  ``decoded-batch-count`` (the raw path, connectors.mirror.raw_copy: fetched batches copied to the
  target as bytes, and fetched batches decoded into records instead), cumulative, 0 on the record path.
- ``MirrorCheckpointConnector`` with tags ``source``, ``target``, ``group``, ``topic`` (remote),
  ``partition``: ``checkpoint-latency-ms`` (+ ``-min``, ``-max``, ``-avg``): now minus the checkpoint
  record's timestamp (when its group's offsets were listed) when the checkpoint is acknowledged;
  registered on first use.

- ``MirrorSourceProgress`` (pyconnect only, no JMX counterpart and no Prometheus series: no exposition
  rule matches it), same tags as ``MirrorSourceConnector``: ``task-start-ms`` (when the task started),
  ``last-record-timestamp-ms`` (the newest record timestamp of the polled batches acknowledged in full), ``last-replicated-ms`` (when
  the last record was acknowledged), ``replicated-offset`` (the last source offset acknowledged, or the
  committed one the task resumed from), ``end-offset`` (the source consumer's last known high
  watermark) and ``oldest-pending-timestamp-ms`` (the oldest record timestamp of the polled batches not
  yet acknowledged: the age of the oldest uncopied record). A value not known yet is not reported. The mirror status view
  (pyconnect.mirror_status) reads them with the Java metrics above.

Recording is per batch and per partition (or per group and partition), at one clock reading (the
hub's) per batch, and leaves the stats as Java's per-record recording at that instant would: a batch
is summarised once (:class:`TimestampSummary`: count, sum, extremes and last of its record
timestamps) and each distribution takes the summary. The source side summarises each polled batch
once: its record ages are recorded at the poll, and the summary waits (per partition, in poll order,
at most ``MAX_PENDING_BATCHES``) until the target has acknowledged the batch's last source offset,
when the replication latency of all its records is recorded at that instant. A batch acknowledged in
several producer batches therefore has its latency recorded at its last acknowledgement: the latency
of its earlier records is over-stated by the time between those acknowledgements (milliseconds),
which is what keeps the acknowledgement path free of any per-record work. Records acknowledged
without a polled batch waiting (none in a task's normal life) are counted, with no latency.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from pyconnect.metrics.registry import Meter, MetricName, Metrics, MetricsHub
from pyconnect.metrics.stats import Avg, Max, Min, Value
from pyconnect.mirror_status import core as status_names

DOMAIN = status_names.MIRROR_DOMAIN
SOURCE_GROUP = status_names.SOURCE_GROUP
PROGRESS_GROUP = status_names.PROGRESS_GROUP
CHECKPOINT_GROUP = status_names.CHECKPOINT_GROUP

Tags = tuple[tuple[str, str], ...]


MAX_PENDING_BATCHES = 4096
"""Polled batches of one partition kept for their replication latency; older ones are dropped (their
records then get no latency: only a target that acknowledges nothing for this many polls)."""


class TimestampSummary(NamedTuple):
    """The record timestamps of one batch (not empty), summarised in C loops."""

    records: int
    total: int
    low: int
    high: int
    last: int

    @classmethod
    def of(cls, timestamps: Sequence[int]) -> TimestampSummary:
        return cls(len(timestamps), sum(timestamps), min(timestamps), max(timestamps), timestamps[-1])


class _PolledBatch(NamedTuple):
    last_offset: int
    timestamps: TimestampSummary


class _Distribution:
    """``<base>`` (last value), ``<base>-max``, ``-min`` and ``-avg`` of one sensor."""

    __slots__ = ("sensor",)

    def __init__(self, metrics: Metrics, group: str, base: str, tags: Tags, what: str) -> None:
        sensor = self.sensor = metrics.sensor(f"{group}{dict(tags)};{base}")
        for suffix, stat, prefix in (
            ("", Value(), ""),
            ("-max", Max(), "Max "),
            ("-min", Min(), "Min "),
            ("-avg", Avg(), "Average "),
        ):
            description = f"{prefix}{what}" if prefix else what[0].upper() + what[1:]
            metrics.add_stat(sensor, MetricName(base + suffix, group, tags, description), stat)

    def record(self, now_ms: int, timestamps: TimestampSummary) -> None:
        """Record ``now_ms - t`` for every timestamp ``t`` of the summarised batch."""
        count = timestamps.records
        self.sensor.record_batch(
            count,
            float(count * now_ms - timestamps.total),
            float(now_ms - timestamps.high),
            float(now_ms - timestamps.low),
            float(now_ms - timestamps.last),
            now_ms,
        )


def _meter(metrics: Metrics, group: str, names: tuple[str, str], tags: Tags, what: str) -> Meter:
    """A :class:`Meter` with MirrorMaker 2's descriptions."""
    return Meter(metrics, group, names, tags, (f"Average {what} per second.", f"Number of {what}."))


EndOffset = Callable[[str, int], int | None]
"""The source high watermark of a (remote topic, partition), ``None`` while unknown."""


class _Progress:
    """The ``MirrorSourceProgress`` gauges of one partition (see the module docstring)."""

    __slots__ = ("last_replicated_ms", "newest_timestamp_ms", "pending", "replicated_offset")

    def __init__(
        self,
        metrics: Metrics,
        tags: Tags,
        start_ms: int,
        end_offset: EndOffset | None,
        remote: tuple[str, int],
    ) -> None:
        self.newest_timestamp_ms: int | None = None
        self.last_replicated_ms: int | None = None
        self.replicated_offset: int | None = None
        self.pending: deque[_PolledBatch] = deque(maxlen=MAX_PENDING_BATCHES)
        for name, gauge in (
            ("task-start-ms", lambda now: start_ms),
            ("last-record-timestamp-ms", lambda now: self.newest_timestamp_ms),
            ("last-replicated-ms", lambda now: self.last_replicated_ms),
            ("replicated-offset", lambda now: self.replicated_offset),
            (
                "end-offset",
                (lambda now: end_offset(*remote)) if end_offset is not None else (lambda now: None),
            ),
            ("oldest-pending-timestamp-ms", lambda now: self.oldest_pending_ms()),
        ):
            metrics.add_gauge(MetricName(name, PROGRESS_GROUP, tags), gauge)

    def oldest_pending_ms(self) -> int | None:
        """The oldest record timestamp among the polled batches the target has not acknowledged."""
        return self.pending[0].timestamps.low if self.pending else None

    def acknowledged(self, now_ms: int | None, newest_timestamp: int | None, last_offset: int | None) -> None:
        """``now_ms`` is ``None`` when nothing was written (the records were dropped)."""
        if newest_timestamp is not None and (
            self.newest_timestamp_ms is None or newest_timestamp > self.newest_timestamp_ms
        ):
            self.newest_timestamp_ms = newest_timestamp
        if now_ms is not None:
            self.last_replicated_ms = now_ms
        if last_offset is not None and (
            self.replicated_offset is None or last_offset > self.replicated_offset
        ):
            self.replicated_offset = last_offset


class _Truncations:
    """``truncated-record-count`` and ``truncation-count`` of one partition (see the module docstring)."""

    __slots__ = ("gaps", "records")

    def __init__(self, metrics: Metrics, tags: Tags) -> None:
        self.records = 0
        self.gaps = 0
        metrics.add_gauge(
            MetricName(
                "truncated-record-count",
                SOURCE_GROUP,
                tags,
                "Number of source records lost to truncation before they were replicated.",
            ),
            lambda now: self.records,
        )
        metrics.add_gauge(
            MetricName("truncation-count", SOURCE_GROUP, tags, "Number of truncation gaps reported."),
            lambda now: self.gaps,
        )


class _RawBatches:
    """``raw-batch-count`` and ``decoded-batch-count`` of one partition (see the module docstring)."""

    __slots__ = ("copied", "decoded")

    def __init__(self, metrics: Metrics, tags: Tags) -> None:
        self.copied = 0
        self.decoded = 0
        metrics.add_gauge(
            MetricName(
                "raw-batch-count", SOURCE_GROUP, tags, "Number of source record batches copied as bytes."
            ),
            lambda now: self.copied,
        )
        metrics.add_gauge(
            MetricName(
                "decoded-batch-count",
                SOURCE_GROUP,
                tags,
                "Number of fetched source record batches the raw path decoded into records.",
            ),
            lambda now: self.decoded,
        )


class _PartitionMetrics:
    __slots__ = ("age", "bytes", "latency", "pending", "progress", "raw", "records", "truncations")

    def __init__(
        self,
        metrics: Metrics,
        tags: Tags,
        start_ms: int,
        end_offset: EndOffset | None,
        remote: tuple[str, int],
    ) -> None:
        group = SOURCE_GROUP
        self.records = _meter(
            metrics, group, ("record-rate", "record-count"), tags, "records replicated to the target cluster"
        )
        self.bytes = _meter(metrics, group, ("byte-rate", "byte-count"), tags, "bytes replicated")
        self.age = _Distribution(
            metrics, group, "record-age-ms", tags, "age of incoming source records when replicated"
        )
        self.latency = _Distribution(
            metrics, group, "replication-latency-ms", tags, "time records take from source to target cluster"
        )
        self.progress = _Progress(metrics, tags, start_ms, end_offset, remote)
        self.pending = self.progress.pending
        self.truncations = _Truncations(metrics, tags)
        self.raw = _RawBatches(metrics, tags)


class _Registry:
    """One task's registry in ``hub``; ``close`` removes it (idempotent)."""

    def __init__(self, hub: MetricsHub) -> None:
        self.hub = hub
        self.metrics = hub.registry(DOMAIN)

    def close(self) -> None:
        self.hub.remove(self.metrics)


class MirrorSourceMetrics(_Registry):
    """``MirrorSourceConnector`` metrics of one MirrorSourceTask (see the module docstring).

    ``partitions`` are the task's (remote topic, partition) pairs, registered at once; ``end_offset``
    answers their source high watermarks when the progress gauges are read."""

    def __init__(
        self,
        hub: MetricsHub,
        source: str,
        target: str,
        partitions: Iterable[tuple[str, int]],
        *,
        end_offset: EndOffset | None = None,
    ) -> None:
        super().__init__(hub)
        self._aliases = (("source", source), ("target", target))
        self._start_ms = self.metrics.now_ms()
        self._end_offset = end_offset
        self._partitions: dict[tuple[str, int], _PartitionMetrics] = {}
        for topic, partition in partitions:
            self._partition(topic, partition)

    def _partition(self, topic: str, partition: int) -> _PartitionMetrics:
        found = self._partitions.get((topic, partition))
        if found is None:
            tags = (*self._aliases, ("topic", topic), ("partition", str(partition)))
            found = self._partitions[(topic, partition)] = _PartitionMetrics(
                self.metrics, tags, self._start_ms, self._end_offset, (topic, partition)
            )
        return found

    def resumed(self, topic: str, partition: int, committed_offset: int) -> None:
        """The task resumes ``topic``/``partition`` after ``committed_offset`` (already replicated)."""
        progress = self._partition(topic, partition).progress
        if progress.replicated_offset is None or committed_offset > progress.replicated_offset:
            progress.replicated_offset = committed_offset

    def truncated(self, topic: str, partition: int, lost: int, resume: int | None) -> None:
        """A gap was reported on ``topic``/``partition``: ``lost`` records (may be 0); the task copies
        ``resume`` next (``None``: it stopped, or keeps its position), so the record lag restarts from there.
        Polled batches still waiting for their acknowledgement are dropped: offsets may start over."""
        found = self._partition(topic, partition)
        found.truncations.records += max(0, lost)
        found.truncations.gaps += 1
        found.pending.clear()
        if resume is not None:
            found.progress.replicated_offset = resume - 1

    def raw_batches(self, topic: str, partition: int, copied: int, decoded: int) -> None:
        """Fetched batches of one partition copied as bytes and decoded, on the raw path."""
        found = self._partition(topic, partition).raw
        found.copied += copied
        found.decoded += decoded

    def record_polled(
        self,
        topic: str,
        partition: int,
        timestamps: Sequence[int],
        value_bytes: int,
        last_offset: int | None = None,
    ) -> None:
        """A polled batch of one partition: record ages and value bytes (Java's ``recordAge`` and
        ``recordBytes`` per record in ``poll``); with ``last_offset`` (the source offset of its last
        record) its summary waits for the acknowledgement of that offset (:meth:`record_acknowledged`)."""
        if not timestamps:
            return
        metrics = self.metrics
        now = metrics.now_ms()
        found = self._partition(topic, partition)
        summary = TimestampSummary.of(timestamps)
        found.age.record(now, summary)
        found.bytes.record(metrics, now, float(value_bytes))
        if last_offset is not None:
            found.pending.append(_PolledBatch(last_offset, summary))

    def record_acknowledged(self, topic: str, partition: int, count: int, last_offset: int) -> None:
        """``count`` records of one partition acknowledged by the target, the last at source offset
        ``last_offset``: their count (Java's ``countRecord``), and the replication latency (Java's
        ``replicationLatency`` in ``commitRecord``) of every polled batch that ends at or before
        ``last_offset``; ``last_offset`` also feeds the progress gauges. ``count`` 0 says the record at
        ``last_offset`` was not written (dropped by a transformation, or failed under
        ``errors.tolerance=all``): nothing is counted, and a batch it completes still gets its latency.
        O(1) per polled batch."""
        metrics = self.metrics
        now = metrics.now_ms()
        found = self._partition(topic, partition)
        if count > 0:
            found.records.record(metrics, now, float(count))
        pending, newest = found.pending, None
        while pending and pending[0].last_offset <= last_offset:
            timestamps = pending.popleft().timestamps
            found.latency.record(now, timestamps)
            if newest is None or timestamps.high > newest:
                newest = timestamps.high
        found.progress.acknowledged(now if count > 0 else None, newest, last_offset)


class MirrorCheckpointMetrics(_Registry):
    """``MirrorCheckpointConnector`` metrics of one MirrorCheckpointTask (see the module docstring)."""

    def __init__(self, hub: MetricsHub, source: str, target: str) -> None:
        super().__init__(hub)
        self._aliases = (("source", source), ("target", target))
        self._groups: dict[tuple[str, str, int], _Distribution] = {}

    def record_acknowledged(self, group: str, topic: str, partition: int, timestamps: Sequence[int]) -> None:
        """Checkpoints of ``group`` for ``topic``/``partition`` acknowledged by the target (Java's
        ``checkpointLatency`` in ``commitRecord``)."""
        if not timestamps:
            return
        key = (group, topic, partition)
        found = self._groups.get(key)
        if found is None:
            tags = (*self._aliases, ("group", group), ("topic", topic), ("partition", str(partition)))
            found = self._groups[key] = _Distribution(
                self.metrics,
                CHECKPOINT_GROUP,
                "checkpoint-latency-ms",
                tags,
                "time consumer group offsets take to replicate from source to target cluster",
            )
        found.record(self.metrics.now_ms(), TimestampSummary.of(timestamps))
