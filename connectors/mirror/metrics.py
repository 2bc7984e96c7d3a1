"""MirrorMaker 2's task metrics (Java's ``MirrorSourceMetrics`` and ``MirrorCheckpointMetrics``).

Domain ``kafka.connect.mirror``; one registry per task in the worker's hub, removed by ``close`` (the
task's stop), as each Java task's own ``Metrics`` with its ``JmxReporter``.

- ``MirrorSourceConnector`` with tags ``source``, ``target``, ``topic`` (the remote topic on the target),
  ``partition``: ``record-count``/``record-rate`` (records acknowledged by the target), ``byte-count``/
  ``byte-rate`` (value bytes polled), ``record-age-ms`` (+ ``-min``, ``-max``, ``-avg``: now minus the
  record timestamp when polled) and ``replication-latency-ms`` (+ ``-min``, ``-max``, ``-avg``: now minus
  the record timestamp when acknowledged). ``-ms`` is the last record's value, ``-min``/``-max``/``-avg``
  windowed. The task's partitions are registered at its start, others on first use.
- ``MirrorCheckpointConnector`` with tags ``source``, ``target``, ``group``, ``topic`` (remote),
  ``partition``: ``checkpoint-latency-ms`` (+ ``-min``, ``-max``, ``-avg``): now minus the checkpoint
  record's timestamp (when its group's offsets were listed) when the checkpoint is acknowledged;
  registered on first use.

Recording is per batch and per partition (or per group and partition): each call takes the batch's
timestamps and records their count, sum and extremes at one clock reading (the hub's), which leaves the
stats as Java's per-record recording at that instant would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyconnect.metrics.registry import MetricName, Metrics, MetricsHub
from pyconnect.metrics.stats import Avg, CumulativeSum, Max, Min, Rate, Value

DOMAIN = "kafka.connect.mirror"
SOURCE_GROUP = "MirrorSourceConnector"
CHECKPOINT_GROUP = "MirrorCheckpointConnector"

Tags = tuple[tuple[str, str], ...]


class _Distribution:
    """``<base>`` (last value), ``<base>-max``, ``-min`` and ``-avg`` of one sensor."""

    __slots__ = ("avg", "last", "max", "min")

    def __init__(self, metrics: Metrics, group: str, base: str, tags: Tags, what: str) -> None:
        self.last, self.max, self.min, self.avg = Value(), Max(), Min(), Avg()
        sensor = metrics.sensor(f"{group}{dict(tags)};{base}")
        for suffix, stat, prefix in (
            ("", self.last, ""),
            ("-max", self.max, "Max "),
            ("-min", self.min, "Min "),
            ("-avg", self.avg, "Average "),
        ):
            description = f"{prefix}{what}" if prefix else what[0].upper() + what[1:]
            metrics.add_stat(sensor, MetricName(base + suffix, group, tags, description), stat)

    def record(self, metrics: Metrics, now_ms: int, timestamps: Sequence[int]) -> None:
        """Record ``now_ms - t`` for every ``t`` of ``timestamps`` (in record order, not empty)."""
        config, count = metrics.config, len(timestamps)
        self.last.record(config, float(now_ms - timestamps[-1]), now_ms)
        self.max.record_many(config, float(now_ms - min(timestamps)), count, now_ms)
        self.min.record_many(config, float(now_ms - max(timestamps)), count, now_ms)
        self.avg.record_many(config, float(count * now_ms - sum(timestamps)), count, now_ms)


class _Meter:
    """Java's ``Meter``: ``<rate>`` per second and ``<total>`` of the recorded amounts."""

    __slots__ = ("rate", "total")

    def __init__(self, metrics: Metrics, group: str, names: tuple[str, str], tags: Tags, what: str) -> None:
        self.rate, self.total = Rate(), CumulativeSum()
        sensor = metrics.sensor(f"{group}{dict(tags)};{names[1]}")
        metrics.add_stat(sensor, MetricName(names[0], group, tags, f"Average {what} per second."), self.rate)
        metrics.add_stat(sensor, MetricName(names[1], group, tags, f"Number of {what}."), self.total)

    def record(self, metrics: Metrics, now_ms: int, amount: float) -> None:
        self.rate.record(metrics.config, amount, now_ms)
        self.total.record(metrics.config, amount, now_ms)


class _PartitionMetrics:
    __slots__ = ("age", "bytes", "latency", "records")

    def __init__(self, metrics: Metrics, tags: Tags) -> None:
        group = SOURCE_GROUP
        self.records = _Meter(
            metrics, group, ("record-rate", "record-count"), tags, "records replicated to the target cluster"
        )
        self.bytes = _Meter(metrics, group, ("byte-rate", "byte-count"), tags, "bytes replicated")
        self.age = _Distribution(
            metrics, group, "record-age-ms", tags, "age of incoming source records when replicated"
        )
        self.latency = _Distribution(
            metrics, group, "replication-latency-ms", tags, "time records take from source to target cluster"
        )


class _Registry:
    """One task's registry in ``hub``; ``close`` removes it (idempotent)."""

    def __init__(self, hub: MetricsHub) -> None:
        self.hub = hub
        self.metrics = hub.registry(DOMAIN)

    def close(self) -> None:
        self.hub.remove(self.metrics)


class MirrorSourceMetrics(_Registry):
    """``MirrorSourceConnector`` metrics of one MirrorSourceTask (see the module docstring).

    ``partitions`` are the task's (remote topic, partition) pairs, registered at once."""

    def __init__(
        self, hub: MetricsHub, source: str, target: str, partitions: Iterable[tuple[str, int]]
    ) -> None:
        super().__init__(hub)
        self._aliases = (("source", source), ("target", target))
        self._partitions: dict[tuple[str, int], _PartitionMetrics] = {}
        for topic, partition in partitions:
            self._partition(topic, partition)

    def _partition(self, topic: str, partition: int) -> _PartitionMetrics:
        found = self._partitions.get((topic, partition))
        if found is None:
            tags = (*self._aliases, ("topic", topic), ("partition", str(partition)))
            found = self._partitions[(topic, partition)] = _PartitionMetrics(self.metrics, tags)
        return found

    def record_polled(self, topic: str, partition: int, timestamps: Sequence[int], value_bytes: int) -> None:
        """A polled batch of one partition: record ages and value bytes (Java's ``recordAge`` and
        ``recordBytes`` per record in ``poll``)."""
        if not timestamps:
            return
        metrics = self.metrics
        now = metrics.now_ms()
        found = self._partition(topic, partition)
        found.age.record(metrics, now, timestamps)
        found.bytes.record(metrics, now, float(value_bytes))

    def record_acknowledged(self, topic: str, partition: int, timestamps: Sequence[int]) -> None:
        """Records of one partition acknowledged by the target: count and replication latency (Java's
        ``countRecord`` and ``replicationLatency`` per record in ``commitRecord``)."""
        if not timestamps:
            return
        metrics = self.metrics
        now = metrics.now_ms()
        found = self._partition(topic, partition)
        found.records.record(metrics, now, float(len(timestamps)))
        found.latency.record(metrics, now, timestamps)


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
        metrics = self.metrics
        found.record(metrics, metrics.now_ms(), timestamps)
