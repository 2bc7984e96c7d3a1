"""Offending records fetched back for the report: what they hold, shown so an operator can find them.

:func:`sample_records` joins a small frame of ``topic, partition, kind, offset`` (at most a few dozen
rows, see :func:`spark_analytics.copies.leftovers`) with the records it points at: missing records on
the source, the other kinds on the target. An optional ``counterpart`` column is the offset on the other
cluster (:mod:`spark_analytics.copies`): each sample then carries ``source_offset`` and
``target_offset``, one of them its own ``offset``, the other null when there is no counterpart. Bytes are shown as text when they are printable
UTF-8, else as hex, cut at :data:`SHOWN_BYTES` bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from spark_analytics import copies

SHOWN_BYTES = 48
_OTHER = {
    copies.MISSING: "copy belongs before target",
    copies.MISMATCH: "before the copy of source",
    copies.DUPLICATE: "copy of source",
    copies.REORDERED: "copy of source",
}


def show_bytes(data: bytes | bytearray | None) -> str | None:
    """``None`` for null; printable UTF-8 as ``'text'``; anything else as ``0x`` hex; cut with ``...``."""
    if data is None:
        return None
    raw = bytes(data)
    cut = raw[:SHOWN_BYTES]
    suffix = "..." if len(raw) > SHOWN_BYTES else ""
    try:
        text = cut.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.isprintable():
        return repr(text) + suffix
    return "0x" + cut.hex() + suffix


@dataclass(frozen=True)
class SampledRecord:
    """One offending record: ``cluster`` is ``"source"`` for a missing one, else ``"target"``;
    ``counterpart`` is the offset on the other cluster: the source record a duplicate or a reordered copy
    copies, or, for a missing record or a mismatch, the other side's offset of the next copied record
    (where it sits)."""

    kind: str
    cluster: str
    topic: str
    remote_topic: str
    partition: int
    offset: int
    key: str | None
    value: str | None
    headers: list[tuple[str, str | None]]
    timestamp_ms: int | None
    counterpart: int | None = None

    @property
    def source_offset(self) -> int | None:
        return self.offset if self.cluster == "source" else self.counterpart

    @property
    def target_offset(self) -> int | None:
        return self.counterpart if self.cluster == "source" else self.offset

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "cluster": self.cluster,
            "topic": self.topic if self.cluster == "source" else self.remote_topic,
            "partition": self.partition,
            "offset": self.offset,
            "source_offset": self.source_offset,
            "target_offset": self.target_offset,
            "key": self.key,
            "value": self.value,
            "headers": [list(h) for h in self.headers],
            "timestamp_ms": self.timestamp_ms,
        }

    def describe(self) -> str:
        topic = self.topic if self.cluster == "source" else self.remote_topic
        headers = ", ".join(f"{k}={v}" for k, v in self.headers)
        other = "" if self.counterpart is None else f" ({_OTHER[self.kind]} {self.counterpart})"
        return (
            f"{self.kind:<9} {self.cluster} {topic}-{self.partition}@{self.offset}{other} key={self.key} "
            f"value={self.value} headers=[{headers}] timestamp={self.timestamp_ms}"
        )


def sample_records(
    offending: DataFrame, source: DataFrame, target: DataFrame, remote_topics: Mapping[str, str]
) -> list[SampledRecord]:
    """The records behind ``offending`` (``topic, partition, kind, offset``), in ``offending``'s order."""
    wanted = offending.collect()
    if not wanted:
        return []
    keys = ["topic", "partition", "offset"]
    picked = offending.select(*keys, "kind")
    on_source = picked.where(F.col("kind") == copies.MISSING).join(source, keys)
    on_target = picked.where(F.col("kind") != copies.MISSING).join(target, keys)
    found = {
        (r["kind"], r["topic"], r["partition"], r["offset"]): r
        for r in on_source.unionByName(on_target).collect()
    }
    out = []
    for w in wanted:
        row = found.get((w["kind"], w["topic"], w["partition"], w["offset"]))
        out.append(
            SampledRecord(
                kind=w["kind"],
                cluster="source" if w["kind"] == copies.MISSING else "target",
                topic=w["topic"],
                remote_topic=remote_topics.get(w["topic"], w["topic"]),
                partition=int(w["partition"]),
                offset=int(w["offset"]),
                key=show_bytes(row["key"]) if row else None,
                value=show_bytes(row["value"]) if row else None,
                headers=[(h["key"], show_bytes(h["value"])) for h in row["headers"]] if row else [],
                timestamp_ms=int(row["timestamp_ms"]) if row else None,
                counterpart=_counterpart(w),
            )
        )
    return out


def _counterpart(row: Row) -> int | None:
    value = row.asDict().get("counterpart")
    return None if value is None else int(value)
