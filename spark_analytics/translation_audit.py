"""Offset translation audit: do MirrorMaker 2's checkpoints and offset syncs hold against the real data?

Inputs: the source topics and their remote topics (records on both clusters), the offset-syncs topic
(``mm2-offset-syncs.<target>.internal``, on the source or the target cluster) and the checkpoints topic
(``<source>.checkpoints.internal`` on the target), decoded with the project's codecs.

Each **checkpoint** ``(group, topic, partition, upstream u, downstream d)`` says: a consumer of ``group``
that resumes on the target at ``d`` misses nothing it had not consumed on the source. The *true
position* ``T`` is the lowest target offset holding a copy of a source record at or after ``u`` (copies
paired by content, :mod:`spark_analytics.copies`); when no such record has been copied yet, the
target's end (last offset + 1, 0 when empty), where those copies will land. The safety rule is
``d <= T``; a checkpoint with ``d > T`` is a **violation** and ``skipped`` counts the target records in
``[T, d)`` a consumer would never see. Otherwise ``reread`` counts the target records in ``[d, T)``: what
that consumer reads twice (``0`` for an exact translation).

This is the rule exact translation promises (:mod:`connectors.mirror.offsets.translation`): when a
rewind copied a run twice, ``T`` is the *first* copy of the group's next record, since the k-th source
occurrence of a content pairs with its k-th target occurrence and the later copies are left over as
duplicates. A checkpoint at a later copy is a violation: it drops copies a consumer has not read and is
safe only if the writer of the later copy went on to copy everything after it, which nothing promises
(a zombie task can write it and stop). Java MirrorMaker 2 lands there after a rewind.

Each **offset sync** ``(topic, partition, upstream u, downstream d)`` claims that the target record at
``d`` is the copy of the source record at ``u``: checked by content (``ok``), a **sync violation** when it
is not, ``unverifiable`` when either record is gone (retention) or was never read.

Checkpoints are audited one by one, the whole history of the topic; :attr:`TranslationAudit.latest`
keeps the newest per ``(group, partition)``, what a consumer failing over now would use. The audit is
``ok`` when both violation counts are 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, Row, SparkSession, Window, WindowSpec
from pyspark.sql import functions as F

from spark_analytics import copies
from spark_analytics.group_offsets import CommittedPosition, read_positions
from spark_analytics.kafka_frames import KafkaCluster, raw_reader, read_records
from spark_analytics.mirror_codecs import decode_checkpoints, decode_offset_syncs
from spark_analytics.translation_report import (
    REREAD_BUCKETS,
    SYNC_OK,
    SYNC_UNVERIFIABLE,
    SYNC_VIOLATION,
    CheckpointCheck,
    CommittedAudit,
    GroupRereads,
    SyncCheck,
    TranslationAudit,
)

DEFAULT_SAMPLE = 10
_UNDECODABLE = "undecodable"
__all__ = [
    "REREAD_BUCKETS",
    "SYNC_OK",
    "SYNC_UNVERIFIABLE",
    "SYNC_VIOLATION",
    "CheckpointCheck",
    "CommittedAudit",
    "GroupRereads",
    "SyncCheck",
    "TranslationAudit",
    "audit_translation_frames",
    "check_checkpoints",
    "check_committed",
    "dumps",
    "run_translation_audit",
]


# -- the computation ------------------------------------------------------------------------------

_KEYS = ["topic", "partition"]
_QID_PARTITION_STRIDE = 1 << 40
"""A checkpoint's id is ``record_partition * stride + record_offset`` (unique below 2^40 records)."""


def _mapped(column: str, mapping: Mapping[str, str]) -> Column:
    return F.create_map(*[F.lit(x) for pair in mapping.items() for x in pair])[F.col(column)]


def _sweep(start: int, end: int) -> WindowSpec:
    """The events (``pos``, ``kind``) of one partition in position order, queries (kind 0) before
    records (kind 1) at the same position, framed from ``start`` to ``end`` rows around each event."""
    return Window.partitionBy(*_KEYS).orderBy("pos", "kind").rowsBetween(start, end)


