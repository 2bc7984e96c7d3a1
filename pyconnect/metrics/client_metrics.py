"""Kafka client metrics under Java's names, for the clients whose series dashboards query.

aiokafka measures nothing, so the clients of the data path are measured where pyconnect hands them
work. Each object owns one registry in the worker's hub (domain ``kafka.producer`` or
``kafka.consumer``, as Java's client JMX prefixes) and ``close()`` removes it, as a closed Java client
unregisters its MBeans. The exposition's client rules turn them into Strimzi's series, e.g.
``kafka_producer_outgoing_byte_total{clientId=...}`` and
``kafka_consumer_fetch_manager_records_lag{clientId=...,topic=...,partition=...}``.

- :class:`ProducerMetrics`, group ``producer-metrics``, tag ``client-id``: ``outgoing-byte-total`` and
  ``-rate`` (bytes of the record batches handed to the producer: the payload of its produce requests;
  Java counts the requests' bytes on the wire, headers included, a little more), ``record-send-total``
  and ``-rate``, ``buffer-total-bytes`` (``buffer.memory``) and ``buffer-available-bytes``
  (``buffer.memory`` minus the bytes of the batches not acknowledged yet: what Java's buffer pool would
  have left; aiokafka has no pool, it holds one pending batch per partition).
- :class:`ConsumerMetrics`, group ``consumer-metrics``, tag ``client-id``: ``incoming-byte-total`` and
  ``-rate``; group ``consumer-fetch-manager-metrics``, tag ``client-id``:
  ``records-consumed-total``/``-rate`` and ``bytes-consumed-total``/``-rate``; and per assigned
  partition (tags ``client-id``, ``topic``, ``partition``) ``records-lag``: the partition's high
  watermark minus the consumer's position, known once a fetch has returned the high watermark (not
  reported before). The bytes are those of the record sets fetched, as fetched (compressed batches
  count their compressed size), counted when a fetch buffers them (:meth:`ConsumerMetrics.fetched`,
  fed by pyconnect.kafka.fetched_bytes): Java counts the fetch responses' socket bytes for
  ``incoming-byte``, a little more, and the records' uncompressed sizes for ``bytes-consumed``. A
  consumer whose fetches cannot be counted measures the key and value bytes of the records it polls
  instead (:meth:`ConsumerMetrics.measure_records`).

Recording is one call per batch (producer), per fetched record set and per poll (consumer): nothing per
record, but where the fallback above measures records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import countOf
from typing import Any

from pyconnect.metrics.registry import Meter, MetricName, Metrics, MetricsHub

PRODUCER_DOMAIN = "kafka.producer"
CONSUMER_DOMAIN = "kafka.consumer"
JAVA_BUFFER_MEMORY = 33_554_432


def _meter(metrics: Metrics, group: str, tags: tuple[tuple[str, str], ...], base: str, what: str) -> Meter:
    """``<base>-rate`` and ``<base>-total`` with Java's client descriptions."""
    return Meter(
        metrics,
        group,
        (f"{base}-rate", f"{base}-total"),
        tags,
        (f"The number of {what} per second", f"The total number of {what}"),
    )


class ProducerMetrics:
    """One producer's metrics; see the module docstring. ``sent`` returns the call to make when the
    batch's acknowledgement (or failure) arrives."""

    def __init__(self, hub: MetricsHub, client_id: str, buffer_memory: int = JAVA_BUFFER_MEMORY) -> None:
        self._hub = hub
        self._metrics = metrics = hub.registry(PRODUCER_DOMAIN)
        self._buffer = buffer_memory
        self._pending = 0
        group, tags = "producer-metrics", (("client-id", client_id),)
        self._bytes = _meter(metrics, group, tags, "outgoing-byte", "outgoing bytes sent to all servers")
        self._records = _meter(metrics, group, tags, "record-send", "records sent")
        metrics.add_gauge(
            MetricName(
                "buffer-total-bytes", group, tags, "The maximum amount of buffer memory the client can use"
            ),
            lambda _now: float(self._buffer),
        )
        metrics.add_gauge(
            MetricName(
                "buffer-available-bytes",
                group,
                tags,
                "The total amount of buffer memory that is not being used (either unallocated or in the free list)",
            ),
            lambda _now: float(max(0, self._buffer - self._pending)),
        )

    def sent(self, batch_bytes: int, records: int) -> Callable[[], None]:
        now = self._metrics.now_ms()
        self._bytes.record(self._metrics, now, float(batch_bytes))
        self._records.record(self._metrics, now, float(records))
        self._pending += batch_bytes

        def done() -> None:
            self._pending -= batch_bytes

        return done

    def close(self) -> None:
        self._hub.remove(self._metrics)


