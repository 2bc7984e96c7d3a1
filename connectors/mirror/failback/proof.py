"""The proof that closes a failback or a cutover: what the audit is asked, and its verdict (pure).

Both commands end with an audit of the forward flow A->B over a fixed window of the two clusters (the
Spark audit of :mod:`spark_analytics.move_audit` is the :class:`Auditor` the command line passes in; this
module imports no Spark):

* :class:`AuditBounds`, recorded once in the command's state file at a moment the clusters stood still
  (a failback: A's and B's ends once the reverse flow caught up and the return syncs were written, just
  before the forward flow resumes; a cutover: the fenced ends once the groups moved and were verified).
  Records, offset syncs and checkpoints past them are left out: the applications may already write on the
  cluster they moved to while the audit runs.
* :class:`AuditRequest`: the flow, the topics (source name -> remote name), the bounds, the records A
  holds that B must lack (``expected``: a failback's orphans; none for a cutover), and each moved group's
  committed offsets on both sides (:class:`GroupPosition`).
* :class:`AuditObservation`: what the audit counted, per partition (A-only records with their first and
  last offset, B-only records, reordered copies, duplicates) and for the translation (checkpoints,
  committed offsets and offset syncs past the true position; per group re-read and skipped records).

:func:`judge` decides: the flow is proved when, per partition, the records on A that B lacks are exactly
the expected ones (same count, within the expected range), B holds nothing A lacks, nothing is reordered,
no checkpoint, committed offset or offset sync points past the data, and every moved group re-reads and
skips nothing. Duplicates on B are reported, not a finding, unless the flow runs exactly-once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from connectors.mirror.failback.ledger import OrphanRange
from connectors.mirror.offsets.failover_calls import FailoverError
from connectors.mirror.offsets.failover_state import parse_key

__all__ = [
    "EXIT_AUDIT_FINDINGS",
    "AuditBounds",
    "AuditFindings",
    "AuditObservation",
    "AuditRequest",
    "AuditVerdict",
    "Auditor",
    "GroupPosition",
    "PartitionCounts",
    "audit_lines",
    "judge",
    "positions_of",
]

EXIT_AUDIT_FINDINGS = 13
Partition = tuple[str, int]


class AuditFindings(FailoverError):
    """The audit that closes the command found what it must not (one line names it); the steps before it
    stay done, and running the command again audits again."""

    exit_code = EXIT_AUDIT_FINDINGS


@dataclass(frozen=True)
class AuditBounds:
    """Exclusive end offsets of the audit window: ``source_ends`` by source ``topic:partition`` on A,
    ``target_ends`` by remote ``topic:partition`` on B, and per partition of the offset-syncs and the
    checkpoints topics (``offset_syncs_ends``, ``checkpoints_ends``)."""

    source_ends: dict[str, int]
    target_ends: dict[str, int]
    offset_syncs_ends: dict[int, int] = field(default_factory=dict)
    checkpoints_ends: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "source_ends": dict(self.source_ends),
            "target_ends": dict(self.target_ends),
            "offset_syncs_ends": {str(p): o for p, o in self.offset_syncs_ends.items()},
            "checkpoints_ends": {str(p): o for p, o in self.checkpoints_ends.items()},
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> AuditBounds:
        """Raises ``KeyError``/``TypeError``/``ValueError`` on a malformed document."""
        for key in document["source_ends"]:
            parse_key(key)
        return cls(
            {str(k): int(v) for k, v in document["source_ends"].items()},
            {str(k): int(v) for k, v in document["target_ends"].items()},
            {int(p): int(o) for p, o in document.get("offset_syncs_ends", {}).items()},
            {int(p): int(o) for p, o in document.get("checkpoints_ends", {}).items()},
        )


@dataclass(frozen=True)
class GroupPosition:
    """Group ``group`` committed ``source_offset`` on A's ``topic``-``partition`` and ``target_offset`` on
    its remote partition on B."""

    group: str
    topic: str
    partition: int
    source_offset: int
    target_offset: int


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: flow ``source -> target`` (client configs as ``MirrorClientConfig`` maps), the
    ``remote_topics`` (source name -> name on B), the window, the ``expected`` A-only records per source
    partition, the moved ``groups`` and their ``positions``; reports go to ``out_dir``."""

    command: str
    source: str
    target: str
    source_config: dict[str, str]
    target_config: dict[str, str]
    policy_config: dict[str, str]
    offset_syncs_on_target: bool
    offset_syncs_topic: str
    checkpoints_topic: str
    remote_topics: dict[str, str]
    bounds: AuditBounds
    groups: tuple[str, ...]
    positions: tuple[GroupPosition, ...]
    out_dir: str
    expected: Mapping[Partition, OrphanRange] = field(default_factory=dict)
    exactly_once: bool = False
    timeout_s: float = 30.0


