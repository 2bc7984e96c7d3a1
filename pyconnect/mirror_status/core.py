"""The status of each MirrorMaker 2 flow, computed from what the runtime already records (pure).

A *flow* is one (source alias, target alias) pair: every MirrorSourceConnector,
MirrorCheckpointConnector and MirrorHeartbeatConnector whose config names those aliases. Its inputs:

- the connectors' configs and their REST status JSON (``ConnectorStateInfo``, cluster-wide from the
  status topic);
- per replicated partition, a :class:`PartitionProgress` read from the MirrorSource task metrics
  (connectors.mirror.metrics: ``replication-latency-ms-avg``, ``record-age-ms``, ``record-count`` and
  the ``MirrorSourceProgress`` gauges) of every worker that runs a task of the flow;
- per checkpointed (group, partition), a :class:`CheckpointProgress` from the MirrorCheckpoint task
  metrics (``checkpoint-latency-ms`` and its ``-avg``).

Topic states (a topic is the remote topic on the target, its partitions taken together):

- ``STALE``: it holds data only from before the mirror started: every record it replicated is older
  than its task's start, and nothing is left to copy (record lag 0 or unknown). The metrics live as
  long as the task: after a restart (a config change, a rebalance) a topic with nothing new since is
  INACTIVE, which counts against the flow no more than STALE does.
- ``ACTIVE``: records were replicated within the metrics window (``replication-latency-ms-avg`` has a
  value; ``metrics.sample.window.ms`` x ``metrics.num.samples``, 60 s by default), or records are
  waiting to be copied (record lag above 0).
- ``INACTIVE``: neither (no new data recently, or never any).

An ACTIVE topic is in sync when none of its partitions runs the flow's target latency or more behind
the source (:meth:`PartitionProgress.behind_ms`: 0 with nothing to copy; else the age of the oldest
record polled and not yet acknowledged; else, records waiting unpolled, the latency of the last record
copied). That is a statement about now, not the windowed average replication latency, which still
remembers a backlog copied a minute ago (it is shown beside it) and trails a copy falling behind. A
partition whose records wait with neither known falls back to the windowed average (at or above the
target, or none in the window: not in sync). A partition that copies nothing at all while records wait
is ``REPLICATION_STALLED``. STALE and INACTIVE topics do not count against the flow.

Conditions (pyconnect.conditions): each flow lists the conditions its connectors' tasks raised (a source
that answers no fetch, an ACL that refuses, a target partition missing, ...; gathered with the metrics
from every worker), and those derived here: ``TASK_FAILED`` and ``REBALANCING`` from the run states,
``WORKER_UNREACHABLE`` for a worker that did not answer, and ``REPLICATION_STALLED`` and
``HEARTBEATS_MISSING`` from progress (pyconnect.mirror_status.flow_conditions).

Flow status, the first that applies: ``FAILED`` (a connector or task is FAILED), ``NOT_RUNNING`` (a
connector or task is in another state than RUNNING, or has no status yet), ``UNKNOWN`` (a worker that
runs one of its tasks could not be asked for its metrics), ``STALLED`` (a critical condition is
active), ``LAGGING`` (an active topic is not in sync), ``IN_SYNC``. ``reasons`` says why a flow is not
IN_SYNC, one line each (a critical condition's line is ``CODE: message``); warning conditions are lines
of ``warnings``.

Record lag is the source high watermark the replication consumer last saw minus the next offset to
replicate (the last source offset the target acknowledged, or the committed one the task resumed from,
plus one); unknown (``null``) until both are known.

The target latency is the connector config key :data:`TARGET_LATENCY_CONFIG` of the flow's
MirrorSourceConnector (the smallest if it has several), in milliseconds, default
:data:`DEFAULT_TARGET_LATENCY_MS`, at least :data:`MIN_TARGET_LATENCY_MS`.

The document (:func:`mirror_status`): ``{"generated_ms", "flows": [flow]}``, a flow being ``{"flow":
"A->B", "source", "target", "status", "in_sync", "reasons", "warnings", "conditions" (each
``Condition.to_json``: code, severity, cluster, client, subject, connector, task, since_ms, message),
"target_latency_ms", "heartbeat_age_ms" (null without a replicated heartbeats topic),
"heartbeats_max_age_ms", "topics", "checkpoints", "connectors"}``; a topic row ``{"topic", "state",
"in_sync" (null unless ACTIVE), "reason", "latency_ms", "max_latency_ms" (over partitions),
"record_lag", "lag_ms" (the age of the oldest record not yet copied, the largest over partitions),
"partition_lags" (``{"partition", "record_lag", "lag_ms"}`` each), "last_record_age_ms" (now
minus the newest replicated record's timestamp), "records_replicated" (acknowledged since the tasks
started), "records_lost" and "truncations" (records lost to truncation and gaps reported since the
tasks started: connectors.mirror.truncation), "partitions"}``; ``warnings`` has one line per topic
with a gap (a gap does not change the status: it is history, not a state); a checkpoint row ``{"group", "latency_ms" (the largest windowed average over
its partitions), "last_latency_ms", "partitions"}`` (checkpoint lag is shown as this latency: the
time a group's committed offsets take to reach the target, not an offset distance); a connector
``{"name", "kind", "state", "worker_id", "error", "tasks": [{"id", "state", "worker_id", "error"}],
"config"}`` where ``error`` is the first line of the trace, with its root cause's line when it has one.

Connector configs are shown with secrets masked (:func:`mask_config`). Times are milliseconds since
the epoch, read from the workers' clocks (which the latency metrics already assume agree).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyconnect.conditions import CRITICAL, Condition
from pyconnect.conditions import line as condition_line
from pyconnect.mirror_status.flow_conditions import (
    heartbeat_condition,
    is_heartbeats_topic,
    stalled_conditions,
)
from pyconnect.mirror_status.progress import (
    CHECKPOINT_GROUP,
    MIRROR_DOMAIN,
    PROGRESS_GROUP,
    SOURCE_GROUP,
    CheckpointProgress,
    ConnectorView,
    PartitionProgress,
    Progress,
    hub_progress,
    progress_from_readings,
)

__all__ = [  # the inputs are re-exported: callers name the view's module only
    "CHECKPOINT_GROUP",
    "MIRROR_DOMAIN",
    "PROGRESS_GROUP",
    "SOURCE_GROUP",
    "CheckpointProgress",
    "ConnectorView",
    "PartitionProgress",
    "Progress",
    "hub_progress",
    "mirror_status",
    "progress_from_readings",
]

TARGET_LATENCY_CONFIG = "pyconnect.mirror.target.latency.ms"
DEFAULT_TARGET_LATENCY_MS = 30_000
MIN_TARGET_LATENCY_MS = 1_000
HEARTBEATS_MAX_AGE_CONFIG = "pyconnect.mirror.heartbeats.max.age.ms"
"""MirrorSourceConnector key: how old the newest heartbeat that crossed the flow may be before the flow
has ``HEARTBEATS_MISSING`` (default: the target latency)."""

CONNECTOR_KINDS = {
    "MirrorSourceConnector": "source",
    "MirrorCheckpointConnector": "checkpoint",
    "MirrorHeartbeatConnector": "heartbeat",
}

IN_SYNC, LAGGING, UNKNOWN, NOT_RUNNING, FAILED = "IN_SYNC", "LAGGING", "UNKNOWN", "NOT_RUNNING", "FAILED"
STALLED = "STALLED"
STATUSES = (IN_SYNC, LAGGING, STALLED, UNKNOWN, NOT_RUNNING, FAILED)
ACTIVE, INACTIVE, STALE = "ACTIVE", "INACTIVE", "STALE"
RUNNING = "RUNNING"

HIDDEN = "[hidden]"
_SECRET_KEY = re.compile(
    r"password|passwd|secret|credential|token|jaas\.config|private|api\.?key|(^|[._-])key$|keystore\.key",
    re.IGNORECASE,
)


# -- config ------------------------------------------------------------------------------------------


def duration_ms_error(key: str, value: str | None, minimum: int = MIN_TARGET_LATENCY_MS) -> str | None:
    """Why ``value`` is not a valid duration in milliseconds for ``key`` (a LONG of at least
    ``minimum``), or ``None`` (absent is valid); worded as Java's ConfigDef words its errors."""
    if value is None:
        return None
    text = value.strip()
    try:
        number = int(text)
    except ValueError:
        return f"Invalid value {value} for configuration {key}: Not a number of type LONG"
    if number < minimum:
        return f"Invalid value {number} for configuration {key}: Value must be at least {minimum}"
    return None


