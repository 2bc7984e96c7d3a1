"""pyconnect.metrics.client_metrics: Java's client metric names, the values they report, and their
series through the worker's exposition rules (Strimzi's), JMX quoting of client ids included."""

from __future__ import annotations

from aiokafka import TopicPartition

from pyconnect.metrics.client_metrics import ConsumerMetrics, ProducerMetrics
from pyconnect.metrics.prometheus import PrometheusExposition
from pyconnect.metrics.registry import MetricsHub


class Record:
    def __init__(self, offset: int, key: int, value: int) -> None:
        self.offset, self.serialized_key_size, self.serialized_value_size = offset, key, value


def series(hub: MetricsHub) -> dict[str, float]:
    lines = PrometheusExposition(hub, "worker").render().splitlines()
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in lines if not line.startswith("#")
    }


def test_producer_bytes_records_and_the_buffer_held_until_acknowledged() -> None:
    hub = MetricsHub()
    producer = ProducerMetrics(hub, "connector-producer-c-0", buffer_memory=1000)
    first = producer.sent(300, 3)
    producer.sent(200, 2)
    client = '{clientid="connector-producer-c-0"}'
    got = series(hub)
    assert got["kafka_producer_outgoing_byte_total" + client] == 500
    assert got["kafka_producer_record_send_total" + client] == 5
    assert got["kafka_producer_buffer_available_bytes" + client] == 500
    first()
    assert series(hub)["kafka_producer_buffer_available_bytes" + client] == 800
    producer.close()
    assert series(hub) == {}


def test_consumer_lag_follows_position_and_high_watermark_and_quoted_client_ids() -> None:
    hub = MetricsHub()
    high = {("t", 0): 10, ("t", 1): None}
    consumer = ConsumerMetrics(hub, "A->B|m|replication-consumer", lambda t, p: high[(t, p)])
    consumer.assigned([("t", 0), ("t", 1)])
    client = 'clientid="\\"A->B|m|replication-consumer\\""'
    lag0 = f'kafka_consumer_fetch_manager_records_lag{{{client},topic="t",partition="0"}}'
    assert lag0 not in series(hub)  # no position yet
    consumer.seeked("t", 0, 4)
    assert series(hub)[lag0] == 6
    consumer.fetched(70)  # a fetched record set of 70 bytes, counted once when buffered
    consumer.polled(
        {TopicPartition("t", 0): [Record(4, 1, 10), Record(5, 1, 20)], TopicPartition("t", 1): []}
    )
    got = series(hub)
    assert got[lag0] == 4
    assert got[f"kafka_consumer_incoming_byte_total{{{client}}}"] == 70  # nothing counted per record
    assert got[f"kafka_consumer_fetch_manager_bytes_consumed_total{{{client}}}"] == 70
    assert got[f"kafka_consumer_fetch_manager_records_consumed_total{{{client}}}"] == 2
    assert not any('partition="1"' in name for name in got)  # no high watermark yet
    consumer.assigned([("t", 1)])
    assert lag0 not in series(hub)
    consumer.close()
    assert series(hub) == {}


def test_a_consumer_whose_fetches_are_not_counted_measures_the_records_it_polls() -> None:
    hub = MetricsHub()
    consumer = ConsumerMetrics(hub, "c", lambda t, p: None)
    consumer.measure_records()
    consumer.polled({TopicPartition("t", 0): [Record(4, 1, 10), Record(5, -1, 20)]})
    got = series(hub)
    assert got['kafka_consumer_incoming_byte_total{clientid="c"}'] == 31
    assert got['kafka_consumer_fetch_manager_records_consumed_total{clientid="c"}'] == 2


def test_serialized_sizes_count_null_keys_and_values_as_zero() -> None:
    from types import SimpleNamespace

    from pyconnect.metrics.client_metrics import serialized_sizes, value_bytes

    records = [
        SimpleNamespace(serialized_key_size=3, serialized_value_size=100),
        SimpleNamespace(serialized_key_size=-1, serialized_value_size=10),
        SimpleNamespace(serialized_key_size=2, serialized_value_size=-1),
    ]
    assert serialized_sizes(records) == (5, 110)
    assert serialized_sizes([]) == (0, 0)
    assert value_bytes(records) == 110


def test_fetched_record_sets_are_counted_once_each_when_the_fetcher_buffers_them() -> None:
    import collections
    from types import SimpleNamespace

    from pyconnect.kafka.fetched_bytes import count_fetched_bytes

    class Sized:
        def __init__(self, size: int) -> None:
            self.size = size

        def size_in_bytes(self) -> int:
            return self.size

    def result(size: int) -> SimpleNamespace:  # aiokafka's FetchResult around its PartitionRecords
        return SimpleNamespace(_partition_records=SimpleNamespace(_records=Sized(size)))

    early = result(5)
    fetcher = SimpleNamespace(_records=collections.OrderedDict({"tp0": early}))
    consumer = SimpleNamespace(_fetcher=fetcher)
    seen: list[int] = []
    assert count_fetched_bytes(consumer, seen.append)
    assert fetcher._records["tp0"] is early and seen == []  # what was buffered before is kept, uncounted
    fetcher._records["tp1"] = result(300)
    fetcher._records["tp2"] = SimpleNamespace(_error="offset out of range")  # an error: no bytes
    fetcher._records["tp3"] = result(0)
    del fetcher._records["tp1"]
    assert seen == [300]
    later: list[int] = []
    assert count_fetched_bytes(consumer, later.append)  # the callback replaced, never doubled
    fetcher._records["tp1"] = result(7)
    assert (seen, later) == ([300], [7])
    assert not count_fetched_bytes(SimpleNamespace(_fetcher=SimpleNamespace(_records={})), seen.append)
    assert not count_fetched_bytes(SimpleNamespace(), seen.append)
