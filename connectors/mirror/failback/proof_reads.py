"""What the closing audit of a failback or a cutover reads from the clusters, and its run.

* :func:`read_window` reads the :class:`~.proof.AuditBounds` of a flow now: the last stable offsets of the
  given source partitions on A and of their remote partitions on B, and the ends of partition 0 of the
  flow's offset-syncs topic (on the cluster of ``offset-syncs.topic.location``) and of its checkpoints
  topic on B (MirrorMaker 2 creates both with one partition).
* :func:`audit_request` assembles the :class:`~.proof.AuditRequest` of a flow.
* :func:`run_audit` runs an :class:`~.proof.Auditor` off the event loop, judges what it counted
  (:func:`~.proof.judge`), records the verdict and raises :class:`~.proof.AuditFindings` on findings; an
  auditor that cannot run (no Spark, a cluster it cannot read) is a
  :class:`~connectors.mirror.offsets.failover_calls.FailoverError`, one line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from connectors.mirror.failback.ledger import OrphanRange
from connectors.mirror.failback.proof import (
    AuditBounds,
    AuditFindings,
    Auditor,
    AuditRequest,
    AuditVerdict,
    GroupPosition,
    judge,
)
from connectors.mirror.offsets.failover_calls import FailoverError, cluster_bounds, one_line
from connectors.mirror.offsets.failover_flow import FailoverFlow
from connectors.mirror.offsets.failover_state import partition_key

__all__ = ["audit_request", "read_window", "run_audit"]

Partition = tuple[str, int]


async def read_window(flow: FailoverFlow, partitions: Sequence[Partition], timeout_s: float) -> AuditBounds:
    """The audit window of ``flow`` over the source ``partitions`` now (see the module docstring)."""
    policy = flow.policy()
    remote = [(policy.format_remote_topic(flow.source, t), p) for t, p in partitions]
    source = await cluster_bounds(flow.source_config, flow.source, list(partitions), timeout_s)
    target = await cluster_bounds(flow.target_config, flow.target, remote, timeout_s)
    syncs_cluster = flow.target_config if flow.offset_syncs_location == "target" else flow.source_config
    syncs_alias = flow.target if flow.offset_syncs_location == "target" else flow.source
    syncs = await cluster_bounds(syncs_cluster, syncs_alias, [(flow.offset_syncs_topic, 0)], timeout_s)
    checkpoints = await cluster_bounds(
        flow.target_config, flow.target, [(flow.checkpoints_topic, 0)], timeout_s
    )
    return AuditBounds(
        {partition_key(t, p): end for (t, p), (_, end) in source.items()},
        {partition_key(t, p): end for (t, p), (_, end) in target.items()},
        {p: end for (_, p), (_, end) in syncs.items()},
        {p: end for (_, p), (_, end) in checkpoints.items()},
    )


def audit_request(
    command: str,
    flow: FailoverFlow,
    bounds: AuditBounds,
    groups: Sequence[str],
    positions: Sequence[GroupPosition],
    out_dir: str,
    *,
    expected: Mapping[Partition, OrphanRange] | None = None,
    timeout_s: float = 30.0,
) -> AuditRequest:
    """The request to audit ``flow`` within ``bounds`` (its topics are those of the bounds' source side)."""
    policy = flow.policy()
    topics = sorted({k.rsplit(":", 1)[0] for k in bounds.source_ends})
    return AuditRequest(
        command=command,
        source=flow.source,
        target=flow.target,
        source_config=dict(flow.source_config),
        target_config=dict(flow.target_config),
        policy_config=dict(flow.policy_config),
        offset_syncs_on_target=flow.offset_syncs_location == "target",
        offset_syncs_topic=flow.offset_syncs_topic,
        checkpoints_topic=flow.checkpoints_topic,
        remote_topics={t: policy.format_remote_topic(flow.source, t) for t in topics},
        bounds=bounds,
        groups=tuple(groups),
        positions=tuple(positions),
        out_dir=out_dir,
        expected=dict(expected or {}),
        timeout_s=timeout_s,
    )


async def run_audit(
    auditor: Auditor, request: AuditRequest, record: Callable[[dict[str, Any]], None]
) -> AuditVerdict:
    """The verdict of ``auditor`` on ``request`` (see the module docstring), handed to ``record`` (the
    command keeps it in its state file) before :class:`~.proof.AuditFindings` is raised for findings."""
    try:
        observation = await asyncio.to_thread(auditor, request)
    except Exception as exc:
        raise FailoverError(
            f"the audit of {request.source}->{request.target} could not run: {one_line(exc)}"
        ) from None
    verdict = judge(request, observation)
    record(verdict.to_json())
    if not verdict.ok:
        raise AuditFindings(verdict.line)
    return verdict
