"""Replication audit: did MirrorMaker 2 copy every source record to the remote topic, once and intact?

:func:`audit_replication` compares a source topic with its remote topic on the target (named by the
replication policy) by content (see :mod:`spark_analytics.copies`) and reports, per partition: source
and target record counts, *missing* records (on the source, no copy on the target), *duplicates*
(extra copies of a source record), *mismatches* (target records that copy no source record) and
*reordered* copies (out of the source's order), plus a sample of the offending records. ``missing_tail`` counts the missing records that come after the last
copied record of their partition: what a running mirror has not copied yet (or lost at the very end);
``missing_head`` those before the first copied record: what a mirror that started mid-stream never
copied (or lost at the start). Both still count as missing.

Retention on either side is no loss (see :mod:`spark_analytics.retention` for the rule): target records
that copy source records the source's retention already deleted are left out of the matching and
counted as ``unverifiable_source_retention`` (with their target offsets), and the missing-head source
records whose copies the target's own retention may have deleted as ``unverifiable_target_retention``
(with their source offsets); neither makes the audit fail, :meth:`ReplicationAudit.retention_note`
says what could not be checked.

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

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from spark_analytics import copies, retention
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
    "unverifiable_source_retention",
    "unverifiable_target_retention",
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
    unverifiable_source_retention: int = 0
    """Target records (before the copy of the source's first record) copying records the source deleted."""
    unverifiable_target_retention: int = 0
    """Source records missing at the head whose copies the target's retention may have deleted."""
    source_retention_offsets: tuple[int, int] | None = None
    """``[first, last]`` target offsets of the ``unverifiable_source_retention`` records."""
    target_retention_offsets: tuple[int, int] | None = None
    """``[first, last]`` source offsets of the ``unverifiable_target_retention`` records."""

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

    def retention_note(self) -> str | None:
        """What retention left unverifiable (not a finding), or ``None`` when nothing."""
        parts = []
        if self.total("unverifiable_source_retention"):
            parts.append(
                f"{self.total('unverifiable_source_retention')} target records copy source records "
                "deleted by the source's retention"
            )
        if self.total("unverifiable_target_retention"):
            parts.append(
                f"{self.total('unverifiable_target_retention')} source records' copies deleted by the "
                "target's retention"
            )
        return f"unverifiable: {'; '.join(parts)}" if parts else None

    def to_json(self) -> dict[str, Any]:
        totals = {name: self.total(name) for name in COUNTS}
        return {
            "source_alias": self.source_alias,
            "remote_topics": self.remote_topics,
            "ok": self.ok(),
            "totals": totals,
            "empty_topics": self.empty_topics,
            "retention_note": self.retention_note(),
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
            "src-retention",
            "tgt-retention",
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
        note = self.retention_note()
        if note:
            verdict += f" ({note})"
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
    everything = copies.match_copies(source_digests, target_digests).cache()
    try:
        keys = ["topic", "partition"]
        spark = source.sparkSession
        heads = _head_facts(everything)
        cuts = {k: retention.source_retention_cut(f) for k, f in heads.items()}
        allowances = {k: retention.target_retention_allowance(f) for k, f in heads.items()}
        matched, cut_counts = _cut_target_heads(spark, everything, {k: c for k, c in cuts.items() if c > 0})
        paired = copies.paired_offsets(matched)
        left = copies.leftovers(matched).unionByName(copies.reordered(paired))
        counts = matched.groupBy(*keys).agg(
            F.sum(F.size("source_offsets")).alias("source_count"),
            F.sum(F.size("target_offsets")).alias("target_count"),
        )
        last_copied = paired.groupBy(*keys).agg(
            F.max("source_offset").alias("last_copied"), F.min("source_offset").alias("first_copied")
        )
        left, head_counts = _spare_target_heads(
            spark, left, last_copied, {k: a for k, a in allowances.items() if a > 0}
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
                target_count=int(r["target_count"])
                + cut_counts.get((r["topic"], r["partition"]), (0, None))[0],
                missing=int(r["missing"]),
                missing_tail=int(r["missing_tail"]),
                duplicates=int(r["duplicates"]),
                mismatches=int(r["mismatches"]),
                reordered=int(r["reordered"]),
                missing_head=int(r["missing_head"]),
                unverifiable_source_retention=cut_counts.get((r["topic"], r["partition"]), (0, None))[0],
                unverifiable_target_retention=head_counts.get((r["topic"], r["partition"]), (0, None))[0],
                source_retention_offsets=cut_counts.get((r["topic"], r["partition"]), (0, None))[1],
                target_retention_offsets=head_counts.get((r["topic"], r["partition"]), (0, None))[1],
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
        everything.unpersist()
    return ReplicationAudit(source_alias, dict(remote_topics), reports, samples, buckets)


Partition = tuple[str, int]
Range = tuple[int, tuple[int, int] | None]


def _head_facts(matched: DataFrame) -> dict[Partition, retention.HeadFacts]:
    """The :class:`~spark_analytics.retention.HeadFacts` of every partition (one small aggregate)."""
    source_first = F.array_min("source_offsets")
    rows = (
        matched.groupBy("topic", "partition")
        .agg(
            F.min(source_first).alias("source_first"),
            F.min(F.array_min("target_offsets")).alias("target_first"),
            F.min_by(F.array_min("target_offsets"), source_first).alias("first_copy"),
        )
        .collect()
    )

    def number(value: Any) -> int | None:
        return None if value is None else int(value)

    return {
        (r["topic"], int(r["partition"])): retention.HeadFacts(
            number(r["source_first"]), number(r["target_first"]), number(r["first_copy"])
        )
        for r in rows
    }


def _cut_target_heads(
    spark: SparkSession, matched: DataFrame, cuts: Mapping[Partition, int]
) -> tuple[DataFrame, dict[Partition, Range]]:
    """``matched`` without the target offsets below each partition's cut, and per cut partition the count
    and ``(first, last)`` of the offsets left out."""
    if not cuts:
        return matched, {}
    keys = ["topic", "partition"]
    cut_frame = F.broadcast(
        spark.createDataFrame(
            [(t, p, c) for (t, p), c in cuts.items()], "topic string, partition int, cut bigint"
        )
    )
    marked = matched.join(cut_frame, keys, "left").withColumn("cut", F.coalesce("cut", F.lit(0)))
    below = F.filter("target_offsets", lambda t: t < F.col("cut"))
    rows = (
        marked.where(F.col("cut") > 0)
        .groupBy(*keys)
        .agg(
            F.sum(F.size(below)).alias("n"),
            F.min(F.array_min(below)).alias("first"),
            F.max(F.array_max(below)).alias("last"),
        )
        .collect()
    )
    counts: dict[Partition, Range] = {
        (r["topic"], int(r["partition"])): (int(r["n"]), (int(r["first"]), int(r["last"])))
        for r in rows
        if r["n"]
    }
    kept = marked.withColumn("target_offsets", F.filter("target_offsets", lambda t: t >= F.col("cut")))
    kept = kept.where((F.size("source_offsets") > 0) | (F.size("target_offsets") > 0)).drop("cut")
    return kept, counts


def _spare_target_heads(
    spark: SparkSession, left: DataFrame, last_copied: DataFrame, allowances: Mapping[Partition, int]
) -> tuple[DataFrame, dict[Partition, Range]]:
    """``left`` without, per partition, the last ``allowance`` missing records before the first copied
    one (their copies may be gone with the target's retention), and their count and source offsets."""
    if not allowances:
        return left, {}
    keys = ["topic", "partition"]
    allowed = F.broadcast(
        spark.createDataFrame(
            [(t, p, a) for (t, p), a in allowances.items()], "topic string, partition int, allowance bigint"
        )
    )
    latest_first = Window.partitionBy(*keys).orderBy(F.col("offset").desc())
    spared = (
        left.where(F.col("kind") == copies.MISSING)
        .join(last_copied, keys)
        .where(F.col("offset") < F.col("first_copied"))
        .join(allowed, keys)
        .withColumn("rank", F.row_number().over(latest_first))
        .where(F.col("rank") <= F.col("allowance"))
        .select(*keys, "kind", "offset")
    )
    rows = spared.groupBy(*keys).agg(
        F.count("*").alias("n"), F.min("offset").alias("first"), F.max("offset").alias("last")
    )
    counts: dict[Partition, Range] = {
        (r["topic"], int(r["partition"])): (int(r["n"]), (int(r["first"]), int(r["last"])))
        for r in rows.collect()
    }
    if not counts:
        return left, {}
    return left.join(spared, [*keys, "kind", "offset"], "left_anti"), counts


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
