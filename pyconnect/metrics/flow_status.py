"""The mirror status document (pyconnect.mirror_status.core) as Prometheus samples (pure).

Every worker's ``GET /metrics``, and dedicated MirrorMaker's metrics listener, serve the flows as the
status document shows them (the same document as ``GET /mirrors``: the whole fleet's view, so every
worker exports the same values and an alert aggregates them with ``max by``). Label values are plain
(``flow="A->B"``, ``source="A"``); every family is a gauge:

- ``pyconnect_mirror_flow_status{flow,source,target,status}``: a state set, 1 for the flow's status
  and 0 for every other of :data:`FLOW_STATUSES`;
- ``pyconnect_mirror_flow_in_sync{flow,source,target}``: 1 when the flow is IN_SYNC, else 0;
- ``pyconnect_mirror_flow_target_latency_seconds{flow,source,target}``: the flow's target latency;
- ``pyconnect_mirror_condition{flow,source,target,code,cluster,severity}``: 1 per active condition
  (pyconnect.conditions: the code, the cluster it concerns, ``critical`` or ``warning``);
- ``pyconnect_mirror_condition_since_seconds{...the same labels}``: since when (Unix time, seconds:
  the oldest ``since_ms`` / 1000);
- ``pyconnect_mirror_partition_record_lag{flow,source,target,topic,partition}``: records of the source
  partition not yet copied (``topic`` is the remote topic, as in the document);
- ``pyconnect_mirror_partition_lag_seconds{...the same labels}``: the age of the oldest of them;
- ``pyconnect_mirror_heartbeat_age_seconds{flow,source,target}``: the age of the newest heartbeat
  copied across the flow.

A condition's ``cluster`` label is empty when it names no cluster; conditions of one flow with the same
code, cluster and severity (several partitions, several tasks) are one series. A partition's record
lag, its lag in seconds and a flow's heartbeat age are left out while the document has ``null`` for
them. A flow whose status is not one of :data:`FLOW_STATUSES` still has its own status series at 1.
No document (the worker is starting) gives no series.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyconnect.metrics.prometheus import GAUGE, Sample

FLOW_STATUSES = ("IN_SYNC", "LAGGING", "STALLED", "UNKNOWN", "NOT_RUNNING", "FAILED")
"""The flow statuses of the status document, in its order (pyconnect.mirror_status.core.STATUSES; the
metrics package may not import it, a unit test keeps the two equal)."""

FLOW_STATUS = "pyconnect_mirror_flow_status"
FLOW_IN_SYNC = "pyconnect_mirror_flow_in_sync"
FLOW_TARGET_LATENCY = "pyconnect_mirror_flow_target_latency_seconds"
CONDITION = "pyconnect_mirror_condition"
CONDITION_SINCE = "pyconnect_mirror_condition_since_seconds"
PARTITION_RECORD_LAG = "pyconnect_mirror_partition_record_lag"
PARTITION_LAG = "pyconnect_mirror_partition_lag_seconds"
HEARTBEAT_AGE = "pyconnect_mirror_heartbeat_age_seconds"

_HELP = {
    FLOW_STATUS: "Status of a MirrorMaker 2 flow as GET /mirrors shows it (1 for the current status)",
    FLOW_IN_SYNC: "Whether a MirrorMaker 2 flow is IN_SYNC (1) or not (0)",
    FLOW_TARGET_LATENCY: "Target latency of a MirrorMaker 2 flow (pyconnect.mirror.target.latency.ms)",
    CONDITION: "Active condition of a MirrorMaker 2 flow, by code (pyconnect.conditions)",
    CONDITION_SINCE: "Since when a condition of a MirrorMaker 2 flow is active (Unix time, the oldest)",
    PARTITION_RECORD_LAG: "Records of a source partition not yet copied to the target",
    PARTITION_LAG: "Age of the oldest record of a source partition not yet copied to the target",
    HEARTBEAT_AGE: "Age of the newest heartbeat copied across a MirrorMaker 2 flow",
}

Labels = tuple[tuple[str, str], ...]


def _sample(name: str, labels: Labels, value: float) -> Sample:
    return Sample(name, labels, float(value), GAUGE, _HELP[name])


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def flow_samples(flow: Mapping[str, Any]) -> list[Sample]:
    """The series of one flow of the status document (see the module docstring)."""
    ident: Labels = (
        ("flow", _text(flow.get("flow"))),
        ("source", _text(flow.get("source"))),
        ("target", _text(flow.get("target"))),
    )
    status = _text(flow.get("status"))
    statuses = FLOW_STATUSES if status in FLOW_STATUSES else (*FLOW_STATUSES, status)
    out = [_sample(FLOW_STATUS, (*ident, ("status", s)), 1 if s == status else 0) for s in statuses]
    out.append(_sample(FLOW_IN_SYNC, ident, 1 if flow.get("in_sync") is True else 0))
    target_ms = _number(flow.get("target_latency_ms"))
    if target_ms is not None:
        out.append(_sample(FLOW_TARGET_LATENCY, ident, target_ms / 1000))
    out += condition_samples(ident, flow.get("conditions") or ())
    for topic in flow.get("topics") or ():
        for lag in topic.get("partition_lags") or ():
            labels = (
                *ident,
                ("topic", _text(topic.get("topic"))),
                ("partition", _text(lag.get("partition"))),
            )
            records = _number(lag.get("record_lag"))
            if records is not None:
                out.append(_sample(PARTITION_RECORD_LAG, labels, records))
            lag_ms = _number(lag.get("lag_ms"))
            if lag_ms is not None:
                out.append(_sample(PARTITION_LAG, labels, lag_ms / 1000))
    heartbeat_ms = _number(flow.get("heartbeat_age_ms"))
    if heartbeat_ms is not None:
        out.append(_sample(HEARTBEAT_AGE, ident, heartbeat_ms / 1000))
    return out


def condition_samples(ident: Labels, conditions: Iterable[Mapping[str, Any]]) -> list[Sample]:
    """``pyconnect_mirror_condition`` and its ``_since_seconds`` for a flow's conditions, one series per
    (code, cluster, severity) in that order, since the oldest of the conditions it stands for."""
    oldest: dict[Labels, float | None] = {}
    for condition in conditions:
        key: Labels = (
            ("code", _text(condition.get("code"))),
            ("cluster", _text(condition.get("cluster"))),
            ("severity", _text(condition.get("severity"))),
        )
        since = _number(condition.get("since_ms"))
        known = oldest.get(key)
        oldest[key] = since if known is None else known if since is None else min(known, since)
    out = []
    for labels in sorted(oldest):
        out.append(_sample(CONDITION, (*ident, *labels), 1))
    for labels in sorted(oldest):
        since = oldest[labels]
        if since is not None:
            out.append(_sample(CONDITION_SINCE, (*ident, *labels), since / 1000))
    return out


def flow_status_samples(document: Mapping[str, Any] | None) -> list[Sample]:
    """Every flow's series, in the document's flow order (none without a document)."""
    if not document:
        return []
    return [sample for flow in document.get("flows") or () for sample in flow_samples(flow)]
