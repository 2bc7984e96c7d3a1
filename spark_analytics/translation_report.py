"""The results of the offset translation audit (:mod:`spark_analytics.translation_audit`) and how they
are shown: one :class:`CheckpointCheck` per checkpoint audited, per-group re-read statistics, offset-sync
checks, and the :class:`CommittedAudit` of committed group offsets. Pure, no Spark.

**Committed group offsets.** A group's committed offset on the target (synced from checkpoints, or
committed by a failover) is judged like a checkpoint: with ``upstream`` the group's committed offset on
the source and ``downstream`` its committed offset on the target, it must be at or before the first copy
of the group's next record (no skip); the records between are what a consumer resuming there re-reads.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spark_analytics.tables import format_table

REREAD_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0", 0, 0),
    ("1-9", 1, 9),
    ("10-99", 10, 99),
    ("100-999", 100, 999),
    ("1000+", 1000, None),
)
SYNC_OK, SYNC_VIOLATION, SYNC_UNVERIFIABLE = "ok", "violation", "unverifiable"


@dataclass(frozen=True)
class CheckpointCheck:
    """One checkpoint against the data (``topic`` is the source name, ``remote_topic`` the target's)."""

    group: str
    topic: str
    remote_topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    true_position: int
    reread: int
    skipped: int

    @property
    def violation(self) -> bool:
        return self.downstream_offset > self.true_position

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "violation": self.violation}


@dataclass(frozen=True)
class GroupRereads:
    """The re-read counts of every checkpoint of one group: summary statistics and a histogram."""

    group: str
    checkpoints: int
    violations: int
    reread_min: int
    reread_p50: int
    reread_p90: int
    reread_max: int
    reread_mean: float
    histogram: dict[str, int]


@dataclass(frozen=True)
class SyncCheck:
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    status: str


@dataclass(frozen=True)
class CommittedAudit:
    """The committed group offsets on the target, each a :class:`CheckpointCheck` (``upstream_offset``: the
    group's committed offset on the source; ``downstream_offset``: on the target). ``note`` says why none
    were checked (e.g. the offsets could not be read)."""

    checks: list[CheckpointCheck] = field(default_factory=list)
    note: str | None = None

    @property
    def violations(self) -> int:
        return sum(1 for c in self.checks if c.violation)

    def by_group(self) -> dict[str, dict[str, int]]:
        """Per group: partitions checked, records re-read and skipped, violations."""
        found: dict[str, dict[str, int]] = {}
        for check in self.checks:
            entry = found.setdefault(
                check.group, {"partitions": 0, "reread": 0, "skipped": 0, "violations": 0}
            )
            entry["partitions"] += 1
            entry["reread"] += check.reread
            entry["skipped"] += check.skipped
            entry["violations"] += int(check.violation)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "note": self.note,
            "violations": self.violations,
            "groups": self.by_group(),
            "partitions": [c.to_json() for c in self.checks],
        }

    def render(self) -> list[str]:
        if not self.checks:
            return [f"committed group offsets: none checked{f' ({self.note})' if self.note else ''}"]
        rows = [
            (g, e["partitions"], e["reread"], e["skipped"], e["violations"])
            for g, e in sorted(self.by_group().items())
        ]
        lines = [
            f"committed group offsets on the target: {len(self.checks)} checked, {self.violations} violations"
        ]
        lines.append(format_table(("group", "partitions", "reread", "skipped", "violations"), rows))
        for c in self.checks:
            if c.violation:
                lines.append(
                    f"VIOLATION group {c.group} committed {c.downstream_offset} on {c.remote_topic}-{c.partition}, "
                    f"past the first copy of its next record ({c.true_position}): {c.skipped} records skipped"
                )
        return lines