def _sweep_from_end() -> WindowSpec:
    """Each event of :func:`_sweep` with every event at or after it, as a running frame: the events in
    reverse order (records before queries at the same position), from the first to the current row.

    Same rows as ``_sweep(currentRow, unboundedFollowing)``, but Spark evaluates a frame that ends at
    the partition's end row by row over the whole rest (quadratic in a partition's records: hours for a
    few million), and a frame that starts at the partition's start in one running pass."""
    return (
        Window.partitionBy(*_KEYS)
        .orderBy(F.desc("pos"), F.desc("kind"))
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )


def true_positions(queries: DataFrame, pairs: DataFrame, target: DataFrame) -> DataFrame:
    """``queries`` (``qid, topic, partition, upstream_offset``) plus ``true_position``: the lowest target
    offset of a copy of a source record at or after ``upstream_offset``, else the target's end."""
    events = queries.select(
        *_KEYS,
        F.col("upstream_offset").alias("pos"),
        F.lit(0).alias("kind"),
        F.col("qid"),
        F.lit(None).cast("bigint").alias("target_offset"),
    ).unionByName(
        pairs.select(
            *_KEYS,
            F.col("source_offset").alias("pos"),
            F.lit(1).alias("kind"),
            F.lit(None).cast("bigint").alias("qid"),
            F.col("target_offset"),
        )
    )
    next_copy = (
        events.withColumn("next_copy", F.min("target_offset").over(_sweep_from_end()))
        .where(F.col("kind") == 0)
        .select("qid", "next_copy")
    )
    ends = target.groupBy(*_KEYS).agg((F.max("offset") + 1).alias("target_end"))
    return (
        queries.join(next_copy, "qid")
        .join(ends, _KEYS, "left")
        .withColumn("true_position", F.coalesce("next_copy", "target_end", F.lit(0)).cast("bigint"))
        .drop("next_copy", "target_end")
    )


def records_before(queries: DataFrame, target: DataFrame, columns: Mapping[str, str]) -> DataFrame:
    """``queries`` plus, for each ``name -> column`` of ``columns``, ``name``: how many target records of
    the query's partition sit below the offset in ``column``. One pass over the target records."""
    events = target.select(
        *_KEYS,
        F.col("offset").alias("pos"),
        F.lit(1).alias("kind"),
        F.lit(None).cast("bigint").alias("qid"),
        F.lit(None).cast("string").alias("which"),
    )
    for name, column in columns.items():
        events = events.unionByName(
            queries.select(
                *_KEYS, F.col(column).alias("pos"), F.lit(0).alias("kind"), "qid", F.lit(name).alias("which")
            )
        )
    counted = (
        events.withColumn("before", F.sum("kind").over(_sweep(Window.unboundedPreceding, Window.currentRow)))
        .where(F.col("kind") == 0)
        .groupBy("qid")
        .agg(*[F.max(F.when(F.col("which") == name, F.col("before"))).alias(name) for name in columns])
    )
    return queries.join(counted, "qid")


def check_checkpoints(checkpoints: DataFrame, pairs: DataFrame, target: DataFrame) -> DataFrame:
    """``checkpoints`` (``qid, group, topic, partition, upstream_offset, downstream_offset``, topic = source
    name) plus ``true_position, reread, skipped, violation``."""
    positioned = true_positions(checkpoints, pairs, target)
    counted = records_before(
        positioned, target, {"before_d": "downstream_offset", "before_t": "true_position"}
    )
    violation = F.col("downstream_offset") > F.col("true_position")
    return counted.select(
        *checkpoints.columns,
        "true_position",
        F.when(violation, 0).otherwise(F.col("before_t") - F.col("before_d")).cast("bigint").alias("reread"),
        F.when(violation, F.col("before_d") - F.col("before_t")).otherwise(0).cast("bigint").alias("skipped"),
        violation.alias("violation"),
    )