def target_latency_error(value: str | None) -> str | None:
    """Why ``value`` is not a valid :data:`TARGET_LATENCY_CONFIG`, or ``None`` (absent is valid)."""
    return duration_ms_error(TARGET_LATENCY_CONFIG, value)


def heartbeats_max_age_error(value: str | None) -> str | None:
    """Why ``value`` is not a valid :data:`HEARTBEATS_MAX_AGE_CONFIG`, or ``None`` (absent is valid)."""
    return duration_ms_error(HEARTBEATS_MAX_AGE_CONFIG, value)


def _duration_ms(config: Mapping[str, str], key: str, default: int) -> int:
    value = config.get(key)
    if value is None or duration_ms_error(key, value) is not None:
        return default
    return int(value.strip())


def target_latency_ms(config: Mapping[str, str]) -> int:
    """The flow's target latency from a connector config (the default when absent or invalid)."""
    return _duration_ms(config, TARGET_LATENCY_CONFIG, DEFAULT_TARGET_LATENCY_MS)


def heartbeats_max_age_ms(config: Mapping[str, str]) -> int:
    """The heartbeat age bound from a connector config (the target latency when absent or invalid)."""
    return _duration_ms(config, HEARTBEATS_MAX_AGE_CONFIG, target_latency_ms(config))


