"""The plan ``pyconnect offsets translate`` makes for one group: one row per partition (no I/O).

:class:`FailoverPlan` is what :mod:`connectors.mirror.offsets.failover` computes and commits and
:mod:`connectors.mirror.offsets.translate_render` prints; the meaning of each value of a
:class:`PlanRow` is in the docstring of :mod:`connectors.mirror.offsets.failover`. :data:`EXPORT_FIELDS`
are the keys of the JSON and CSV rows, in their order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pyconnect.kafka.group_admin import CommittedOffset

EXPORT_FIELDS = (
    "group",
    "source_cluster",
    "target_cluster",
    "topic",
    "partition",
    "target_topic",
    "source_offset",
    "source_offset_from",
    "checkpoint_upstream_offset",
    "translated_offset",
    "target_committed_offset",
    "expected_reread",
    "max_reread",
    "action",
    "metadata",
)


Action = Literal["commit", "keep", "skip-rewind", "rewind", "no-checkpoint"]


@dataclass(frozen=True)
class PlanRow:
    """One partition of the plan; the docstring of :mod:`connectors.mirror.offsets.failover` says what each
    value means."""

    topic: str
    partition: int
    target_topic: str
    source_offset: int | None
    source_offset_from: Literal["source", "checkpoint", "none"]
    checkpoint_upstream_offset: int | None
    translated_offset: int | None
    target_committed_offset: int | None
    expected_reread: int | None
    max_reread: int | None
    action: Action
    metadata: str = ""


@dataclass
class FailoverPlan:
    """The plan of one group from cluster ``source`` to cluster ``target``: its rows and what was read."""

    group: str
    source: str
    target: str
    checkpoints_topic: str
    rows: list[PlanRow]
    target_group_state: str
    source_reachable: bool
    offset_syncs_topic: str | None
    """The offset-syncs topic read for the re-read column, ``None`` when it could not be read."""
    notes: list[str] = field(default_factory=list)
    """One-line remarks for the operator (A unreachable, offset syncs unreadable, skipped records)."""

    @property
    def to_commit(self) -> dict[tuple[str, int], CommittedOffset]:
        """Target partition -> offset and metadata that ``--execute`` commits."""
        return {
            (row.target_topic, row.partition): CommittedOffset(row.translated_offset, row.metadata)
            for row in self.rows
            if row.action in ("commit", "rewind") and row.translated_offset is not None
        }

    @property
    def total_expected_reread(self) -> int | None:
        values = [r.expected_reread for r in self.rows if r.translated_offset is not None]
        if not values or any(v is None for v in values):
            return None
        return sum(v for v in values if v is not None)

    def export_rows(self) -> list[dict[str, Any]]:
        common = {"group": self.group, "source_cluster": self.source, "target_cluster": self.target}
        return [{k: {**common, **asdict(row)}[k] for k in EXPORT_FIELDS} for row in self.rows]
