"""``pyconnect audit --config mm2.properties --flow A->B --out DIR``: one flow, both audits, two reports.

Contract (exit codes and one-line errors as :mod:`spark_analytics.audit_cli`):

- the arguments are checked before Spark starts: ``--out`` is required; exactly one of ``--config``
  (with ``--flow``) and ``--from-snapshot``; a missing or malformed config, an unknown alias, a bad
  pattern, a folder that is not a snapshot are usage errors (exit 2);
- from the clusters: the source topics the flow replicates (:meth:`FlowPlan.topics_to_audit`, none is a
  usage error) are read with their remote topics, offset syncs and checkpoints; with ``--snapshot DIR``
  they are first written there as Parquet and the audit runs on the written files;
- the audited groups' committed offsets are read from both clusters (kept in the snapshot's manifest) and
  each target commit is judged against the group's position on the source;
- duplicates on the target are judged by the flow's promise: a finding when it runs exactly-once, reported
  under at-least-once; ``--delivery`` overrides what the config (or the snapshot) says;
- from a snapshot: the manifest says what was audited; ``--groups`` still narrows the groups;
- progress goes to ``err`` (unless ``--quiet``); the verdict line and the report paths to ``out``;
  ``DIR/audit.json`` and ``DIR/audit.html`` are written; exit 0 when the flow passed, 1 on findings.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from connectors.mirror.mm2_properties import MirrorMakerConfig
from spark_analytics.audit_cli import EXIT_FINDINGS, EXIT_OK, AuditRunError, AuditUsageError, error_line
from spark_analytics.flow_plan import FlowError, FlowPlan, parse_flow, plan_from_mm2

JSON_REPORT = "audit.json"
HTML_REPORT = "audit.html"


def _check(args: argparse.Namespace) -> None:
    if not args.out:
        raise AuditUsageError("--out DIR is required (where audit.json and audit.html go)")
    if bool(args.config) == bool(args.from_snapshot):
        raise AuditUsageError("give either --config mm2.properties with --flow, or --from-snapshot DIR")
    if args.config and not args.flow:
        raise AuditUsageError("--config needs --flow SOURCE->TARGET")
    if args.from_snapshot and args.snapshot:
        raise AuditUsageError("--snapshot cannot be combined with --from-snapshot")
    if args.flow_sample < 0:
        raise AuditUsageError("--sample cannot be negative")
    if args.flow_timeout <= 0:
        raise AuditUsageError("--timeout must be positive")


def load_plan(args: argparse.Namespace) -> FlowPlan:
    from pyconnect.config import properties

    flow = parse_flow(args.flow)
    try:
        raw = properties.load(args.config)
    except OSError as exc:
        raise AuditUsageError(f"cannot read {args.config}: {exc.strerror or exc}") from None
    try:
        mm2 = MirrorMakerConfig(raw)
    except Exception as exc:
        raise AuditUsageError(f"{args.config}: {error_line(exc)}") from None
    return plan_from_mm2(mm2, flow, topics=args.topics, groups=args.groups)


def plan_from_manifest(manifest: dict[str, Any], groups: str | None) -> FlowPlan:
    filters = dict(manifest.get("filter_config", {}))
    if groups is not None:
        filters["groups"] = groups
    return FlowPlan(
        source_alias=manifest["source_alias"],
        target_alias=manifest["target_alias"],
        source_bootstrap="",
        target_bootstrap="",
        source_properties={},
        target_properties={},
        policy_config=dict(manifest.get("policy_config", {})),
        offset_syncs_on_target=bool(manifest.get("offset_syncs_on_target", False)),
        filter_config=filters,
        delivery=str(manifest.get("delivery", "at-least-once")),
    )


def run_flow(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check(args)
    try:
        return _run_flow(args, out, err)
    except FlowError as exc:
        raise AuditUsageError(str(exc)) from None


def _run_flow(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from spark_analytics.snapshot import read_manifest

    out_dir = Path(args.out)
    snapshot_in = Path(args.from_snapshot) if args.from_snapshot else None
    if snapshot_in is not None:
        from spark_analytics.snapshot import SnapshotError

        try:
            plan = plan_from_manifest(read_manifest(snapshot_in), args.groups)
        except SnapshotError as exc:
            raise AuditUsageError(str(exc)) from None
    else:
        plan = load_plan(args)
    out_dir.mkdir(parents=True, exist_ok=True)

    from spark_analytics.progress import Progress
    from spark_analytics.session import local_spark

    progress = Progress(None if args.quiet else err)
    progress.step("starting Spark")
    with local_spark(
        "pyconnect-audit-flow", master=args.flow_master, memory=args.flow_driver_memory
    ) as spark:
        progress.note(f"master {spark.sparkContext.master}, Spark {spark.version}")
        try:
            report = _audit(spark, args, plan, snapshot_in, progress)
        except (AuditUsageError, FlowError):
            raise
        except Exception as exc:
            raise AuditRunError(error_line(exc)) from None
    body = report.to_json()
    from spark_analytics.html_report import render

    (out_dir / JSON_REPORT).write_text(json.dumps(body, indent=2))
    (out_dir / HTML_REPORT).write_text(render(body))
    print(report.verdict(), file=out)
    print(f"reports: {out_dir / JSON_REPORT} {out_dir / HTML_REPORT}", file=out)
    return EXIT_OK if report.ok() else EXIT_FINDINGS


def _audit(
    spark: Any, args: argparse.Namespace, plan: FlowPlan, snapshot_in: Path | None, progress: Any
) -> Any:
    from spark_analytics.flow_audit import audit_flow, read_flow
    from spark_analytics.group_offsets import read_positions
    from spark_analytics.kafka_frames import KafkaCluster, list_topics
    from spark_analytics.snapshot import read_snapshot

    policy = plan.policy
    flow = f"{plan.source_alias}->{plan.target_alias}"
    if snapshot_in is not None:
        progress.step(f"reading the snapshot {snapshot_in}")
        frames, manifest = read_snapshot(spark, snapshot_in)
        remote_topics = dict(manifest["remote_topics"])
        offset_syncs_topic, checkpoints_topic = manifest["offset_syncs_topic"], manifest["checkpoints_topic"]
        origin = f"snapshot {snapshot_in}"
        committed = _kept_positions(manifest)

    else:
        source = KafkaCluster(plan.source_bootstrap, plan.source_properties, args.flow_timeout)
        target = KafkaCluster(plan.target_bootstrap, plan.target_properties, args.flow_timeout)
        progress.step(f"listing the topics of {plan.source_alias} ({plan.source_bootstrap})")
        topics = plan.topics_to_audit(list_topics(spark, source))
        if not topics:
            raise AuditUsageError(f"no topic of {plan.source_alias} matches the flow {flow}'s topic filter")
        remote_topics = {t: policy.format_remote_topic(plan.source_alias, t) for t in topics}
        progress.note(f"{len(topics)} topics: {', '.join(topics)}")
        offset_syncs_topic = policy.offset_syncs_topic(plan.target_alias)
        checkpoints_topic = policy.checkpoints_topic(plan.source_alias)
        frames = read_flow(
            spark,
            source,
            target,
            remote_topics,
            offset_syncs_topic=offset_syncs_topic,
            offset_syncs_on_target=plan.offset_syncs_on_target,
            checkpoints_topic=checkpoints_topic,
        )
        origin = (
            f"{plan.source_alias} ({plan.source_bootstrap}) and {plan.target_alias} ({plan.target_bootstrap})"
        )

        def committed(groups: list[str]) -> tuple[Any, str | None]:
            return read_positions(spark, source, target, groups, remote_topics)

        if args.snapshot:
            folder = Path(args.snapshot)
            topics_read = (offset_syncs_topic, checkpoints_topic)
            frames = _keep(
                spark, plan, frames, folder, remote_topics, topics_read, (source, target), progress
            )
            origin += f", kept in snapshot {folder}"
    return audit_flow(
        spark,
        frames,
        flow=flow,
        source_alias=plan.source_alias,
        target_alias=plan.target_alias,
        remote_topics=remote_topics,
        offset_syncs_topic=offset_syncs_topic,
        checkpoints_topic=checkpoints_topic,
        group_wanted=plan.groups_to_audit,
        sample=args.flow_sample,
        allow_lag=args.flow_allow_lag,
        origin=origin,
        progress=progress,
        committed=committed,
        delivery=args.delivery or plan.delivery,
    )


def _kept_positions(manifest: dict[str, Any]) -> Any:
    """The committed group offsets a snapshot kept, as ``audit_flow`` asks for them by group."""
    from spark_analytics.group_offsets import positions_from_json

    kept = manifest.get("committed_offsets")
    kept_positions = None if kept is None else positions_from_json(kept)

    def committed(groups: list[str]) -> tuple[Any, str | None]:
        if kept_positions is None:
            return None, "the snapshot holds no committed group offsets"
        return [p for p in kept_positions if p.group in groups], None

    return committed


def _keep(
    spark: Any,
    plan: FlowPlan,
    frames: Any,
    folder: Path,
    remote_topics: dict[str, str],
    topics_read: tuple[str, str],
    clusters: tuple[Any, Any],
    progress: Any,
) -> Any:
    """Write what was read (and the audited groups' committed offsets) as a snapshot in ``folder`` and
    return the frames read back from it, so that what is audited is what was kept."""
    from spark_analytics.flow_audit import checkpointed_groups
    from spark_analytics.group_offsets import positions_to_json, read_positions
    from spark_analytics.snapshot import read_snapshot, write_snapshot

    progress.step(f"writing the snapshot {folder}")
    offset_syncs_topic, checkpoints_topic = topics_read
    manifest: dict[str, Any] = {
        "flow": f"{plan.source_alias}->{plan.target_alias}",
        "source_alias": plan.source_alias,
        "target_alias": plan.target_alias,
        "remote_topics": remote_topics,
        "offset_syncs_topic": offset_syncs_topic,
        "offset_syncs_on_target": plan.offset_syncs_on_target,
        "checkpoints_topic": checkpoints_topic,
        "policy_config": plan.policy_config,
        "filter_config": plan.filter_config,
        "delivery": plan.delivery,
    }
    groups = plan.groups_to_audit(checkpointed_groups(frames, remote_topics.values()))
    positions, _ = read_positions(spark, clusters[0], clusters[1], groups, remote_topics)
    if positions is not None:
        manifest["committed_offsets"] = positions_to_json(positions)
    with progress.watch(spark.sparkContext):
        write_snapshot(frames, folder, manifest)
    kept, _ = read_snapshot(spark, folder)
    return kept