def check_syncs(syncs: DataFrame, source: DataFrame, target: DataFrame) -> DataFrame:
    """``syncs`` (``topic, partition, upstream_offset, downstream_offset``) plus ``status``; ``source`` and
    ``target`` are :func:`spark_analytics.copies.digests` frames."""

    def side(frame: DataFrame, offset: str, prefix: str) -> DataFrame:
        return frame.select(*_KEYS, F.col("offset").alias(offset), F.col("digest").alias(f"{prefix}_digest"))

    def earliest(frame: DataFrame, name: str) -> DataFrame:
        return frame.groupBy(*_KEYS).agg(F.min("offset").alias(name))

    joined = (
        syncs.join(side(source, "upstream_offset", "source"), [*_KEYS, "upstream_offset"], "left")
        .join(side(target, "downstream_offset", "target"), [*_KEYS, "downstream_offset"], "left")
        .join(earliest(source, "source_first"), _KEYS, "left")
        .join(earliest(target, "target_first"), _KEYS, "left")
    )
    gone = (
        F.col("source_digest").isNull()
        | F.col("source_first").isNull()
        | (F.col("upstream_offset") < F.col("source_first"))
        | (
            F.col("target_digest").isNull()
            & (F.col("target_first").isNull() | (F.col("downstream_offset") < F.col("target_first")))
        )
    )
    status = (
        F.when(gone, F.lit(SYNC_UNVERIFIABLE))
        .when(F.col("source_digest") == F.col("target_digest"), F.lit(SYNC_OK))
        .otherwise(F.lit(SYNC_VIOLATION))
    )
    return joined.select(*syncs.columns, status.alias("status"))


def _group_rereads(checked: DataFrame) -> list[GroupRereads]:
    buckets = [
        F.sum(
            F.when(
                (F.col("reread") >= low)
                & (F.lit(True) if high is None else F.col("reread") <= high)
                & ~F.col("violation"),
                1,
            ).otherwise(0)
        ).alias(f"bucket_{i}")
        for i, (_, low, high) in enumerate(REREAD_BUCKETS)
    ]
    rows = (
        checked.groupBy("group")
        .agg(
            F.count("*").alias("checkpoints"),
            F.sum(F.col("violation").cast("int")).alias("violations"),
            F.min("reread").alias("rmin"),
            F.percentile_approx("reread", 0.5).alias("p50"),
            F.percentile_approx("reread", 0.9).alias("p90"),
            F.max("reread").alias("rmax"),
            F.avg("reread").alias("mean"),
            *buckets,
        )
        .orderBy("group")
        .collect()
    )
    return [
        GroupRereads(
            group=r["group"],
            checkpoints=int(r["checkpoints"]),
            violations=int(r["violations"]),
            reread_min=int(r["rmin"]),
            reread_p50=int(r["p50"]),
            reread_p90=int(r["p90"]),
            reread_max=int(r["rmax"]),
            reread_mean=float(r["mean"]),
            histogram={name: int(r[f"bucket_{i}"]) for i, (name, _, _) in enumerate(REREAD_BUCKETS)},
        )
        for r in rows
    ]


def _check(r: Row, remote_topics: Mapping[str, str]) -> CheckpointCheck:
    return CheckpointCheck(
        group=r["group"],
        topic=r["topic"],
        remote_topic=remote_topics.get(r["topic"], r["topic"]),
        partition=int(r["partition"]),
        upstream_offset=int(r["upstream_offset"]),
        downstream_offset=int(r["downstream_offset"]),
        true_position=int(r["true_position"]),
        reread=int(r["reread"]),
        skipped=int(r["skipped"]),
    )


def _latest_and_violations(
    checked: DataFrame, remote_topics: Mapping[str, str], sample: int
) -> tuple[list[CheckpointCheck], list[CheckpointCheck]]:
    """The newest checkpoint per ``(group, topic, partition)`` and the first ``sample`` violations
    (by group, partition, position in the checkpoints topic), fetched in one Spark job."""
    newest = Window.partitionBy("group", *_KEYS).orderBy(F.desc("record_partition"), F.desc("record_offset"))
    latest = checked.withColumn("rank", F.row_number().over(newest)).where(F.col("rank") == 1)
    violations = (
        checked.where(F.col("violation"))
        .orderBy("group", *_KEYS, "record_partition", "record_offset")
        .limit(max(sample, 0))
        .withColumn("rank", F.lit(0))
    )
    rows = (
        latest.withColumn("which", F.lit("latest"))
        .unionByName(violations.withColumn("which", F.lit("violation")))
        .orderBy("which", "group", *_KEYS, "record_partition", "record_offset")
        .collect()
    )
    picked = [(r["which"], _check(r, remote_topics)) for r in rows]
    return [c for w, c in picked if w == "latest"], [c for w, c in picked if w == "violation"]