def is_secret_key(key: str) -> bool:
    return _SECRET_KEY.search(key) is not None


def mask_config(config: Mapping[str, str], password_keys: Iterable[str] = ()) -> dict[str, str]:
    """``config`` with the value of every secret key replaced by ``[hidden]``: the keys declared as
    passwords (``password_keys``, also under any client prefix) and every key whose name looks like a
    secret (password, secret, credential, token, key material, a JAAS config)."""
    declared = tuple(password_keys)
    out: dict[str, str] = {}
    for key, value in sorted(config.items()):
        secret = is_secret_key(key) or any(key == d or key.endswith("." + d) for d in declared)
        out[key] = HIDDEN if secret and value else value
    return out


def connector_kind(config: Mapping[str, str]) -> str | None:
    """``source``, ``checkpoint`` or ``heartbeat`` for MirrorMaker 2 connectors, else ``None``."""
    simple = config.get("connector.class", "").rsplit(".", 1)[-1]
    return CONNECTOR_KINDS.get(simple)


def flow_of(config: Mapping[str, str]) -> tuple[str, str] | None:
    """(source alias, target alias) of a MirrorMaker 2 connector config (Java's defaults ``source`` and
    ``target`` when a key is absent), ``None`` for other connectors."""
    if connector_kind(config) is None:
        return None
    return config.get("source.cluster.alias") or "source", config.get("target.cluster.alias") or "target"


def task_worker_ids(connectors: Iterable[ConnectorView]) -> set[str]:
    """The workers that run a task of a MirrorMaker 2 connector (whose metrics the view needs)."""
    out: set[str] = set()
    for view in connectors:
        if flow_of(view.config) is None or view.status is None:
            continue
        for task in view.status.get("tasks") or []:
            worker = task.get("worker_id")
            if isinstance(worker, str) and worker:
                out.add(worker)
    return out


