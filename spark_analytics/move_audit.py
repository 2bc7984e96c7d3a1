"""The Spark audit that closes ``pyconnect failback execute`` and ``pyconnect cutover execute|resume``.

Contract: :func:`audit_move` is a :class:`connectors.mirror.failback.proof.Auditor`. It starts a local
Spark session (:func:`spark_analytics.session.local_spark`), reads the forward flow as ``pyconnect audit``
does (:func:`spark_analytics.flow_audit.read_flow`: the request's topics on A and their remote topics on
B, the offset-syncs and checkpoints topics), keeps only the records inside the request's window
(:class:`~connectors.mirror.failback.proof.AuditBounds`: per partition, offsets below the recorded
ends), runs both audits (:func:`spark_analytics.flow_audit.audit_flow`) with the moved groups'
committed offsets as the command recorded them, writes ``audit.json`` and ``audit.html`` into the
request's ``out_dir`` and returns the counts (:class:`~connectors.mirror.failback.proof.AuditObservation`)
for :func:`~connectors.mirror.failback.proof.judge`. The clusters are read with the flow's client
settings (TLS, SASL included), ``read_committed``. Raises on a cluster it cannot read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from connectors.mirror.failback.proof import AuditObservation, AuditRequest, PartitionCounts
from connectors.mirror.offsets.failover_state import parse_key
from spark_analytics import copies
from spark_analytics.flow_audit import AT_LEAST_ONCE, EXACTLY_ONCE, FlowReport, audit_flow, read_flow
from spark_analytics.flow_plan import kafka_client_properties
from spark_analytics.group_offsets import CommittedPosition
from spark_analytics.kafka_frames import KafkaCluster
from spark_analytics.progress import Progress
from spark_analytics.snapshot import FlowFrames

__all__ = ["audit_move", "cluster_of", "observation_of"]

JSON_REPORT, HTML_REPORT = "audit.json", "audit.html"


def cluster_of(config: Mapping[str, str], timeout_s: float) -> KafkaCluster:
    """A ``MirrorClientConfig`` map as Spark's Kafka source reads it, ``read_committed``: the window ends at
    last stable offsets, the orphans are committed records, and an exactly-once flow's aborted copies
    are no records."""
    properties = {**kafka_client_properties(config), "isolation.level": "read_committed"}
    return KafkaCluster(config["bootstrap.servers"], properties, timeout_s)


def _below(frame: DataFrame, ends: Iterable[tuple[str | None, int, int]]) -> DataFrame:
    """The rows of ``frame`` whose ``(topic, partition)`` is listed with an offset below its end (``topic``
    ``None``: any topic)."""
    condition: Column | None = None
    for topic, partition, end in ends:
        one = (F.col("partition") == partition) & (F.col("offset") < end)
        if topic is not None:
            one = one & (F.col("topic") == topic)
        condition = one if condition is None else condition | one
    return frame.where(condition if condition is not None else F.lit(False))


def bounded(frames: FlowFrames, request: AuditRequest) -> FlowFrames:
    """``frames`` cut to the request's window (target records carry the source topic names)."""
    to_source = {remote: source for source, remote in request.remote_topics.items()}
    bounds = request.bounds
    source = [(*parse_key(k), end) for k, end in bounds.source_ends.items()]
    target = []
    for key, end in bounds.target_ends.items():
        topic, partition = parse_key(key)
        if topic in to_source:
            target.append((to_source[topic], partition, end))
    return FlowFrames(
        source=_below(frames.source, source),
        target=_below(frames.target, target),
        offset_syncs=_below(frames.offset_syncs, [(None, p, e) for p, e in bounds.offset_syncs_ends.items()]),
        checkpoints=_below(frames.checkpoints, [(None, p, e) for p, e in bounds.checkpoints_ends.items()]),
    )


def observation_of(report: FlowReport, reports: tuple[str, ...]) -> AuditObservation:
    """The counts :func:`~connectors.mirror.failback.proof.judge` needs from a flow report."""
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for bucket in report.replication.offset_buckets:
        if bucket.kind != copies.MISSING:
            continue
        key = (bucket.topic, bucket.partition)
        first, last = spans.get(key, (bucket.first, bucket.last))
        spans[key] = (min(first, bucket.first), max(last, bucket.last))
    partitions = tuple(
        PartitionCounts(
            p.topic,
            p.partition,
            p.source_count,
            p.target_count,
            p.missing,
            spans.get((p.topic, p.partition), (None, None))[0],
            spans.get((p.topic, p.partition), (None, None))[1],
            p.mismatches,
            p.reordered,
            p.duplicates,
        )
        for p in report.replication.partitions
    )
    t = report.translation
    notes = tuple(n for n in (report.replication.retention_note(), t.committed.note) if n)
    return AuditObservation(
        partitions,
        checkpoint_violations=t.violations,
        committed_violations=t.committed.violations,
        sync_violations=t.sync_violations,
        groups=t.committed.by_group(),
        checkpoints=t.checkpoints,
        offset_syncs=sum(t.syncs.values()),
        seconds=report.seconds,
        reports=reports,
        notes=notes,
    )


def _write(report: FlowReport, request: AuditRequest) -> tuple[str, ...]:
    from spark_analytics.html_report import render

    folder = Path(request.out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = report.to_json()
    body["window"] = request.bounds.to_json()
    (folder / JSON_REPORT).write_text(json.dumps(body, indent=2))
    (folder / HTML_REPORT).write_text(render(body))
    return (str(folder / JSON_REPORT), str(folder / HTML_REPORT))


def audit_move(request: AuditRequest) -> AuditObservation:
    """See the module contract."""
    from spark_analytics.session import local_spark

    source = cluster_of(request.source_config, request.timeout_s)
    target = cluster_of(request.target_config, request.timeout_s)
    positions = [
        CommittedPosition(p.group, p.topic, p.partition, p.source_offset, p.target_offset)
        for p in request.positions
    ]
    wanted = set(request.groups)
    with local_spark(f"pyconnect-{request.command}-audit") as spark:
        frames = read_flow(
            spark,
            source,
            target,
            request.remote_topics,
            offset_syncs_topic=request.offset_syncs_topic,
            offset_syncs_on_target=request.offset_syncs_on_target,
            checkpoints_topic=request.checkpoints_topic,
        )
        report = audit_flow(
            spark,
            bounded(frames, request),
            flow=f"{request.source}->{request.target}",
            source_alias=request.source,
            target_alias=request.target,
            remote_topics=request.remote_topics,
            offset_syncs_topic=request.offset_syncs_topic,
            checkpoints_topic=request.checkpoints_topic,
            group_wanted=lambda found: sorted(set(found) & wanted),
            sample=10,
            allow_lag=False,
            origin=f"{request.command}: {request.source} and {request.target} within the recorded window",
            progress=Progress(None),
            committed=lambda _groups: (positions, None),
            delivery=EXACTLY_ONCE if request.exactly_once else AT_LEAST_ONCE,
        )
    return observation_of(report, _write(report, request))
