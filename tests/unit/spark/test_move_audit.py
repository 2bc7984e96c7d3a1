"""The closing audit of failback and cutover (spark_analytics.move_audit) on hand-made frames in a local
Spark session (no Kafka): the window leaves out what came after it on either cluster, the records B lacks
are counted with their offsets, and the verdict (connectors.mirror.failback.proof.judge) holds the
orphans to their recorded range."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from connectors.mirror.failback.ledger import OrphanRange
from connectors.mirror.failback.proof import AuditBounds, AuditRequest, GroupPosition, judge
from spark_analytics.flow_audit import audit_flow
from spark_analytics.group_offsets import CommittedPosition
from spark_analytics.kafka_frames import HEADERS_TYPE
from spark_analytics.move_audit import bounded, cluster_of, observation_of
from spark_analytics.progress import Progress
from spark_analytics.session import local_spark
from spark_analytics.snapshot import FlowFrames

RECORDS = (
    f"topic string, partition int, offset bigint, key binary, value binary, headers {HEADERS_TYPE}, "
    "timestamp_ms bigint"
)
RAW = "key binary, value binary, topic string, partition int, offset bigint"


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with local_spark("pyconnect-unit-tests") as session:
        yield session


def records(spark: SparkSession, contents: list[tuple[int, str]]) -> DataFrame:
    rows = [("orders", 0, offset, b"k", value.encode(), [], 1_000) for offset, value in contents]
    return spark.createDataFrame(rows, RECORDS)


def request(window: AuditBounds, orphans: dict[tuple[str, int], OrphanRange]) -> AuditRequest:
    return AuditRequest(
        command="failback",
        source="A",
        target="B",
        source_config={"bootstrap.servers": "a:9092"},
        target_config={"bootstrap.servers": "b:9092"},
        policy_config={},
        offset_syncs_on_target=True,
        offset_syncs_topic="mm2-offset-syncs.A.internal",
        checkpoints_topic="A.checkpoints.internal",
        remote_topics={"orders": "orders"},
        bounds=window,
        groups=("g",),
        positions=(GroupPosition("g", "orders", 0, 10, 8),),
        out_dir="unused",
        expected=orphans,
    )


def audit(spark: SparkSession, frames: FlowFrames, req: AuditRequest) -> Any:
    positions = [
        CommittedPosition(p.group, p.topic, p.partition, p.source_offset, p.target_offset)
        for p in req.positions
    ]
    report = audit_flow(
        spark,
        bounded(frames, req),
        flow="A->B",
        source_alias="A",
        target_alias="B",
        remote_topics=req.remote_topics,
        offset_syncs_topic=req.offset_syncs_topic,
        checkpoints_topic=req.checkpoints_topic,
        group_wanted=lambda found: sorted(found),
        sample=5,
        allow_lag=False,
        origin="frames",
        progress=Progress(None),
        committed=lambda _groups: (positions, None),
    )
    return observation_of(report, ())


def round_trip(spark: SparkSession) -> FlowFrames:
    """A: a0..a4 copied, the orphans a5 a6, the copies back b0..b2, then n0 after the window.
    B: a0..a4, the applications' b0..b2, then n0 and a stray record after the window."""
    on_a = [*[(i, f"a{i}") for i in range(7)], (7, "b0"), (8, "b1"), (9, "b2"), (10, "n0")]
    on_b = [*[(i, f"a{i}") for i in range(5)], (5, "b0"), (6, "b1"), (7, "b2"), (8, "n0"), (9, "stray")]
    empty = spark.createDataFrame([], RAW)
    return FlowFrames(records(spark, on_a), records(spark, on_b), empty, empty)


def test_the_round_trip_within_its_window_misses_exactly_the_orphans(spark: SparkSession) -> None:
    window = AuditBounds({"orders:0": 10}, {"orders:0": 8}, {0: 0}, {0: 0})
    req = request(window, {("orders", 0): OrphanRange("orders", 0, 5, 6, 2)})
    observation = audit(spark, round_trip(spark), req)
    (counts,) = observation.partitions
    assert (counts.source_count, counts.target_count, counts.a_only, counts.b_only) == (10, 8, 2, 0)
    assert (counts.a_only_first, counts.a_only_last) == (5, 6)
    assert observation.groups == {"g": {"partitions": 1, "reread": 0, "skipped": 0, "violations": 0}}
    verdict = judge(req, observation)
    assert verdict.ok, verdict.line


def test_a_wider_window_or_other_orphans_are_findings(spark: SparkSession) -> None:
    wide = AuditBounds({"orders:0": 11}, {"orders:0": 10}, {0: 0}, {0: 0})
    req = request(wide, {("orders", 0): OrphanRange("orders", 0, 5, 6, 2)})
    verdict = judge(req, audit(spark, round_trip(spark), req))
    assert not verdict.ok and "1 records on B that A lacks" in verdict.line, verdict.line
    window = AuditBounds({"orders:0": 10}, {"orders:0": 8}, {0: 0}, {0: 0})
    elsewhere = request(window, {("orders", 0): OrphanRange("orders", 0, 4, 5, 2)})
    verdict = judge(elsewhere, audit(spark, round_trip(spark), elsewhere))
    assert not verdict.ok and "lie at 5..6, the orphans at 4..5" in verdict.line, verdict.line


def test_the_clusters_are_read_committed_with_the_flows_client_settings() -> None:
    cluster = cluster_of(
        {"bootstrap.servers": "a:9092", "security.protocol": "SSL", "consumer.max.poll.records": "5"}, 12.0
    )
    assert cluster.bootstrap_servers == "a:9092" and cluster.timeout_s == 12.0
    assert dict(cluster.properties) == {"security.protocol": "SSL", "isolation.level": "read_committed"}
