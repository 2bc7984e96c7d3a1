"""Committed group offsets for the translation audit: what each group committed on the source and on the
target, paired per partition (the target offset of a failed-over or synced group against its source
position).

Contract:

- :func:`committed_group_offsets` asks the Kafka admin client in Spark's JVM (the client and properties the
  audit reads records with) for each group's committed offsets: ``{group: {(topic, partition): offset}}``,
  partitions without an offset left out. Raises on an unreachable cluster.
- :func:`committed_positions` (pure) pairs them: a :class:`CommittedPosition` for each audited source
  partition a group committed on both clusters (the target side under the remote topic's name).
- :func:`positions_to_json` / :func:`positions_from_json` keep them in a snapshot's manifest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import SparkSession

from spark_analytics.kafka_frames import KafkaCluster, client_properties

Offsets = dict[tuple[str, int], int]


@dataclass(frozen=True)
class CommittedPosition:
    """Group ``group`` committed ``source_offset`` on source partition ``topic-partition`` and
    ``target_offset`` on its remote partition."""

    group: str
    topic: str
    partition: int
    source_offset: int
    target_offset: int


def committed_group_offsets(
    spark: SparkSession, cluster: KafkaCluster, groups: Sequence[str]
) -> dict[str, Offsets]:
    """Each group's committed offsets on ``cluster`` (see the module contract)."""
    if not groups:
        return {}
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    props = jvm.java.util.Properties()
    for name, value in client_properties(cluster).items():
        props.setProperty(name, value)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
    timeout_ms = max(1000, int(cluster.timeout_s * 1000))
    unit = jvm.java.util.concurrent.TimeUnit.MILLISECONDS
    found: dict[str, Offsets] = {}
    try:
        for group in groups:
            answer = (
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(timeout_ms, unit)
            )
            offsets: Offsets = {}
            for tp, committed in answer.items():
                if committed is not None and committed.offset() >= 0:
                    offsets[(str(tp.topic()), int(tp.partition()))] = int(committed.offset())
            found[group] = offsets
    finally:
        admin.close()
    return found


def committed_positions(
    groups: Iterable[str],
    source: Mapping[str, Offsets],
    target: Mapping[str, Offsets],
    remote_topics: Mapping[str, str],
) -> list[CommittedPosition]:
    """The pairs of committed offsets of the audited topics (see the module contract), sorted."""
    found = []
    for group in sorted(set(groups)):
        on_target = target.get(group, {})
        for (topic, partition), offset in source.get(group, {}).items():
            remote = remote_topics.get(topic)
            if remote is None or (remote, partition) not in on_target:
                continue
            found.append(CommittedPosition(group, topic, partition, offset, on_target[(remote, partition)]))
    return sorted(found, key=lambda p: (p.group, p.topic, p.partition))


def read_positions(
    spark: SparkSession,
    source: KafkaCluster,
    target: KafkaCluster,
    groups: Sequence[str],
    remote_topics: Mapping[str, str],
) -> tuple[list[CommittedPosition] | None, str | None]:
    """``(positions, note)``: :func:`committed_positions` read from both clusters, or ``None`` and why not
    (a cluster that does not answer is a note: the audit of the records goes on)."""
    try:
        on_source = committed_group_offsets(spark, source, groups)
        on_target = committed_group_offsets(spark, target, groups)
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        return None, f"committed group offsets not read: {lines[0] if lines else type(exc).__name__}"
    return committed_positions(groups, on_source, on_target, remote_topics), None


def positions_to_json(positions: Sequence[CommittedPosition]) -> list[dict[str, Any]]:
    return [asdict(p) for p in positions]


def positions_from_json(rows: Iterable[Mapping[str, Any]]) -> list[CommittedPosition]:
    return [
        CommittedPosition(
            str(r["group"]),
            str(r["topic"]),
            int(r["partition"]),
            int(r["source_offset"]),
            int(r["target_offset"]),
        )
        for r in rows
    ]
