"""MirrorSourceConnector's metrics on a real worker: after mirroring a topic of cluster A to cluster B,
the worker's ``GET /metrics`` has the MirrorMaker 2 dashboard's series for the remote topic's
partitions, counting every record once with sane replication latencies, and drops them when the
connector is deleted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import NewTopic

from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import fleet, python_workers, running_tasks, wait_for
from tests.integration.test_metrics_endpoint import Series, matching, parse, scrape
from tests.integration.test_mirror_source import _admin, mirror_config, source_rows, wait_mirrored

pytestmark = pytest.mark.kafka

PREFIX = "kafka_connect_mirror_mirrorsourceconnector_"
RECORDS, PARTITIONS = 300, 3


async def create_and_fill_now(bootstrap: str, topic: str) -> None:
    """Create ``topic`` and produce :data:`RECORDS` records timestamped by the producer (now)."""
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for i in range(RECORDS):
            await producer.send(topic, f"v{i}".encode(), key=f"k{i}".encode(), partition=i % PARTITIONS)
        await producer.flush()
    finally:
        await producer.stop()


def test_mirror_source_metrics_count_every_record_with_sane_latency(
    cluster_a: ClusterHandle, cluster_b: ClusterHandle, unique: Callable[[str], str], tmp_path: Path
) -> None:
    a, b = cluster_a.bootstrap_servers, cluster_b.bootstrap_servers
    topic = f"{unique('mmm')}-t"
    remote = f"A.{topic}"
    started = time.monotonic()
    asyncio.run(create_and_fill_now(a, topic))
    expected = source_rows(a, topic, RECORDS)
    with fleet(python_workers(b, tmp_path, unique("mmm-group"), 1)) as (worker,):
        code, body = worker.rest(
            "POST", "/connectors", {"name": "mirror", "config": mirror_config(cluster_a, cluster_b, topic)}
        )
        assert code == 201, body
        wait_for("2 RUNNING tasks", lambda: running_tasks(worker, "mirror", 2), 60)
        wait_mirrored(b, remote, expected, 60)

        def counted() -> dict[frozenset[tuple[str, str]], float] | None:
            found = matching(parse(scrape(worker)), PREFIX + "record_count", topic=remote)
            return found if sum(found.values()) == RECORDS else None

        counts = wait_for(f"record_count summing to {RECORDS}", counted, 30)
        wall_ms = (time.monotonic() - started) * 1000
        assert {dict(labels)["partition"] for labels in counts} == {str(p) for p in range(PARTITIONS)}
        assert all(dict(labels)["source"] == "A" and dict(labels)["target"] == "B" for labels in counts)

        series = parse(scrape(worker))
        for name in (
            "replication_latency_ms",
            "replication_latency_ms_avg",
            "replication_latency_ms_min",
            "replication_latency_ms_max",
            "record_age_ms",
            "record_age_ms_avg",
            "record_age_ms_min",
            "record_age_ms_max",
        ):
            found = matching(series, PREFIX + name, topic=remote)
            assert len(found) == PARTITIONS, name
            assert all(0 <= v < wall_ms for v in found.values()), (name, found, wall_ms)
        assert sum(matching(series, PREFIX + "byte_count", topic=remote).values()) > 0
        assert matching(series, PREFIX + "record_rate", topic=remote)
        assert matching(series, PREFIX + "byte_rate", topic=remote)

        # The clients' series dashboards query (Strimzi's client rules over kafka.producer and
        # kafka.consumer), for the two task producers and their replication consumers.
        def by_client(
            name: str, marker: str, scraped: Series | None = None, **labels: str
        ) -> dict[str, float]:
            found: dict[str, float] = {}
            for label_set, value in matching(scraped or series, name, **labels).items():
                client = dict(label_set)["clientid"]
                if marker in client:
                    found[client] = found.get(client, 0.0) + value
            return found

        # every record handed to a producer at least once (a batch sent again counts again, as in Java)
        sent = by_client("kafka_producer_record_send_total", "connector-producer-mirror-")
        assert len(sent) == 2 and sum(sent.values()) >= RECORDS, sent
        outgoing = by_client("kafka_producer_outgoing_byte_total", "connector-producer-mirror-")
        assert sent.keys() == outgoing.keys() and all(v > 0 for v in outgoing.values()), outgoing

        # once the producers are idle (an offset-sync record may still be in flight) the whole
        # buffer.memory is free again
        def buffer_free() -> dict[str, float] | None:
            scraped = parse(scrape(worker))
            free = by_client("kafka_producer_buffer_available_bytes", "connector-producer-mirror-", scraped)
            return free if free == {client: 33554432.0 for client in sent} else None

        wait_for("both producers' buffers free", buffer_free, 20)
        consumed = by_client("kafka_consumer_fetch_manager_records_consumed_total", "replication-consumer")
        assert len(consumed) == 2 and sum(consumed.values()) >= RECORDS, consumed
        incoming = by_client("kafka_consumer_incoming_byte_total", "replication-consumer")
        # The record sets as fetched: each v2 record takes its key and value plus at least 7 bytes
        # (length, attributes, timestamp and offset deltas, key and value lengths, header count) and at
        # most 16 here; each batch a 61-byte header, at least one batch per partition.
        value_and_key_bytes = sum(len(f"v{i}") + len(f"k{i}") for i in range(RECORDS))
        assert sum(incoming.values()) >= value_and_key_bytes + 7 * RECORDS + 61 * PARTITIONS, incoming
        if sum(consumed.values()) == RECORDS:  # nothing read twice
            assert sum(incoming.values()) <= value_and_key_bytes + (16 + 61) * RECORDS, incoming
        fetched = by_client("kafka_consumer_fetch_manager_bytes_consumed_total", "replication-consumer")
        assert fetched == incoming, (fetched, incoming)
        assert all(
            client.startswith('"') and client.endswith('|replication-consumer"') for client in incoming
        )
        lags = matching(series, "kafka_consumer_fetch_manager_records_lag", topic=topic)
        assert sorted(dict(ls)["partition"] for ls in lags) == [str(p) for p in range(PARTITIONS)], lags
        assert all(v == 0 for v in lags.values()), lags
        print(
            f"\n{RECORDS} records counted; replication latency max "
            f"{max(matching(series, PREFIX + 'replication_latency_ms_max', topic=remote).values()):.0f} ms "
            f"(wall {wall_ms:.0f} ms)"
        )

        code, body = worker.rest("DELETE", "/connectors/mirror")
        assert code == 204, body
        wait_for(
            "mirror series gone after the connector's deletion",
            lambda: "kafka_connect_mirror_" not in scrape(worker),
            30,
        )
