"""The inputs of the mirror status view (pyconnect.mirror_status.core): what each worker's mirror task
metrics and task conditions show, as ``GET /mirrors/progress`` serves them (pure).

``MirrorSourceProgress`` and the ``MirrorSourceConnector``/``MirrorCheckpointConnector`` metrics of the
domain ``kafka.connect.mirror`` (connectors.mirror.metrics) become :class:`PartitionProgress` and
:class:`CheckpointProgress` rows; the conditions of the worker's tasks (pyconnect.conditions) travel
with them. :meth:`Progress.from_json` refuses anything but the document :meth:`Progress.to_json` writes
(a peer's answer is untrusted input).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from pyconnect.conditions import Condition
from pyconnect.metrics.registry import MetricReading, MetricsHub

MIRROR_DOMAIN = "kafka.connect.mirror"
SOURCE_GROUP = "MirrorSourceConnector"
PROGRESS_GROUP = "MirrorSourceProgress"
CHECKPOINT_GROUP = "MirrorCheckpointConnector"


@dataclass(frozen=True, slots=True)
class PartitionProgress:
    """One replicated partition as one worker's MirrorSource task metrics show it."""

    source: str
    target: str
    topic: str
    partition: int
    records: float | None = None
    latency_avg_ms: float | None = None
    record_age_ms: float | None = None
    task_start_ms: int | None = None
    newest_timestamp_ms: int | None = None
    last_replicated_ms: int | None = None
    replicated_offset: int | None = None
    end_offset: int | None = None
    truncated_records: float | None = None
    truncations: float | None = None
    oldest_pending_timestamp_ms: int | None = None

    @property
    def record_lag(self) -> int | None:
        if self.end_offset is None or self.replicated_offset is None:
            return None
        return max(0, self.end_offset - (self.replicated_offset + 1))

    def behind_ms(self, now_ms: int) -> int | None:
        """How far the copy runs behind the source now: 0 with no record lag; else the age of the oldest
        polled record still unacknowledged; else (records wait unpolled) the latency of the last record
        copied (acknowledged at ``last_replicated_ms``, written at ``newest_timestamp_ms``: records are
        copied in offset order, so that is the lag the copy had reached); ``None`` while unknown."""
        lag = self.record_lag
        if lag is None:
            return None
        if lag == 0:
            return 0
        if self.oldest_pending_timestamp_ms is not None:
            return max(0, now_ms - self.oldest_pending_timestamp_ms)
        if self.last_replicated_ms is not None and self.newest_timestamp_ms is not None:
            return max(0, self.last_replicated_ms - self.newest_timestamp_ms)
        return None

    def lag_ms(self, now_ms: int) -> int | None:
        """The age of the oldest record not yet copied: 0 with no record lag; else the oldest polled
        record still unacknowledged, or (none polled yet) the newest copied one's, a bound from above
        (the next record was written after it); ``None`` while unknown."""
        lag = self.record_lag
        if lag is None:
            return None
        if lag == 0:
            return 0
        oldest = self.oldest_pending_timestamp_ms
        if oldest is None:
            oldest = self.newest_timestamp_ms
        return None if oldest is None else max(0, now_ms - oldest)


@dataclass(frozen=True, slots=True)
class CheckpointProgress:
    """One checkpointed (group, remote topic, partition) as one worker's checkpoint metrics show it."""

    source: str
    target: str
    group: str
    topic: str
    partition: int
    latency_ms: float | None = None
    latency_avg_ms: float | None = None


@dataclass(frozen=True, slots=True)
class ConnectorView:
    """A connector of the worker's config snapshot: its config and its status JSON (``None`` when the
    status topic has none yet)."""

    name: str
    config: Mapping[str, str]
    status: Mapping[str, Any] | None = None


@dataclass
class Progress:
    """What the workers' metrics and task conditions show (the answer of each worker, merged)."""

    partitions: list[PartitionProgress] = field(default_factory=list)
    checkpoints: list[CheckpointProgress] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "partitions": [asdict(p) for p in self.partitions],
            "checkpoints": [asdict(c) for c in self.checkpoints],
            "conditions": [c.to_json() for c in self.conditions],
        }

    @classmethod
    def from_json(cls, body: Any) -> Progress:
        """The inverse of :meth:`to_json`; ``ValueError`` for anything else."""
        if not isinstance(body, dict):
            raise ValueError("mirror progress must be a JSON object")
        return cls(
            [_from_fields(PartitionProgress, item) for item in _list(body.get("partitions"))],
            [_from_fields(CheckpointProgress, item) for item in _list(body.get("checkpoints"))],
            [Condition.from_json(item) for item in _list(body.get("conditions"))],
        )

    def extend(self, other: Progress) -> None:
        self.partitions += other.partitions
        self.checkpoints += other.checkpoints
        self.conditions += other.conditions


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("mirror progress lists must be JSON arrays")
    return value


