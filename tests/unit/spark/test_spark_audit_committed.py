"""The translation audit of committed group offsets, and duplicates judged by the flow's promise, on
hand-made DataFrames in a local Spark session (no Kafka)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from spark_analytics.flow_audit import AT_LEAST_ONCE, EXACTLY_ONCE, FlowReport
from spark_analytics.group_offsets import (
    CommittedPosition,
    committed_positions,
    positions_from_json,
    positions_to_json,
)
from spark_analytics.replication_audit import audit_replication_frames
from spark_analytics.session import local_spark
from spark_analytics.translation_audit import audit_translation_frames
from tests.unit.spark.test_spark_audit_frames import frame, numbered, raw_checkpoints, raw_syncs


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with local_spark("pyconnect-unit-tests-committed") as session:
        yield session


def test_positions_pair_the_audited_partitions_committed_on_both_clusters() -> None:
    source = {"g": {("t", 0): 5, ("t", 1): 7, ("other", 0): 1}, "h": {("t", 0): 3}}
    target = {"g": {("A.t", 0): 5, ("other", 0): 1}, "h": {}}
    found = committed_positions(["h", "g"], source, target, {"t": "A.t"})
    assert found == [CommittedPosition("g", "t", 0, 5, 5)]
    assert positions_from_json(positions_to_json(found)) == found


def test_committed_target_offsets_are_judged_like_checkpoints(spark: SparkSession) -> None:
    # Contents 0..9; the target holds them at 0..4 and 6..10 (a transaction marker at 5).
    source = frame(spark, numbered(0, range(10)))
    target = frame(spark, numbered(0, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]))
    positions = [
        CommittedPosition("exact", "t", 0, 7, 8),  # the copy of 7 is at 8
        CommittedPosition("on-the-marker", "t", 0, 5, 5),  # the marker before the copy of 5: nothing re-read
        CommittedPosition("behind", "t", 0, 7, 6),  # re-reads the copies of 5 and 6
        CommittedPosition("ahead", "t", 0, 3, 6),  # skips the copies of 3 and 4
    ]
    audit = audit_translation_frames(
        source, target, raw_syncs(spark, []), raw_checkpoints(spark, []), {"t": "A.t"}, committed=positions
    )
    judged = {c.group: (c.true_position, c.reread, c.skipped, c.violation) for c in audit.committed.checks}
    assert judged == {
        "exact": (8, 0, 0, False),
        "on-the-marker": (6, 0, 0, False),
        "behind": (8, 2, 0, False),
        "ahead": (3, 0, 2, True),
    }
    assert audit.committed.violations == 1 and not audit.ok()
    assert audit.committed.by_group()["behind"] == {
        "partitions": 1,
        "reread": 2,
        "skipped": 0,
        "violations": 0,
    }
    assert "VIOLATION group ahead committed 6 on A.t-0" in audit.render()
    assert audit.to_json()["committed_offsets"]["violations"] == 1

    unread = audit_translation_frames(
        source,
        target,
        raw_syncs(spark, []),
        raw_checkpoints(spark, []),
        {"t": "A.t"},
        committed_note="A is down",
    )
    assert (
        unread.ok() and unread.committed.note == "A is down" and "none checked (A is down)" in unread.render()
    )


def test_duplicates_are_a_finding_only_when_the_flow_runs_exactly_once(spark: SparkSession) -> None:
    source = frame(spark, numbered(0, range(6)))
    target = frame(spark, numbered(0, range(6)) + numbered(0, range(6, 8), 4))  # 4 and 5 copied twice
    replication = audit_replication_frames(source, target, {"t": "A.t"}, source_alias="A")
    translation = audit_translation_frames(
        source, target, raw_syncs(spark, []), raw_checkpoints(spark, []), {"t": "A.t"}
    )

    def report(delivery: str) -> FlowReport:
        return FlowReport(
            "A->B", "A", "B", {"t": "A.t"}, [], {}, replication, translation, False, 1.0, "test", delivery
        )

    lenient, strict = report(AT_LEAST_ONCE), report(EXACTLY_ONCE)
    assert lenient.ok() and lenient.verdict() == "flow A->B: PASS (2 duplicates, allowed by at-least-once)"
    assert not strict.ok()
    assert (
        strict.verdict() == "flow A->B: FINDINGS: 2 duplicates on the target of a flow that runs exactly-once"
    )
    assert strict.to_json()["delivery"] == EXACTLY_ONCE
