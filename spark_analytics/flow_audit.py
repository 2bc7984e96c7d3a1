"""Both audits of one MirrorMaker 2 flow in one Spark session: read, (snapshot,) audit, one report.

Contract:

- :func:`read_flow` reads what a flow audit needs from the two clusters (lazy frames,
  :class:`spark_analytics.snapshot.FlowFrames`): the audited source topics, their remote topics (target
  ``topic`` column renamed to the source names), and the raw offset-syncs and checkpoints topics.
- :func:`audit_flow` runs :func:`~spark_analytics.replication_audit.audit_replication_frames` and
  :func:`~spark_analytics.translation_audit.audit_translation_frames` on those frames, reporting each step
  and the records scanned to ``progress``; the groups audited are the checkpointed groups that
  ``group_wanted`` accepts. Only aggregates and samples reach the driver.
- :class:`FlowReport` holds both results; :meth:`FlowReport.to_json` is the JSON report (the HTML report
  is drawn from it, :mod:`spark_analytics.html_report`), :meth:`FlowReport.ok` the verdict: no missing
  record (except the not-yet-copied tail with ``allow_lag``), no mismatch, no checkpoint, committed group
  offset or offset-sync violation, and, when the flow promises exactly-once (``delivery``), no duplicate
  on the target; under at-least-once duplicates are reported in the verdict line, not a finding. Records
  retention left unverifiable (:mod:`spark_analytics.retention`) are a note in the verdict line, not a
  finding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_analytics import copies
from spark_analytics.group_offsets import CommittedPosition
from spark_analytics.kafka_frames import KafkaCluster, raw_reader, read_records
from spark_analytics.mirror_codecs import decode_checkpoints, decode_offset_syncs
from spark_analytics.progress import Progress
from spark_analytics.replication_audit import ReplicationAudit, audit_replication_frames
from spark_analytics.snapshot import FlowFrames
from spark_analytics.translation_audit import TranslationAudit, audit_translation_frames

REPORT_VERSION = 1
EXACTLY_ONCE, AT_LEAST_ONCE = "exactly-once", "at-least-once"
NO_GROUP = "\x00"
"""A group name no consumer can have: the translation audit of an empty group list audits every group,
so when the filter leaves none, this one is asked for (the offset syncs are still checked)."""


@dataclass(frozen=True)
class FlowReport:
    flow: str
    source_alias: str
    target_alias: str
    remote_topics: dict[str, str]
    groups: list[str]
    scanned: dict[str, int]
    replication: ReplicationAudit
    translation: TranslationAudit
    allow_lag: bool
    seconds: float
    origin: str
    delivery: str = AT_LEAST_ONCE

    def ok(self) -> bool:
        duplicates_allowed = self.delivery != EXACTLY_ONCE or self.replication.total("duplicates") == 0
        return self.replication.ok(allow_lag=self.allow_lag) and self.translation.ok() and duplicates_allowed

    def findings(self) -> list[str]:
        """One phrase per kind of finding, empty when the flow passed."""
        r, t = self.replication, self.translation
        found = []
        missing = r.total("missing") - (r.total("missing_tail") if self.allow_lag else 0)
        if missing:
            found.append(f"{missing} missing records")
        if r.total("mismatches"):
            found.append(f"{r.total('mismatches')} altered or foreign records on the target")
        if r.total("reordered"):
            found.append(f"{r.total('reordered')} records out of order")
        if self.delivery == EXACTLY_ONCE and r.total("duplicates"):
            found.append(f"{r.total('duplicates')} duplicates on the target of a flow that runs exactly-once")
        if t.violations:
            found.append(f"{t.violations} checkpoints past the true position")
        if t.committed.violations:
            found.append(f"{t.committed.violations} committed group offsets past the true position")
        if t.sync_violations:
            found.append(f"{t.sync_violations} offset syncs that point at no copy")
        return found

    def verdict(self) -> str:
        dups = self.replication.total("duplicates")
        extra = (
            f" ({dups} duplicates, allowed by at-least-once)"
            if dups and self.delivery != EXACTLY_ONCE
            else ""
        )
        note = self.replication.retention_note()
        extra += f" ({note})" if note else ""
        if self.ok():
            return f"flow {self.flow}: PASS{extra}"
        return f"flow {self.flow}: FINDINGS: {'; '.join(self.findings())}{extra}"

    def to_json(self) -> dict[str, Any]:
        return {
            "report_version": REPORT_VERSION,
            "flow": self.flow,
            "source_alias": self.source_alias,
            "target_alias": self.target_alias,
            "ok": self.ok(),
            "verdict": self.verdict(),
            "findings": self.findings(),
            "allow_lag": self.allow_lag,
            "delivery": self.delivery,
            "origin": self.origin,
            "seconds": round(self.seconds, 1),
            "remote_topics": self.remote_topics,
            "groups": self.groups,
            "scanned": self.scanned,
            "replication": self.replication.to_json(),
            "translation": self.translation.to_json(),
        }


def read_flow(
    spark: SparkSession,
    source: KafkaCluster,
    target: KafkaCluster,
    remote_topics: Mapping[str, str],
    *,
    offset_syncs_topic: str,
    offset_syncs_on_target: bool,
    checkpoints_topic: str,
) -> FlowFrames:
    return FlowFrames(
        source=read_records(spark, source, list(remote_topics)),
        target=read_records(
            spark, target, list(remote_topics.values()), rename={r: s for s, r in remote_topics.items()}
        ),
        offset_syncs=raw_reader(spark, target if offset_syncs_on_target else source, [offset_syncs_topic]),
        checkpoints=raw_reader(spark, target, [checkpoints_topic]),
    )


def checkpointed_groups(frames: FlowFrames, remote_topics: Iterable[str]) -> list[str]:
    """The groups with a decodable checkpoint of an audited remote topic (a small distinct set)."""
    decoded = decode_checkpoints(frames.checkpoints)
    rows = (
        decoded.where(F.col("decodable") & F.col("topic").isin(list(remote_topics)))
        .select("group")
        .distinct()
        .collect()
    )
    return sorted(r["group"] for r in rows)


def audit_flow(
    spark: SparkSession,
    frames: FlowFrames,
    *,
    flow: str,
    source_alias: str,
    target_alias: str,
    remote_topics: Mapping[str, str],
    offset_syncs_topic: str,
    checkpoints_topic: str,
    group_wanted: Callable[[Iterable[str]], list[str]],
    sample: int,
    allow_lag: bool,
    origin: str,
    progress: Progress,
    committed: Callable[[list[str]], tuple[list[CommittedPosition] | None, str | None]] | None = None,
    delivery: str = AT_LEAST_ONCE,
) -> FlowReport:
    """Both audits (see the module contract); ``committed(groups)`` gives the audited groups' committed
    offsets on both clusters (``None`` and a note when they cannot be read)."""
    started = time.monotonic()
    with progress.watch(spark.sparkContext):
        progress.step("listing the checkpointed groups")
        groups = group_wanted(checkpointed_groups(frames, remote_topics.values()))
        progress.note(f"{len(groups)} groups to audit: {', '.join(groups) if groups else 'none'}")
        positions, note = (
            committed(groups) if committed is not None else (None, "committed group offsets not read")
        )
        # Both audits match by content: the records are read and digested once, cached for both.
        digested = (copies.digests(frames.source).cache(), copies.digests(frames.target).cache())
        try:
            replication, translation = _both_audits(
                frames,
                digested,
                remote_topics,
                source_alias=source_alias,
                target_alias=target_alias,
                offset_syncs_topic=offset_syncs_topic,
                checkpoints_topic=checkpoints_topic,
                groups=groups,
                sample=sample,
                progress=progress,
                committed=(positions, note),
            )
        finally:
            for frame in digested:
                frame.unpersist()
        scanned = {
            "source_records": replication.total("source_count"),
            "target_records": replication.total("target_count"),
            "offset_syncs": sum(translation.syncs.values()) + translation.undecodable["offset_syncs"],
            "checkpoints": translation.checkpoints,
        }
    return FlowReport(
        flow=flow,
        source_alias=source_alias,
        target_alias=target_alias,
        remote_topics=dict(remote_topics),
        groups=groups,
        scanned=scanned,
        replication=replication,
        translation=translation,
        allow_lag=allow_lag,
        seconds=time.monotonic() - started,
        origin=origin,
        delivery=delivery,
    )


def _both_audits(
    frames: FlowFrames,
    digested: tuple[DataFrame, DataFrame],
    remote_topics: Mapping[str, str],
    *,
    source_alias: str,
    target_alias: str,
    offset_syncs_topic: str,
    checkpoints_topic: str,
    groups: list[str],
    sample: int,
    progress: Progress,
    committed: tuple[list[CommittedPosition] | None, str | None],
) -> tuple[ReplicationAudit, TranslationAudit]:
    progress.step(f"replication audit of {len(remote_topics)} topics")
    replication = audit_replication_frames(
        frames.source,
        frames.target,
        remote_topics,
        source_alias=source_alias,
        sample=sample,
        digested=digested,
    )
    progress.note(
        f"scanned {replication.total('source_count')} source and {replication.total('target_count')} "
        "target records"
    )
    progress.step("translation audit (offset syncs and checkpoints)")
    translation = audit_translation_frames(
        frames.source,
        frames.target,
        decode_offset_syncs(frames.offset_syncs),
        decode_checkpoints(frames.checkpoints),
        remote_topics,
        source_alias=source_alias,
        target_alias=target_alias,
        offset_syncs_topic=offset_syncs_topic,
        checkpoints_topic=checkpoints_topic,
        groups=groups or [NO_GROUP],
        sample=sample,
        digested=digested,
        committed=committed[0],
        committed_note=committed[1],
    )
    syncs = sum(translation.syncs.values()) + translation.undecodable["offset_syncs"]
    progress.note(f"checked {syncs} offset syncs and {translation.checkpoints} checkpoints")
    return replication, translation