@dataclass(frozen=True)
class TranslationAudit:
    source_alias: str
    target_alias: str
    remote_topics: dict[str, str]
    offset_syncs_topic: str
    checkpoints_topic: str
    syncs: dict[str, int]
    checkpoints: int
    violations: int
    undecodable: dict[str, int]
    groups: list[GroupRereads] = field(default_factory=list)
    latest: list[CheckpointCheck] = field(default_factory=list)
    violation_samples: list[CheckpointCheck] = field(default_factory=list)
    sync_violation_samples: list[SyncCheck] = field(default_factory=list)
    committed: CommittedAudit = field(default_factory=CommittedAudit)

    @property
    def sync_violations(self) -> int:
        return self.syncs.get(SYNC_VIOLATION, 0)

    def ok(self) -> bool:
        return self.violations == 0 and self.sync_violations == 0 and self.committed.violations == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "source_alias": self.source_alias,
            "target_alias": self.target_alias,
            "remote_topics": self.remote_topics,
            "offset_syncs_topic": self.offset_syncs_topic,
            "checkpoints_topic": self.checkpoints_topic,
            "ok": self.ok(),
            "checkpoints": self.checkpoints,
            "violations": self.violations,
            "syncs": self.syncs,
            "undecodable": self.undecodable,
            "groups": [asdict(g) for g in self.groups],
            "latest": [c.to_json() for c in self.latest],
            "violation_samples": [c.to_json() for c in self.violation_samples],
            "sync_violation_samples": [asdict(s) for s in self.sync_violation_samples],
            "committed_offsets": self.committed.to_json(),
        }

    def render(self, latest_rows: int = 50) -> str:
        syncs = ", ".join(f"{n} {status}" for status, n in self.syncs.items()) or "none"
        lines = [
            f"offset syncs ({self.offset_syncs_topic}): {syncs}",
            f"checkpoints ({self.checkpoints_topic}): {self.checkpoints} checked, {self.violations} violations",
        ]
        if any(self.undecodable.values()):
            lines.append(f"undecodable records skipped: {self.undecodable}")
        if self.groups:
            lines.append("")
            header = (
                "group",
                "checkpoints",
                "violations",
                "reread min",
                "p50",
                "p90",
                "max",
                "mean",
                *(name for name, _, _ in REREAD_BUCKETS),
            )
            rows = [
                (
                    g.group,
                    g.checkpoints,
                    g.violations,
                    g.reread_min,
                    g.reread_p50,
                    g.reread_p90,
                    g.reread_max,
                    round(g.reread_mean, 1),
                    *(g.histogram[n] for n, _, _ in REREAD_BUCKETS),
                )
                for g in self.groups
            ]
            lines.append(format_table(header, rows))
        if self.latest:
            lines.append("")
            lines.append("latest checkpoint per group and partition:")
            latest_header = (
                "group",
                "remote topic",
                "part",
                "upstream",
                "downstream",
                "true pos",
                "reread",
                "skipped",
            )
            rows = [
                (
                    c.group,
                    c.remote_topic,
                    c.partition,
                    c.upstream_offset,
                    c.downstream_offset,
                    c.true_position,
                    c.reread,
                    c.skipped,
                )
                for c in self.latest[:latest_rows]
            ]
            lines.append(format_table(latest_header, rows))
            if len(self.latest) > latest_rows:
                lines.append(f"... {len(self.latest) - latest_rows} more (see --json)")
        for c in self.violation_samples:
            lines.append(
                f"VIOLATION group {c.group} {c.remote_topic}-{c.partition}: upstream {c.upstream_offset} "
                f"translated to {c.downstream_offset} > true position {c.true_position} "
                f"({c.skipped} records skipped)"
            )
        for s in self.sync_violation_samples:
            lines.append(
                f"SYNC VIOLATION {s.topic}-{s.partition}: upstream {s.upstream_offset} -> downstream "
                f"{s.downstream_offset} is not a copy"
            )
        lines.append("")
        lines.extend(self.committed.render())
        lines.append(f"translation audit: {'OK' if self.ok() else 'FAILED'}")
        return "\n".join(lines)