@dataclass(frozen=True)
class PartitionCounts:
    """One source partition in the window: records on A and B, A-only records (``a_only``, offsets
    ``a_only_first``..``a_only_last``), B-only records, copies out of order, extra copies on B."""

    topic: str
    partition: int
    source_count: int
    target_count: int
    a_only: int
    a_only_first: int | None
    a_only_last: int | None
    b_only: int
    reordered: int
    duplicates: int


@dataclass(frozen=True)
class AuditObservation:
    """What the audit counted (see the module docstring); ``reports`` are the written report files."""

    partitions: tuple[PartitionCounts, ...]
    checkpoint_violations: int
    committed_violations: int
    sync_violations: int
    groups: Mapping[str, Mapping[str, int]]
    """Per moved group: ``partitions`` checked, ``reread``, ``skipped``."""
    checkpoints: int
    offset_syncs: int
    seconds: float
    reports: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class Auditor(Protocol):
    """Runs the audit of a request (blocking; may take tens of seconds) and returns what it counted;
    raises on a cluster it cannot read."""

    def __call__(self, request: AuditRequest) -> AuditObservation: ...


@dataclass(frozen=True)
class AuditVerdict:
    ok: bool
    line: str
    findings: tuple[str, ...]
    observation: AuditObservation

    def to_json(self) -> dict[str, Any]:
        o = self.observation
        return {
            "ok": self.ok,
            "verdict": self.line,
            "findings": list(self.findings),
            "a_only": sum(p.a_only for p in o.partitions),
            "b_only": sum(p.b_only for p in o.partitions),
            "duplicates": sum(p.duplicates for p in o.partitions),
            "partitions": [asdict(p) for p in o.partitions],
            "groups": {g: dict(v) for g, v in o.groups.items()},
            "checkpoints": o.checkpoints,
            "offset_syncs": o.offset_syncs,
            "seconds": round(o.seconds, 1),
            "reports": list(o.reports),
            "notes": list(o.notes),
        }


def _partition_findings(
    counts: PartitionCounts, expected: OrphanRange | None, source: str, target: str
) -> list[str]:
    where = f"{counts.topic}-{counts.partition}"
    found = []
    want = expected.count if expected is not None else 0
    if counts.a_only != want:
        found.append(
            f"{where}: {counts.a_only} records on {source} that {target} lacks, expected {want}"
            + (" (the orphans)" if expected is not None else "")
        )
    elif want and expected is not None:
        first, last = counts.a_only_first, counts.a_only_last
        if first is None or last is None or first < (expected.first or 0) or last > (expected.last or -1):
            found.append(
                f"{where}: the records {target} lacks lie at {first}..{last}, the orphans at "
                f"{expected.first}..{expected.last}"
            )
    if counts.b_only:
        found.append(f"{where}: {counts.b_only} records on {target} that {source} lacks or that were altered")
    if counts.reordered:
        found.append(f"{where}: {counts.reordered} records out of order")
    return found