# -- the computation --------------------------------------------------------------------------------


CAUSE_MARKERS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
"""How Python's traceback text separates a chained exception from the one it caused."""


def _first_line(trace: Any) -> str | None:
    """The trace's first line (the failure, as Java's traces start) and, when the failure was caused
    by another exception, the root cause's line: ``<failure> (caused by <root cause>)``. The root
    cause is printed first in the traceback text, its exception line just before the first marker."""
    if not isinstance(trace, str) or not trace.strip():
        return None
    lines = trace.strip().splitlines()
    first = lines[0]
    for index, line in enumerate(lines):
        if line.strip() in CAUSE_MARKERS:
            root = next((c.strip() for c in reversed(lines[:index]) if c.strip()), "")
            return f"{first} (caused by {root})" if root and root != first else first
    return first


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def topic_status(
    topic: str, partitions: Sequence[PartitionProgress], target_ms: int, now_ms: int
) -> dict[str, Any]:
    """One remote topic's row (see the module docstring for its state and sync rules)."""
    states: list[str] = []
    for p in partitions:
        lag = p.record_lag
        if (
            p.newest_timestamp_ms is not None
            and p.task_start_ms is not None
            and p.newest_timestamp_ms < p.task_start_ms
            and not lag
        ):
            states.append(STALE)
        elif p.latency_avg_ms is not None or (lag is not None and lag > 0):
            states.append(ACTIVE)
        else:
            states.append(INACTIVE)
    state = ACTIVE if ACTIVE in states else STALE if STALE in states else INACTIVE
    active = [p for p, s in zip(partitions, states, strict=True) if s == ACTIVE]
    latencies = [p.latency_avg_ms for p in active if p.latency_avg_ms is not None]
    latency = _mean(latencies)
    lags = [lag for p in partitions if (lag := p.record_lag) is not None]
    newest = [p.newest_timestamp_ms for p in partitions if p.newest_timestamp_ms is not None]
    records = [p.records for p in partitions if p.records is not None]
    lost = [p.truncated_records for p in partitions if p.truncated_records is not None]
    gaps = [p.truncations for p in partitions if p.truncations is not None]
    in_sync: bool | None = None
    reason = None
    if state == ACTIVE:
        behind = [b for p in partitions if (b := p.behind_ms(now_ms)) is not None]
        unknown = any(p.record_lag and p.behind_ms(now_ms) is None for p in partitions)
        if behind and max(behind) >= target_ms:
            in_sync = False
            reason = f"the copy runs {max(behind) / 1000:.1f} s behind the source, target {target_ms} ms"
        elif not unknown:
            in_sync = True
        elif latency is None:
            in_sync, reason = False, "records waiting, none replicated in the metrics window"
        elif latency >= target_ms:
            in_sync = False
            reason = f"average replication latency {latency:.0f} ms, target {target_ms} ms"
        else:
            in_sync = True
    lag_times = [t for p in partitions if (t := p.lag_ms(now_ms)) is not None]
    return {
        "topic": topic,
        "state": state,
        "in_sync": in_sync,
        "reason": reason,
        "latency_ms": None if latency is None else round(latency, 1),
        "max_latency_ms": None if not latencies else round(max(latencies), 1),
        "record_lag": sum(lags) if lags else None,
        "lag_ms": max(lag_times) if lag_times else None,
        "last_record_age_ms": now_ms - max(newest) if newest else None,
        "records_replicated": int(sum(records)) if records else 0,
        "records_lost": int(sum(lost)) if lost else 0,
        "truncations": int(sum(gaps)) if gaps else 0,
        "partitions": len(partitions),
        "partition_lags": [
            {"partition": p.partition, "record_lag": p.record_lag, "lag_ms": p.lag_ms(now_ms)}
            for p in partitions
        ],
    }