_TEXT_FIELDS = frozenset(("source", "target", "topic", "group"))


def _from_fields(cls: Any, item: Any) -> Any:
    """``cls`` from a JSON object: names are strings, ``partition`` an integer, every other field a
    number or null (``ValueError`` otherwise, naming the field)."""
    if not isinstance(item, dict):
        raise ValueError(f"{cls.__name__} must be a JSON object")
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in item:
            continue
        value = item[f.name]
        if f.name in _TEXT_FIELDS:
            ok = isinstance(value, str)
        elif f.name == "partition":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool))
        if not ok:
            raise ValueError(f"{cls.__name__}: {f.name} cannot be {value!r}")
        values[f.name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ValueError(f"{cls.__name__}: {exc}") from None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) or math.isinf(value) else float(value)


def _int(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


_PROGRESS_ATTRIBUTES = {
    ("MirrorSourceConnector", "record-count"): ("records", _number),
    ("MirrorSourceConnector", "replication-latency-ms-avg"): ("latency_avg_ms", _number),
    ("MirrorSourceConnector", "record-age-ms"): ("record_age_ms", _number),
    ("MirrorSourceConnector", "truncated-record-count"): ("truncated_records", _number),
    ("MirrorSourceConnector", "truncation-count"): ("truncations", _number),
    ("MirrorSourceProgress", "task-start-ms"): ("task_start_ms", _int),
    ("MirrorSourceProgress", "last-record-timestamp-ms"): ("newest_timestamp_ms", _int),
    ("MirrorSourceProgress", "last-replicated-ms"): ("last_replicated_ms", _int),
    ("MirrorSourceProgress", "replicated-offset"): ("replicated_offset", _int),
    ("MirrorSourceProgress", "end-offset"): ("end_offset", _int),
    ("MirrorSourceProgress", "oldest-pending-timestamp-ms"): ("oldest_pending_timestamp_ms", _int),
}
_CHECKPOINT_ATTRIBUTES = {
    "checkpoint-latency-ms": ("latency_ms", _number),
    "checkpoint-latency-ms-avg": ("latency_avg_ms", _number),
}


def progress_from_readings(readings: Iterable[MetricReading]) -> Progress:
    """The mirror tasks' partitions and checkpoints among one worker's metric readings."""
    partitions: dict[tuple[str, ...], dict[str, Any]] = {}
    checkpoints: dict[tuple[str, ...], dict[str, Any]] = {}
    for reading in readings:
        name = reading.name
        if reading.domain != MIRROR_DOMAIN:
            continue
        tags = dict(name.tags)
        keys: tuple[str, ...]
        if name.group in (SOURCE_GROUP, PROGRESS_GROUP):
            wanted = _PROGRESS_ATTRIBUTES.get((name.group, name.name))
            keys = ("source", "target", "topic", "partition")
            table = partitions
        elif name.group == CHECKPOINT_GROUP:
            wanted = _CHECKPOINT_ATTRIBUTES.get(name.name)
            keys = ("source", "target", "group", "topic", "partition")
            table = checkpoints
        else:
            continue
        if wanted is None or any(k not in tags for k in keys):
            continue
        key = tuple(tags[k] for k in keys)
        entry = table.setdefault(key, dict(zip(keys, key, strict=True)))
        attribute, convert = wanted
        entry[attribute] = convert(reading.value)
    return Progress(
        [PartitionProgress(**{**e, "partition": int(e["partition"])}) for e in partitions.values()],
        [CheckpointProgress(**{**e, "partition": int(e["partition"])}) for e in checkpoints.values()],
    )


def hub_progress(hubs: Iterable[MetricsHub]) -> Progress:
    """The mirror task metrics and the task conditions of the workers these hubs belong to (a
    distributed worker has one; a dedicated MirrorMaker one per flow): ``GET /mirrors/progress``."""
    hubs = list(hubs)
    progress = progress_from_readings(
        reading
        for hub in hubs
        for registry in hub.registries()
        if registry.domain == MIRROR_DOMAIN
        for reading in registry.read(hub.now_ms())
    )
    progress.conditions = [c for hub in hubs for c in hub.conditions.snapshot()]
    return progress