def judge(request: AuditRequest, observation: AuditObservation) -> AuditVerdict:
    """The verdict on ``observation`` for ``request`` (see the module docstring)."""
    findings: list[str] = []
    seen = set()
    for counts in observation.partitions:
        key = (counts.topic, counts.partition)
        seen.add(key)
        findings += _partition_findings(counts, request.expected.get(key), request.source, request.target)
    for key, orphans in sorted(request.expected.items()):
        if key not in seen and orphans.count:
            findings.append(f"{key[0]}-{key[1]}: the audit read none of the {orphans.count} orphans")
    duplicates = sum(p.duplicates for p in observation.partitions)
    if request.exactly_once and duplicates:
        findings.append(f"{duplicates} duplicates on {request.target} of a flow that runs exactly-once")
    for count, what in (
        (observation.checkpoint_violations, "checkpoints"),
        (observation.committed_violations, "committed group offsets"),
        (observation.sync_violations, "offset syncs"),
    ):
        if count:
            findings.append(f"{count} {what} past the data")
    missing_groups = [g for g in request.groups if g not in observation.groups]
    if missing_groups and request.positions:
        findings.append(f"no committed offsets checked for {', '.join(missing_groups)}")
    for group, totals in sorted(observation.groups.items()):
        if totals.get("reread", 0) or totals.get("skipped", 0):
            findings.append(
                f"group {group} re-reads {totals.get('reread', 0)} and skips {totals.get('skipped', 0)}"
            )
    a_only = sum(p.a_only for p in observation.partitions)
    summary = (
        f"{sum(p.source_count for p in observation.partitions)} records on {request.source}, "
        f"{sum(p.target_count for p in observation.partitions)} on {request.target}, {a_only} only on "
        f"{request.source}"
        + (f" (the {sum(o.count for o in request.expected.values())} orphans)" if request.expected else "")
        + f", {len(observation.groups)} groups re-read 0 and skip 0"
    )
    if duplicates and not request.exactly_once:
        summary += f", {duplicates} duplicates on {request.target} (allowed by at-least-once)"
    if findings:
        line = f"audit of {request.source}->{request.target}: FINDINGS: {'; '.join(findings)}"
    else:
        line = f"audit of {request.source}->{request.target}: PASS: {summary}"
    return AuditVerdict(not findings, line, tuple(findings), observation)


def audit_lines(audit: Mapping[str, Any] | None) -> list[str]:
    """The lines a command's text report gives a recorded verdict (:meth:`AuditVerdict.to_json`): the
    verdict, the A-only and B-only counts, each group's re-read and skipped records, the report files."""
    if not audit:
        return []
    lines = ["", audit["verdict"]]
    groups = audit.get("groups") or {}
    if groups:
        lines.append(
            "groups: "
            + ", ".join(
                f"{g} re-read {v.get('reread', 0)} skipped {v.get('skipped', 0)}"
                for g, v in sorted(groups.items())
            )
        )
    lines += [f"note: {n}" for n in audit.get("notes", [])]
    if audit.get("reports"):
        lines.append(f"audit reports: {' '.join(audit['reports'])}")
    return lines


def positions_of(
    moved: Mapping[str, Mapping[Partition, int]],
    stayed: Mapping[str, Mapping[Partition, int]],
    remote_topics: Mapping[str, str],
    *,
    moved_on_source: bool,
) -> tuple[GroupPosition, ...]:
    """The moved groups' :class:`GroupPosition` values: ``moved`` are the offsets the command committed
    (on A for a failback, ``moved_on_source``; on B for a cutover), ``stayed`` the group's committed
    offsets on the other cluster; both keyed by that cluster's topic names. Partitions without both are
    left out."""
    to_source = {remote: source for source, remote in remote_topics.items()}
    found = []
    for group, offsets in sorted(moved.items()):
        other = stayed.get(group, {})
        for (topic, partition), offset in sorted(offsets.items()):
            source_topic = topic if moved_on_source else to_source.get(topic)
            if source_topic is None or source_topic not in remote_topics:
                continue
            other_key = (
                (remote_topics[source_topic], partition) if moved_on_source else (source_topic, partition)
            )
            if other_key not in other:
                continue
            a, b = (offset, other[other_key]) if moved_on_source else (other[other_key], offset)
            found.append(GroupPosition(group, source_topic, partition, a, b))
    return tuple(found)
