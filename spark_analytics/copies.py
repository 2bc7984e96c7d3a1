"""Which target record is the copy of which source record, decided by content.

MirrorMaker 2 keeps a record's partition, key, value, headers (same order, raw bytes) and timestamp, and
nothing else (the offset changes). So a source record and a target record of the same topic are copies
when those five agree. Records with equal content form a multiset: the k-th such record of a source
partition (in offset order) is paired with the k-th of the target partition. What is left over is
*missing* (source occurrences beyond the target's count) or *extra* on the target: a *duplicate* when
the source holds that content at least once, a *mismatch* when it does not (a changed record, or one
written by someone else). Pairs whose target order disagrees with the source order are *reordered*
(:func:`reordered`). Each offending record also names a ``counterpart`` offset on the other cluster
(:func:`leftovers`, :func:`reordered`, :func:`next_copies`), so a report locates it on both sides.

Contract: every function takes and returns DataFrames (lazy, no action). Inputs are frames with
:data:`spark_analytics.kafka_frames.RECORD_COLUMNS` and a shared ``topic`` naming scheme (the source
topic). Content is compared through the SHA-256 digest (32 raw bytes) of a canonical JSON of ``key,
value, headers, timestamp_ms`` (null and empty bytes stay distinct), computed by Spark SQL (no Python). Offsets of one content group are collected into
one array, so millions of byte-identical records in a single partition would make one large row.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

MATCH_KEYS = ("topic", "partition", "digest")


def with_digest(records: DataFrame) -> DataFrame:
    """``records`` plus ``digest``: the SHA-256 (binary, 32 bytes) of the record's content (all but topic,
    partition, offset). Binary rather than hex halves what the matching shuffles and caches."""
    headers = F.transform("headers", lambda h: F.struct(h["key"].alias("k"), F.base64(h["value"]).alias("v")))
    canonical = F.to_json(
        F.struct(
            F.base64("key").alias("k"),
            F.base64("value").alias("v"),
            headers.alias("h"),
            F.col("timestamp_ms").alias("t"),
        )
    )
    return records.withColumn("digest", F.unhex(F.sha2(canonical, 256)))


def digests(records: DataFrame) -> DataFrame:
    """``topic, partition, offset, digest`` of ``records`` (what matching needs, without the payload)."""
    return with_digest(records).select("topic", "partition", "offset", "digest")


def match_copies(source: DataFrame, target: DataFrame) -> DataFrame:
    """One row per ``(topic, partition, digest)`` present on either side, with ``source_offsets`` and
    ``target_offsets``: the sorted offsets of that content on each side (empty arrays when absent).
    Inputs are :func:`digests` frames."""

    def offsets(frame: DataFrame, name: str) -> DataFrame:
        return frame.groupBy(*MATCH_KEYS).agg(F.array_sort(F.collect_list("offset")).alias(name))

    empty = F.array().cast("array<bigint>")
    joined = offsets(source, "source_offsets").join(
        offsets(target, "target_offsets"), list(MATCH_KEYS), "full"
    )
    return joined.select(
        *MATCH_KEYS,
        F.coalesce("source_offsets", empty).alias("source_offsets"),
        F.coalesce("target_offsets", empty).alias("target_offsets"),
    )


def paired_offsets(matched: DataFrame) -> DataFrame:
    """``topic, partition, source_offset, target_offset``: each source record that has a copy, with it."""
    common = F.least(F.size("source_offsets"), F.size("target_offsets"))
    pairs = F.arrays_zip(
        F.slice("source_offsets", 1, common).alias("s"), F.slice("target_offsets", 1, common).alias("t")
    )
    return (
        matched.where(common > 0)
        .select("topic", "partition", F.explode(pairs).alias("pair"))
        .select(
            "topic",
            "partition",
            F.col("pair.s").alias("source_offset"),
            F.col("pair.t").alias("target_offset"),
        )
    )


MISSING = "missing"
DUPLICATE = "duplicate"
MISMATCH = "mismatch"
REORDERED = "reordered"


def leftovers(matched: DataFrame) -> DataFrame:
    """``topic, partition, kind, offset, counterpart``: records without a partner. ``kind`` is
    :data:`MISSING` (``offset`` on the source), :data:`DUPLICATE` or :data:`MISMATCH` (``offset`` on the
    target). ``counterpart`` is, for a duplicate, the source offset of the record it copies: the extra
    copies of a content are aligned with the *last* source occurrences (a rewind re-copies a run that
    ends at the newest copied record), the earliest occurrence when there are more extras than
    occurrences; null for the other kinds (see :func:`next_copies`)."""
    source_n, target_n = F.size("source_offsets"), F.size("target_offsets")
    missing = F.slice("source_offsets", target_n + 1, F.greatest(source_n - target_n, F.lit(0)))
    extra = F.slice("target_offsets", source_n + 1, F.greatest(target_n - source_n, F.lit(0)))
    missing_rows = matched.where(source_n > target_n).select(
        "topic",
        "partition",
        F.lit(MISSING).alias("kind"),
        F.explode(missing).alias("offset"),
        F.lit(None).cast("bigint").alias("counterpart"),
    )
    extra_rows = (
        matched.where(target_n > source_n)
        .select(
            "topic",
            "partition",
            "source_offsets",
            F.when(source_n > 0, F.lit(DUPLICATE)).otherwise(F.lit(MISMATCH)).alias("kind"),
            (target_n - source_n).alias("extras"),
            F.posexplode(extra).alias("index", "offset"),
        )
        .select(
            "topic",
            "partition",
            "kind",
            "offset",
            F.when(
                F.col("kind") == DUPLICATE,
                F.element_at(
                    "source_offsets",
                    F.greatest(
                        F.lit(1), F.size("source_offsets") - (F.col("extras") - 1 - F.col("index"))
                    ).cast("int"),
                ),
            )
            .cast("bigint")
            .alias("counterpart"),
        )
    )
    return missing_rows.unionByName(extra_rows)


def reordered(paired: DataFrame) -> DataFrame:
    """``topic, partition, kind, offset, counterpart`` (kind :data:`REORDERED`, ``offset`` on the target,
    ``counterpart`` the source offset it copies): copies that land before the copy of an earlier source
    record of their partition. MirrorMaker 2 keeps the order of a partition, so each is a record out of
    place (two records swapped give one). Input: :func:`paired_offsets`."""
    earlier = (
        Window.partitionBy("topic", "partition")
        .orderBy("source_offset")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    return (
        paired.withColumn("earlier_max", F.max("target_offset").over(earlier))
        .where(F.col("target_offset") < F.col("earlier_max"))
        .select(
            "topic",
            "partition",
            F.lit(REORDERED).alias("kind"),
            F.col("target_offset").alias("offset"),
            F.col("source_offset").alias("counterpart"),
        )
    )


def next_copies(offending: DataFrame, paired: DataFrame) -> DataFrame:
    """``offending`` (a few :func:`leftovers` rows) with ``counterpart`` filled in for the one-sided kinds,
    where the record sits on the other side: for a missing record, the target offset of the copy of the
    next source record that has one (its copy belongs just before it); for a mismatch, the source offset
    of the next target record that is a copy. Null when no such copy follows (e.g. a missing tail)."""
    one_sided = F.col("o.kind").isin(MISSING, MISMATCH)
    after = F.when(F.col("o.kind") == MISSING, F.col("p.source_offset")).otherwise(F.col("p.target_offset"))
    other = F.when(F.col("o.kind") == MISSING, F.col("p.target_offset")).otherwise(F.col("p.source_offset"))
    joined = offending.alias("o").join(
        paired.alias("p"),
        (F.col("o.topic") == F.col("p.topic"))
        & (F.col("o.partition") == F.col("p.partition"))
        & one_sided
        & (after > F.col("o.offset")),
        "left",
    )
    filled = joined.groupBy("o.topic", "o.partition", "o.kind", "o.offset", "o.counterpart").agg(
        F.min_by(other, after).alias("next_copy")
    )
    return filled.select(
        "topic",
        "partition",
        "kind",
        "offset",
        F.coalesce("counterpart", "next_copy").cast("bigint").alias("counterpart"),
    )