def serialized_sizes(records: Sequence[Any]) -> tuple[int, int]:
    """The key bytes and the value bytes of aiokafka ``ConsumerRecord`` s (a null key or value, size -1,
    counts 0)."""
    keys = [r.serialized_key_size for r in records]
    return sum(keys) + countOf(keys, -1), value_bytes(records)


def value_bytes(records: Sequence[Any]) -> int:
    """The value bytes of aiokafka ``ConsumerRecord`` s (a null value, size -1, counts 0): read by a
    list comprehension (Python 3.11 specialises its attribute reads: half the time of
    ``map(attrgetter)``) and summed in C, as this runs for every record."""
    values = [r.serialized_value_size for r in records]
    return sum(values) + countOf(values, -1)


class ConsumerMetrics:
    """One consumer's metrics; see the module docstring. ``high_watermark(topic, partition)`` is read at
    each scrape."""

    def __init__(
        self, hub: MetricsHub, client_id: str, high_watermark: Callable[[str, int], int | None]
    ) -> None:
        self._hub = hub
        self._metrics = metrics = hub.registry(CONSUMER_DOMAIN)
        self._client_id = client_id
        self._high_watermark = high_watermark
        self._positions: dict[tuple[str, int], int] = {}
        self._record_sizes = False
        tags = (("client-id", client_id),)
        self._incoming = _meter(
            metrics, "consumer-metrics", tags, "incoming-byte", "bytes read off all sockets"
        )
        fetch = "consumer-fetch-manager-metrics"
        self._consumed = _meter(metrics, fetch, tags, "records-consumed", "records consumed")
        self._consumed_bytes = _meter(metrics, fetch, tags, "bytes-consumed", "bytes consumed")

    def assigned(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Track ``records-lag`` for these partitions (others stop being reported)."""
        wanted = set(partitions)
        for tp in list(self._positions):
            if tp not in wanted:
                del self._positions[tp]
                self._metrics.remove_metric(self._lag_name(*tp))
        for topic, partition in wanted - set(self._positions):
            self._positions[(topic, partition)] = -1
            self._metrics.add_gauge(self._lag_name(topic, partition), self._lag(topic, partition))

    def seeked(self, topic: str, partition: int, offset: int) -> None:
        if (topic, partition) in self._positions:
            self._positions[(topic, partition)] = offset

    def measure_records(self) -> None:
        """Measure the key and value bytes of every polled record: for a consumer whose fetches are not
        counted by :meth:`fetched` (see the module docstring)."""
        self._record_sizes = True

    def fetched(self, size: int) -> None:
        """A fetched record set of ``size`` bytes was buffered."""
        now = self._metrics.now_ms()
        self._incoming.record(self._metrics, now, float(size))
        self._consumed_bytes.record(self._metrics, now, float(size))

    def consumed(self, count: int) -> None:
        """``count`` records taken without a poll (a raw fetch's batches, counted by their headers)."""
        if count:
            self._consumed.record(self._metrics, self._metrics.now_ms(), float(count))

    def polled(self, batches: Mapping[Any, Sequence[Any]]) -> None:
        """Record one poll's result: ``{TopicPartition: [ConsumerRecord, ...]}`` (aiokafka's)."""
        count = size = 0
        positions = self._positions
        for tp, records in batches.items():
            if not records:
                continue
            count += len(records)
            if self._record_sizes:
                keys, values = serialized_sizes(records)
                size += keys + values
            key = (tp.topic, tp.partition)
            if key in positions:
                positions[key] = records[-1].offset + 1
        if count:
            now = self._metrics.now_ms()
            self._consumed.record(self._metrics, now, float(count))
            if size:
                self._incoming.record(self._metrics, now, float(size))
                self._consumed_bytes.record(self._metrics, now, float(size))

    def close(self) -> None:
        self._hub.remove(self._metrics)

    def _lag_name(self, topic: str, partition: int) -> MetricName:
        tags = (("client-id", self._client_id), ("topic", topic), ("partition", str(partition)))
        return MetricName(
            "records-lag", "consumer-fetch-manager-metrics", tags, "The latest lag of the partition"
        )

    def _lag(self, topic: str, partition: int) -> Callable[[int], float | None]:
        def lag(_now: int) -> float | None:
            position = self._positions.get((topic, partition), -1)
            high = self._high_watermark(topic, partition)
            if position < 0 or high is None:
                return None
            return float(max(0, high - position))

        return lag