def _sync_summary(checked: DataFrame, sample: int) -> tuple[dict[str, int], list[SyncCheck]]:
    """Sync counts per status (undecodable records under ``_UNDECODABLE``) and the first ``sample``
    violations, in one Spark job."""
    status = F.when(~F.col("decodable"), F.lit(_UNDECODABLE)).otherwise(F.col("status"))
    offending = F.struct(*_KEYS, "upstream_offset", "downstream_offset")
    rows = (
        checked.withColumn("status", status)
        .groupBy("status")
        .agg(
            F.count("*").alias("n"),
            F.slice(
                F.array_sort(F.collect_list(F.when(F.col("status") == SYNC_VIOLATION, offending))),
                1,
                max(sample, 1),
            ).alias("first"),
        )
        .collect()
    )
    counts = {r["status"]: int(r["n"]) for r in rows}
    samples = [
        SyncCheck(
            o["topic"], int(o["partition"]), int(o["upstream_offset"]), int(o["downstream_offset"]), status
        )
        for r in rows
        if (status := r["status"]) == SYNC_VIOLATION
        for o in r["first"][: max(sample, 0)]
    ]
    return counts, samples


_COMMITTED_SCHEMA = (
    "qid bigint, group string, topic string, partition int, upstream_offset bigint, downstream_offset bigint"
)


def check_committed(
    spark: SparkSession,
    positions: Sequence[CommittedPosition] | None,
    note: str | None,
    pairs: DataFrame,
    target: DataFrame,
    remote_topics: Mapping[str, str],
) -> CommittedAudit:
    """Each committed target offset judged against the first copy of the group's next record."""
    if positions is None:
        return CommittedAudit(note=note or "committed group offsets not read")
    if not positions:
        return CommittedAudit(note=note or "no group committed an audited partition on both clusters")
    rows = [
        (i, p.group, p.topic, p.partition, p.source_offset, p.target_offset) for i, p in enumerate(positions)
    ]
    queries = spark.createDataFrame(rows, _COMMITTED_SCHEMA)
    checked = check_checkpoints(queries, pairs, target).orderBy("group", "topic", "partition").collect()
    return CommittedAudit([_check(r, remote_topics) for r in checked], note)


