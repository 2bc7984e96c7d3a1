"""Replication audit: did MirrorMaker 2 copy every source record to the remote topic, once and intact?

:func:`audit_replication` compares a source topic with its remote topic on the target (named by the
replication policy) by content (see :mod:`spark_analytics.copies`) and reports, per partition: source
and target record counts, *missing* records (on the source, no copy on the target), *duplicates*
(extra copies of a source record), *mismatches* (target records that copy no source record) and
*reordered* copies (out of the source's order), plus a sample of the offending records. ``missing_tail`` counts the missing records that come after the last
copied record of their partition: what a running mirror has not copied yet (or lost at the very end);
``missing_head`` those before the first copied record: what a mirror that started mid-stream never
copied (or lost at the start). Both still count as missing.

It is a point-in-time comparison of two reads taken a moment apart: audit a quiet topic, or accept the
tail as lag (``ok(allow_lag=True)``). ``offset_buckets`` places the offending records along each
partition's offsets (:data:`OFFSET_BUCKETS` equal ranges, source offsets for missing records, target
offsets for the others): a bounded summary for plots, whatever the number of records. Duplicates are within MirrorMaker 2's at-least-once contract and
never make the audit fail; missing records, mismatches and reordered copies do.

:func:`audit_replication_frames` holds the logic over DataFrames (tests feed it small frames);
:func:`run_replication_audit` reads both clusters with Spark's Kafka source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_analytics import copies
from spark_analytics.kafka_frames import KafkaCluster, read_records
from spark_analytics.samples import SampledRecord, sample_records
from spark_analytics.tables import format_table

DEFAULT_SAMPLE = 10
OFFSET_BUCKETS = 40
COUNTS = (
    "source_count",
    "target_count",
    "missing",
    "missing_head",
    "missing_tail",
    "duplicates",
    "mismatches",
    "reordered",
)
"""The counted fields of :class:`PartitionReport`, in table order."""


@dataclass(frozen=True)
class PartitionReport:
    """One partition of one mirrored topic (``topic`` is the source name, ``remote_topic`` the target's)."""

    topic: str
    remote_topic: str
    partition: int
    source_count: int
    target_count: int
    missing: int
    missing_tail: int
    duplicates: int
    mismatches: int
    reordered: int = 0
    missing_head: int = 0

    @property
    def clean(self) -> bool:
        return self.missing == 0 and self.duplicates == 0 and self.mismatches == 0 and self.reordered == 0


@dataclass(frozen=True)
class OffsetBucket:
    """``count`` offending records of one ``kind`` with offsets in ``[first, last]`` of one partition."""

    topic: str
    partition: int
    kind: str
    bucket: int
    width: int
    first: int
    last: int
    count: int


@dataclass(frozen=True)
class ReplicationAudit:
    """The audit of some topics: one :class:`PartitionReport` per partition seen on either side."""

    source_alias: str
    remote_topics: dict[str, str]
    partitions: list[PartitionReport]
    samples: list[SampledRecord] = field(default_factory=list)
    offset_buckets: list[OffsetBucket] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(int(getattr(p, name)) for p in self.partitions)

    @property
    def empty_topics(self) -> list[str]:
        """Audited topics with no record on either side (or that do not exist)."""
        seen = {p.topic for p in self.partitions}
        return sorted(t for t in self.remote_topics if t not in seen)

    def ok(self, *, allow_lag: bool = False) -> bool:
        """No mismatches, no reordered copies and no missing records (``allow_lag``: except the
        not-yet-copied tail)."""
        missing = self.total("missing") - (self.total("missing_tail") if allow_lag else 0)
        return missing == 0 and self.total("mismatches") == 0 and self.total("reordered") == 0

    def to_json(self) -> dict[str, Any]:
        totals = {name: self.total(name) for name in COUNTS}
        return {
            "source_alias": self.source_alias,
            "remote_topics": self.remote_topics,
            "ok": self.ok(),
            "totals": totals,
            "empty_topics": self.empty_topics,
            "partitions": [asdict(p) for p in self.partitions],
            "samples": [s.to_json() for s in self.samples],
            "offset_bucket_count": OFFSET_BUCKETS,
            "offset_buckets": [asdict(b) for b in self.offset_buckets],
        }

    def render(self) -> str:
        """A readable table of the partitions, the totals and the sample."""
        header = (
            "topic",
            "remote topic",
            "part",
            "source",
            "target",
            "missing",
            "head",
            "tail",
            "dups",
            "mismatch",
            "reorder",
        )
        rows = [
            (p.topic, p.remote_topic, p.partition, *(getattr(p, n) for n in COUNTS)) for p in self.partitions
        ]
        totals = ("total", "", "", *(self.total(n) for n in COUNTS))
        lines = [format_table(header, [*rows, totals])]
        for topic in self.empty_topics:
            lines.append(f"no records on either side for {topic} -> {self.remote_topics[topic]}")
        if self.samples:
            lines.append("")
            lines.append("sample of offending records:")
            lines.extend(f"  {s.describe()}" for s in self.samples)
        verdict = "OK" if self.ok() else "FAILED"
        if not self.ok() and self.ok(allow_lag=True):
            verdict += " (only the not-yet-copied tail is missing: lag?)"
        lines.append(f"replication audit: {verdict}")
        return "\n".join(lines)


def audit_replication_frames(
    source: DataFrame,
    target: DataFrame,
    remote_topics: Mapping[str, str],
    *,
    source_alias: str = "",
    sample: int = DEFAULT_SAMPLE,
    digested: tuple[DataFrame, DataFrame] | None = None,
) -> ReplicationAudit:
    """Audit already-read records. ``target``'s ``topic`` column must hold the *source* topic names
    (see :func:`spark_analytics.kafka_frames.read_records` ``rename``). ``digested``: the
    :func:`spark_analytics.copies.digests` of ``source`` and ``target`` when the caller already has
    them (e.g. cached for both audits of a flow); the records themselves are then read only for the
    sample of offending records."""
    source_digests, target_digests = digested or (copies.digests(source), copies.digests(target))
    matched = copies.match_copies(source_digests, target_digests).cache()
    try:
        paired = copies.paired_offsets(matched)
        left = copies.leftovers(matched).unionByName(copies.reordered(paired))
        keys = ["topic", "partition"]
        counts = matched.groupBy(*keys).agg(
            F.sum(F.size("source_offsets")).alias("source_count"),
            F.sum(F.size("target_offsets")).alias("target_count"),
        )
        last_copied = paired.groupBy(*keys).agg(
            F.max("source_offset").alias("last_copied"), F.min("source_offset").alias("first_copied")
        )
        kinds = (
            left.join(last_copied, keys, "left")
            .groupBy(*keys)
            .agg(
                F.sum(F.when(F.col("kind") == copies.MISSING, 1).otherwise(0)).alias("missing"),
                F.sum(
                    F.when(
                        (F.col("kind") == copies.MISSING)
                        & (F.col("last_copied").isNull() | (F.col("offset") > F.col("last_copied"))),
                        1,
                    ).otherwise(0)
                ).alias("missing_tail"),
                F.sum(
                    F.when(
                        (F.col("kind") == copies.MISSING) & (F.col("offset") < F.col("first_copied")), 1
                    ).otherwise(0)
                ).alias("missing_head"),
                F.sum(F.when(F.col("kind") == copies.DUPLICATE, 1).otherwise(0)).alias("duplicates"),
                F.sum(F.when(F.col("kind") == copies.MISMATCH, 1).otherwise(0)).alias("mismatches"),
                F.sum(F.when(F.col("kind") == copies.REORDERED, 1).otherwise(0)).alias("reordered"),
            )
        )
        rows = counts.join(kinds, keys, "left").fillna(0).orderBy(*keys).collect()
        reports = [
            PartitionReport(
                topic=r["topic"],
                remote_topic=remote_topics.get(r["topic"], r["topic"]),
                partition=int(r["partition"]),
                source_count=int(r["source_count"]),
                target_count=int(r["target_count"]),
                missing=int(r["missing"]),
                missing_tail=int(r["missing_tail"]),
                duplicates=int(r["duplicates"]),
                mismatches=int(r["mismatches"]),
                reordered=int(r["reordered"]),
                missing_head=int(r["missing_head"]),
            )
            for r in rows
        ]
        buckets = _offset_buckets(matched, left) if any(not r.clean for r in reports) else []
        samples: list[SampledRecord] = []
        if sample > 0 and any(not r.clean for r in reports):
            order = ("kind", "topic", "partition", "offset")
            first = left.orderBy(*order).limit(sample)
            offending = copies.next_copies(first, paired).orderBy(*order)
            samples = sample_records(offending, source, target, remote_topics)
    finally:
        matched.unpersist()
    return ReplicationAudit(source_alias, dict(remote_topics), reports, samples, buckets)


def _offset_buckets(matched: DataFrame, left: DataFrame) -> list[OffsetBucket]:
    keys = ["topic", "partition"]
    top = F.greatest(
        F.coalesce(F.max(F.array_max("source_offsets")), F.lit(-1)),
        F.coalesce(F.max(F.array_max("target_offsets")), F.lit(-1)),
    )
    ranges = matched.groupBy(*keys).agg(
        F.greatest(F.lit(1), F.ceil((top + 1) / F.lit(OFFSET_BUCKETS))).cast("bigint").alias("width")
    )
    rows = (
        left.join(ranges, keys)
        .withColumn("bucket", F.floor(F.col("offset") / F.col("width")).cast("bigint"))
        .groupBy(*keys, "kind", "bucket", "width")
        .agg(F.min("offset").alias("first"), F.max("offset").alias("last"), F.count("*").alias("n"))
        .orderBy(*keys, "kind", "bucket")
        .collect()
    )
    return [
        OffsetBucket(
            r["topic"],
            int(r["partition"]),
            r["kind"],
            int(r["bucket"]),
            int(r["width"]),
            int(r["first"]),
            int(r["last"]),
            int(r["n"]),
        )
        for r in rows
    ]


def run_replication_audit(
    spark: SparkSession,
    source: KafkaCluster,
    target: KafkaCluster,
    remote_topics: Mapping[str, str],
    *,
    source_alias: str = "",
    sample: int = DEFAULT_SAMPLE,
) -> ReplicationAudit:
    """Read ``remote_topics`` (source name -> remote name) from both clusters and audit them."""
    source_records = read_records(spark, source, list(remote_topics))
    target_records = read_records(
        spark, target, list(remote_topics.values()), rename={r: s for s, r in remote_topics.items()}
    )
    return audit_replication_frames(
        source_records, target_records, remote_topics, source_alias=source_alias, sample=sample
    )


def dumps(audit: ReplicationAudit) -> str:
    return json.dumps(audit.to_json(), indent=2, sort_keys=False)
