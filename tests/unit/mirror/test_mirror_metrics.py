"""MirrorMaker 2's task metrics: batch recording, the tasks' calls and the worker's exposition."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from connectors.mirror.checkpoint import MirrorCheckpointTask
from connectors.mirror.metrics import (
    CHECKPOINT_GROUP,
    DOMAIN,
    PROGRESS_GROUP,
    SOURCE_GROUP,
    MirrorCheckpointMetrics,
    MirrorSourceMetrics,
)
from connectors.mirror.policy import DefaultReplicationPolicy
from connectors.mirror.records import TopicPartition
from connectors.mirror.source_task import MirrorSourceTask
from pyconnect.api.source import SourceRecord
from pyconnect.metrics.prometheus import PrometheusExposition
from pyconnect.metrics.registry import MetricsHub
from pyconnect.metrics.stats import Avg, Max, MetricConfig, Min


class Clock:
    def __init__(self, now_s: float = 100.0) -> None:
        self.now_s = now_s

    def __call__(self) -> float:
        return self.now_s


def hub_at(now_s: float = 100.0) -> tuple[MetricsHub, Clock]:
    clock = Clock(now_s)
    return MetricsHub(clock=clock), clock


def values(hub: MetricsHub, metric_group: str, **tags: str) -> dict[str, Any]:
    return {
        r.name.name: r.value
        for r in hub.read()
        if r.domain == DOMAIN
        and r.name.group == metric_group
        and all(r.name.tag(k) == v for k, v in tags.items())
    }


def test_record_many_equals_recording_one_by_one() -> None:
    config = MetricConfig(samples=2, window_ms=1000)
    for cls, combined in ((Avg, 6.0), (Max, 3.0), (Min, 1.0)):
        single, many = cls(), cls()
        single.record(config, 5.0, 0)
        many.record(config, 5.0, 0)
        for value in (1.0, 2.0, 3.0):
            single.record(config, value, 1500)
        many.record_many(config, combined, 3, 1500)
        assert single.measure(config, 1600) == many.measure(config, 1600)


def test_source_metrics_registered_at_start_with_java_names_and_tags() -> None:
    hub, _ = hub_at()
    MirrorSourceMetrics(hub, "A", "B", [("A.t", 0), ("A.t", 1)])
    every = [n for m in hub.registries() for n in m.names()]
    names = [n for n in every if n.group == SOURCE_GROUP]
    progress = {n.name for n in every if n.group == PROGRESS_GROUP}
    assert progress == {
        "task-start-ms",
        "last-record-timestamp-ms",
        "last-replicated-ms",
        "replicated-offset",
        "end-offset",
        "oldest-pending-timestamp-ms",
    }
    assert len(every) == len(names) + 2 * len(progress)
    expected = {
        "record-count",
        "record-rate",
        "byte-count",
        "byte-rate",
        *(
            f"{base}{suffix}"
            for base in ("record-age-ms", "replication-latency-ms")
            for suffix in ("", "-min", "-max", "-avg")
        ),
        "truncated-record-count",
        "truncation-count",
        "raw-batch-count",
        "decoded-batch-count",
    }
    assert {n.name for n in names} == expected
    assert len(names) == 2 * len(expected)
    first = next(n for n in names if n.tag("partition") == "0")
    assert first.group == SOURCE_GROUP
    assert [k for k, _ in first.tags] == ["source", "target", "topic", "partition"]
    assert first.tags == (("source", "A"), ("target", "B"), ("topic", "A.t"), ("partition", "0"))
    before = values(hub, SOURCE_GROUP, partition="0")
    assert before["record-count"] == 0.0 and math.isnan(before["record-age-ms-avg"])


def test_source_batches_record_exact_values() -> None:
    hub, clock = hub_at(100.0)
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)])
    metrics.record_polled("A.t", 0, [99_000, 98_400, 98_700], 30, last_offset=12)
    got = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert got["record-age-ms"] == 1300.0  # the last record's
    assert got["record-age-ms-max"] == 1600.0
    assert got["record-age-ms-min"] == 1000.0
    assert got["record-age-ms-avg"] == 1300.0
    assert got["byte-count"] == 30.0
    assert got["byte-rate"] == 30.0 / 30.0  # one 30 s window at least
    assert got["record-count"] == 0.0  # counted when acknowledged

    clock.now_s = 100.2
    metrics.record_polled("A.t", 0, [100_100], 10, last_offset=13)
    metrics.record_acknowledged("A.t", 0, 2, last_offset=11)  # the first batch is not complete yet
    got = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert got["record-count"] == 2.0
    assert math.isnan(got["replication-latency-ms-avg"])

    clock.now_s = 100.5
    metrics.record_acknowledged("A.t", 0, 2, last_offset=13)  # the rest: both batches complete
    got = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert got["record-count"] == 4.0
    assert got["record-rate"] == 4.0 / 30.5  # its window started at the first reading, 100.0 s
    assert got["replication-latency-ms"] == 400.0
    assert got["replication-latency-ms-max"] == 2100.0
    assert got["replication-latency-ms-min"] == 400.0
    assert got["replication-latency-ms-avg"] == (1500.0 + 2100.0 + 1800.0 + 400.0) / 4

    metrics.record_acknowledged("A.u", 3, 1, last_offset=0)  # not assigned at start: registered on first use
    got = values(hub, SOURCE_GROUP, topic="A.u", partition="3")
    assert got["record-count"] == 1.0 and math.isnan(got["replication-latency-ms-avg"])  # never polled
    metrics.close()
    assert hub.registries() == []


def test_pending_polled_batches_are_bounded() -> None:
    from connectors.mirror.metrics import MAX_PENDING_BATCHES

    hub, _ = hub_at(100.0)
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)])
    for offset in range(MAX_PENDING_BATCHES + 10):  # a target that acknowledges nothing
        metrics.record_polled("A.t", 0, [99_000], 1, last_offset=offset)
    metrics.record_acknowledged("A.t", 0, 1, last_offset=MAX_PENDING_BATCHES + 9)
    got = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert got["record-count"] == 1.0
    assert got["replication-latency-ms-avg"] == 1000.0  # the batches kept: the newest MAX_PENDING_BATCHES


def test_checkpoint_metrics_per_group_and_partition() -> None:
    hub, _ = hub_at(10.0)
    metrics = MirrorCheckpointMetrics(hub, "A", "B")
    assert hub.read() == []
    metrics.record_acknowledged("g", "A.t", 1, [9_000, 9_500])
    got = values(hub, CHECKPOINT_GROUP, group="g", topic="A.t", partition="1")
    assert got == {
        "checkpoint-latency-ms": 500.0,
        "checkpoint-latency-ms-max": 1000.0,
        "checkpoint-latency-ms-min": 500.0,
        "checkpoint-latency-ms-avg": 750.0,
    }
    name = next(r.name for r in hub.read())
    assert [k for k, _ in name.tags] == ["source", "target", "group", "topic", "partition"]


class FakeConsumer:
    def __init__(self, batch: dict[TopicPartition, list[Any]]) -> None:
        self.batch = batch

    async def poll(self, timeout_ms: int) -> dict[TopicPartition, list[Any]]:
        return self.batch


def message(offset: int, timestamp: int, value: bytes | None) -> SimpleNamespace:
    return SimpleNamespace(
        offset=offset,
        timestamp=timestamp,
        key=None,
        value=value,
        headers=(),
        serialized_value_size=-1 if value is None else len(value),
    )


async def test_source_task_records_per_polled_and_acknowledged_batch() -> None:
    hub, clock = hub_at(50.0)
    task = MirrorSourceTask()
    task._source_alias = "A"
    task._policy = DefaultReplicationPolicy()
    task._poll_timeout_ms = 1
    task._metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0), ("A.t", 1)])
    task._consumer = FakeConsumer(  # type: ignore[assignment]
        {
            TopicPartition("t", 0): [message(5, 49_000, b"abc"), message(6, 49_500, None)],
            TopicPartition("t", 1): [message(0, 48_000, b"hello")],
        },
    )
    records = await task.poll()
    assert records is not None and len(records) == 3
    p0 = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert (p0["byte-count"], p0["record-age-ms"], p0["record-age-ms-max"]) == (3.0, 500.0, 1000.0)
    p1 = values(hub, SOURCE_GROUP, topic="A.t", partition="1")
    assert (p1["record-age-ms-avg"], p1["byte-count"]) == (2000.0, 5.0)

    clock.now_s = 51.0
    task.commit_record_batch(records[:2], "A.t", 0, 100)  # no offset-sync writer: still counted
    p0 = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert p0["record-count"] == 2.0
    assert (p0["replication-latency-ms-min"], p0["replication-latency-ms-max"]) == (1500.0, 2000.0)
    await task.stop()
    assert hub.registries() == []


async def test_source_task_keys_acknowledgements_by_the_polled_record_and_dropped_ones_count_nothing() -> (
    None
):
    hub, clock = hub_at(50.0)
    task = MirrorSourceTask()
    task._source_alias = "A"
    task._policy = DefaultReplicationPolicy()
    task._poll_timeout_ms = 1
    task._metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)])
    task._consumer = FakeConsumer(  # type: ignore[assignment]
        {
            TopicPartition("t", 0): [
                message(5, 49_000, b"a"),
                message(6, 49_200, b"b"),
                message(7, 49_400, b"c"),
            ]
        }
    )
    records = await task.poll()
    assert records is not None
    clock.now_s = 50.5
    task.commit_record_batch(records[:2], "renamed-by-a-transformation", 3, 0)
    await task.commit_record(records[2], None)  # filtered out: not written, but its batch is done
    p0 = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert p0["record-count"] == 2.0
    assert (p0["replication-latency-ms-min"], p0["replication-latency-ms-max"]) == (1100.0, 1500.0)
    assert not [r for r in hub.read() if r.name.tag("topic") == "renamed-by-a-transformation"]
    await task.stop()


async def test_checkpoint_task_records_acknowledged_checkpoints() -> None:
    hub, _ = hub_at(20.0)
    task = MirrorCheckpointTask()
    task._metrics = MirrorCheckpointMetrics(hub, "A", "B")

    def checkpoint(group: str, partition: int, timestamp: int) -> SourceRecord:
        wrapped = {"partition": partition, "topic": "A.t", "group": group}
        return SourceRecord(wrapped, {"offset": 0}, "A.checkpoints.internal", 0, timestamp=timestamp)

    task.commit_record_batch(
        [checkpoint("g1", 0, 19_000), checkpoint("g2", 0, 19_800), checkpoint("g1", 0, 19_600)],
        "A.checkpoints.internal",
        0,
        7,
    )
    g1 = values(hub, CHECKPOINT_GROUP, group="g1", topic="A.t", partition="0")
    assert g1["checkpoint-latency-ms"] == 400.0 and g1["checkpoint-latency-ms-avg"] == 700.0
    assert values(hub, CHECKPOINT_GROUP, group="g2")["checkpoint-latency-ms-max"] == 200.0
    await task.stop()
    assert hub.registries() == []


def test_worker_exposition_gives_the_mirror_maker_2_dashboard_series() -> None:
    hub, _ = hub_at(100.0)
    source = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)])
    source.record_polled("A.t", 0, [99_000], 10, last_offset=0)
    source.record_acknowledged("A.t", 0, 1, last_offset=0)
    MirrorCheckpointMetrics(hub, "A", "B").record_acknowledged("g", "A.t", 0, [99_500])
    text = PrometheusExposition(hub, "worker").render()
    series = {line.split("{")[0] for line in text.splitlines() if not line.startswith("#")}
    prefix = "kafka_connect_mirror_mirrorsourceconnector_"
    for name in (
        "record_count",
        "record_rate",
        "byte_rate",
        "byte_count",
        "record_age_ms",
        "record_age_ms_avg",
        "record_age_ms_min",
        "record_age_ms_max",
        "replication_latency_ms",
        "replication_latency_ms_avg",
        "replication_latency_ms_min",
        "replication_latency_ms_max",
    ):
        assert prefix + name in series
    for suffix in ("", "_avg", "_min", "_max"):
        assert "kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms" + suffix in series
    assert (
        'kafka_connect_mirror_mirrorsourceconnector_record_count{source="A",target="B",topic="A.t",'
        'partition="0"} 1.0'
    ) in text
    assert (
        'kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms{source="A",target="B",'
        'group="g",topic="A.t",partition="0"} 500.0'
    ) in text
    # The Connect rules alone export none of them.
    assert "kafka_connect_mirror" not in PrometheusExposition(hub, "connect").render()


def test_truncation_counts_per_partition_and_restarts_the_lag() -> None:
    hub, _ = hub_at()
    ends = {("A.t", 0): 300, ("A.t", 1): 40}
    metrics = MirrorSourceMetrics(
        hub, "A", "B", [("A.t", 0), ("A.t", 1)], end_offset=lambda t, p: ends[(t, p)]
    )
    metrics.resumed("A.t", 0, 99)
    metrics.truncated("A.t", 0, 50, 150)
    metrics.truncated("A.t", 0, 7, 157)
    metrics.truncated("A.t", 1, 0, 0)

    def value(name: str, partition: int) -> object:
        return next(
            r.value
            for m in hub.registries()
            for r in m.read()
            if r.name.name == name and r.name.tag("partition") == str(partition)
        )

    assert value("truncated-record-count", 0) == 57
    assert value("truncation-count", 0) == 2
    assert value("truncated-record-count", 1) == 0
    assert value("truncation-count", 1) == 1
    assert value("replicated-offset", 0) == 156, "the lag restarts at the resume offset"
    metrics.close()


def test_a_truncation_drops_the_polled_batches_waiting_so_latency_resumes_on_a_recreated_topic() -> None:
    hub, _ = hub_at(100.0)
    metrics = MirrorSourceMetrics(hub, "A", "B", [("A.t", 0)])
    metrics.record_polled("A.t", 0, [99_000], 1, last_offset=500)  # never acknowledged: the topic went
    metrics.truncated("A.t", 0, 0, 0)  # recreated: offsets start over
    metrics.record_polled("A.t", 0, [99_500], 1, last_offset=0)
    metrics.record_acknowledged("A.t", 0, 1, last_offset=0)
    got = values(hub, SOURCE_GROUP, topic="A.t", partition="0")
    assert got["replication-latency-ms-avg"] == 500.0  # the new batch's, not blocked behind offset 500