def audit_translation_frames(
    source: DataFrame,
    target: DataFrame,
    syncs: DataFrame,
    checkpoints: DataFrame,
    remote_topics: Mapping[str, str],
    *,
    source_alias: str = "",
    target_alias: str = "",
    offset_syncs_topic: str = "",
    checkpoints_topic: str = "",
    groups: Sequence[str] = (),
    sample: int = DEFAULT_SAMPLE,
    digested: tuple[DataFrame, DataFrame] | None = None,
    committed: Sequence[CommittedPosition] | None = None,
    committed_note: str | None = None,
) -> TranslationAudit:
    """Audit already-read data. ``source``/``target``: record frames (target ``topic`` = source names);
    ``syncs``/``checkpoints``: :mod:`spark_analytics.mirror_codecs` frames (checkpoint ``topic`` = the
    target-side name, as in the record). ``groups`` limits the checkpoints audited (all when empty).
    ``digested``: the :func:`spark_analytics.copies.digests` of ``source`` and ``target`` when the
    caller already has them (it then owns their caching); else they are computed and cached here.
    ``committed``: the groups' committed offsets on both clusters (:mod:`spark_analytics.group_offsets`),
    each judged like a checkpoint (``None``: not read, ``committed_note`` says why)."""
    cached: list[DataFrame] = []
    if digested is not None:
        source_digests, target_digests = digested
    else:
        source_digests = copies.digests(source).cache()
        target_digests = copies.digests(target).cache()
        cached += [source_digests, target_digests]
    try:
        pairs = copies.paired_offsets(copies.match_copies(source_digests, target_digests))
        audited = list(remote_topics)
        sync_rows = syncs.where(~F.col("decodable") | F.col("topic").isin(audited)).select(
            "decodable", *_KEYS, "upstream_offset", "downstream_offset"
        )
        sync_counts, sync_samples = _sync_summary(
            check_syncs(sync_rows, source_digests, target_digests), sample
        )

        source_topic = _mapped("topic", {remote: topic for topic, remote in remote_topics.items()})
        wanted = checkpoints.withColumn("source_topic", source_topic).where(
            ~F.col("decodable") | F.col("source_topic").isNotNull()
        )
        if groups:
            wanted = wanted.where(~F.col("decodable") | F.col("group").isin(list(groups)))
        wanted = wanted.cache()
        cached.append(wanted)
        undecodable_checkpoints = wanted.where(~F.col("decodable")).count()
        queries = wanted.where(F.col("decodable")).select(
            (F.col("record_partition").cast("bigint") * _QID_PARTITION_STRIDE + F.col("record_offset")).alias(
                "qid"
            ),
            "record_partition",
            "record_offset",
            "group",
            F.col("source_topic").alias("topic"),
            "partition",
            "upstream_offset",
            "downstream_offset",
        )
        checked = check_checkpoints(queries, pairs, target_digests).cache()
        cached.append(checked)
        group_rereads = _group_rereads(checked)
        latest, violation_samples = _latest_and_violations(checked, remote_topics, sample)
        return TranslationAudit(
            source_alias=source_alias,
            target_alias=target_alias,
            remote_topics=dict(remote_topics),
            offset_syncs_topic=offset_syncs_topic,
            checkpoints_topic=checkpoints_topic,
            syncs={s: sync_counts.get(s, 0) for s in (SYNC_OK, SYNC_VIOLATION, SYNC_UNVERIFIABLE)},
            checkpoints=sum(g.checkpoints for g in group_rereads),
            violations=sum(g.violations for g in group_rereads),
            undecodable={
                "offset_syncs": sync_counts.get(_UNDECODABLE, 0),
                "checkpoints": undecodable_checkpoints,
            },
            groups=group_rereads,
            latest=latest,
            violation_samples=violation_samples,
            sync_violation_samples=sync_samples,
            committed=check_committed(
                source.sparkSession, committed, committed_note, pairs, target_digests, remote_topics
            ),
        )
    finally:
        for frame in cached:
            frame.unpersist()


def run_translation_audit(
    spark: SparkSession,
    source: KafkaCluster,
    target: KafkaCluster,
    remote_topics: Mapping[str, str],
    *,
    source_alias: str,
    target_alias: str,
    offset_syncs_topic: str,
    offset_syncs_on_target: bool,
    checkpoints_topic: str,
    groups: Sequence[str] = (),
    sample: int = DEFAULT_SAMPLE,
) -> TranslationAudit:
    """Read the topics, the offset syncs, the checkpoints and the groups' committed offsets (``groups``, or
    every checkpointed group) from the clusters and audit them."""
    source_records = read_records(spark, source, list(remote_topics))
    target_records = read_records(
        spark, target, list(remote_topics.values()), rename={r: s for s, r in remote_topics.items()}
    )
    syncs = decode_offset_syncs(
        raw_reader(spark, target if offset_syncs_on_target else source, [offset_syncs_topic])
    )
    checkpoints = decode_checkpoints(raw_reader(spark, target, [checkpoints_topic]))
    wanted = list(groups) or sorted(
        r["group"]
        for r in checkpoints.where(F.col("decodable") & F.col("topic").isin(list(remote_topics.values())))
        .select("group")
        .distinct()
        .collect()
    )
    committed, committed_note = read_positions(spark, source, target, wanted, remote_topics)
    return audit_translation_frames(
        source_records,
        target_records,
        syncs,
        checkpoints,
        remote_topics,
        source_alias=source_alias,
        target_alias=target_alias,
        offset_syncs_topic=offset_syncs_topic,
        checkpoints_topic=checkpoints_topic,
        groups=groups,
        sample=sample,
        committed=committed,
        committed_note=committed_note,
    )


def dumps(audit: TranslationAudit) -> str:
    return json.dumps(audit.to_json(), indent=2)