def _checkpoint_rows(checkpoints: Sequence[CheckpointProgress]) -> list[dict[str, Any]]:
    by_group: dict[str, list[CheckpointProgress]] = {}
    for c in checkpoints:
        by_group.setdefault(c.group, []).append(c)
    rows = []
    for group in sorted(by_group):
        items = by_group[group]
        averages = [c.latency_avg_ms for c in items if c.latency_avg_ms is not None]
        lasts = [c.latency_ms for c in items if c.latency_ms is not None]
        rows.append(
            {
                "group": group,
                "latency_ms": None if not averages else round(max(averages), 1),
                "last_latency_ms": None if not lasts else round(max(lasts), 1),
                "partitions": len(items),
            }
        )
    return rows


def _connector_row(view: ConnectorView, password_keys: Iterable[str]) -> dict[str, Any]:
    status = view.status or {}
    connector = status.get("connector") or {}
    tasks = [
        {
            "id": t.get("id"),
            "state": t.get("state"),
            "worker_id": t.get("worker_id"),
            "error": _first_line(t.get("trace")),
        }
        for t in sorted(status.get("tasks") or [], key=lambda t: t.get("id", 0))
    ]
    return {
        "name": view.name,
        "kind": connector_kind(view.config),
        "state": connector.get("state"),
        "worker_id": connector.get("worker_id"),
        "error": _first_line(connector.get("trace")),
        "tasks": tasks,
        "config": mask_config(view.config, password_keys),
    }


def _run_state_reasons(
    rows: Sequence[dict[str, Any]], now_ms: int
) -> tuple[str | None, list[str], list[Condition]]:
    """The worst run state of a flow's connectors and tasks, a reason line for each that is not
    RUNNING, and the conditions derived from them (``TASK_FAILED``, ``REBALANCING``)."""
    worst: str | None = None
    reasons: list[str] = []
    derived: list[Condition] = []
    for row in rows:
        items = [(f"connector {row['name']}", row["name"], None, row["state"], row["error"])] + [
            (f"task {row['name']}-{t['id']}", row["name"], t["id"], t["state"], t["error"])
            for t in row["tasks"]
        ]
        for what, connector, task, state, error in items:
            if state == RUNNING:
                continue
            if state == "FAILED":
                worst = FAILED
                derived.append(
                    Condition(
                        "TASK_FAILED",
                        f"{what} is FAILED: {error or 'no trace'}",
                        now_ms,
                        subject=what,
                        connector=connector,
                        task=task,
                    )
                )
            elif worst is None:
                worst = NOT_RUNNING
            if state == "UNASSIGNED":
                derived.append(
                    Condition(
                        "REBALANCING",
                        f"{what} is UNASSIGNED",
                        now_ms,
                        subject=what,
                        connector=connector,
                        task=task,
                    )
                )
            reasons.append(f"{what} is {state or 'without status'}" + (f": {error}" if error else ""))
    return worst, reasons, derived


def mirror_status(
    connectors: Sequence[ConnectorView],
    progress: Progress,
    *,
    now_ms: int,
    unreachable: Mapping[str, str] | None = None,
    password_keys: Iterable[str] = (),
) -> dict[str, Any]:
    """The status document: ``{"generated_ms", "flows": [...]}``, flows sorted by (source, target).

    ``unreachable`` maps each worker whose metrics could not be read to why; a flow with a task there
    is ``UNKNOWN`` unless a run state already decides it."""
    unreachable = dict(unreachable or {})
    password_keys = tuple(password_keys)
    flows: dict[tuple[str, str], list[ConnectorView]] = {}
    for view in connectors:
        flow = flow_of(view.config)
        if flow is not None:
            flows.setdefault(flow, []).append(view)
    emitting_into = {  # the clusters a MirrorHeartbeatConnector writes heartbeats to
        target
        for (_, target), views in flows.items()
        for v in views
        if connector_kind(v.config) == "heartbeat"
    }
    documents = []
    for (source, target), views in sorted(flows.items()):
        views = sorted(views, key=lambda v: v.name)
        sources = [v for v in views if connector_kind(v.config) == "source"]
        target_ms = min((target_latency_ms(v.config) for v in sources), default=DEFAULT_TARGET_LATENCY_MS)
        heartbeat_bound_ms = min(
            (heartbeats_max_age_ms(v.config) for v in sources), default=DEFAULT_TARGET_LATENCY_MS
        )
        separator = next((sep for v in sources if (sep := v.config.get("replication.policy.separator"))), ".")
        rows = [_connector_row(v, password_keys) for v in views]
        run_state, reasons, conditions = _run_state_reasons(rows, now_ms)
        names = {v.name for v in views}
        conditions += sorted(
            (c for c in progress.conditions if c.connector in names),
            key=lambda c: (c.connector or "", c.task if c.task is not None else -1, c.code, c.subject),
        )
        by_topic: dict[str, list[PartitionProgress]] = {}
        for p in progress.partitions:
            if (p.source, p.target) == (source, target):
                by_topic.setdefault(p.topic, []).append(p)
        topics = [
            topic_status(topic, sorted(parts, key=lambda p: p.partition), target_ms, now_ms)
            for topic, parts in sorted(by_topic.items())
        ]
        conditions += stalled_conditions(by_topic, source, target_ms, now_ms)
        heartbeat_parts = [
            p for topic, parts in by_topic.items() if is_heartbeats_topic(topic, separator) for p in parts
        ]
        heartbeat_age, missing_heartbeats = heartbeat_condition(
            heartbeat_parts, source, heartbeat_bound_ms, now_ms, source in emitting_into
        )
        if missing_heartbeats is not None:
            conditions.append(missing_heartbeats)
        lagging = [t for t in topics if t["in_sync"] is False]
        flow_workers = {t["worker_id"] for row in rows for t in row["tasks"] if t["worker_id"]}
        missing = {w: why for w, why in unreachable.items() if w in flow_workers}
        for worker, why in sorted(missing.items()):
            reasons.append(f"worker {worker} did not answer for its metrics: {why}")
            conditions.append(
                Condition(
                    "WORKER_UNREACHABLE", f"worker {worker} did not answer: {why}", now_ms, subject=worker
                )
            )
        for t in lagging:
            reasons.append(f"topic {t['topic']} lags: {t['reason']}")
        critical = [c for c in conditions if c.severity == CRITICAL]
        run_lines = {"TASK_FAILED", "WORKER_UNREACHABLE"}  # their reasons are the lines above
        reasons += [condition_line(c) for c in critical if c.code not in run_lines]
        warnings = [
            f"topic {t['topic']}: {t['truncations']} truncation gaps, {t['records_lost']} records lost "
            "before they were replicated (see the source task's log)"
            for t in topics
            if t["truncations"]
        ]
        warnings += [
            condition_line(c)
            for c in conditions
            if c.severity != CRITICAL and c.code not in ("REBALANCING", "TRUNCATED")
        ]
        if run_state is not None:
            status = run_state
        elif missing:
            status = UNKNOWN
        elif critical:
            status = STALLED
        elif lagging:
            status = LAGGING
        else:
            status = IN_SYNC
        checkpoints = [c for c in progress.checkpoints if (c.source, c.target) == (source, target)]
        documents.append(
            {
                "flow": f"{source}->{target}",
                "source": source,
                "target": target,
                "status": status,
                "in_sync": status == IN_SYNC,
                "reasons": reasons,
                "warnings": warnings,
                "conditions": [c.to_json() for c in conditions],
                "target_latency_ms": target_ms,
                "heartbeat_age_ms": heartbeat_age,
                "heartbeats_max_age_ms": heartbeat_bound_ms,
                "topics": topics,
                "checkpoints": _checkpoint_rows(checkpoints),
                "connectors": rows,
            }
        )
    return {"generated_ms": now_ms, "flows": documents}
