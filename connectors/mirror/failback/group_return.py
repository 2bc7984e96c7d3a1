"""Where each consumer group returns to on the original cluster, and whether it may (pure).

For a group that failed over to B, :func:`plan_return` maps its committed offset on every partition of
B that the forward flow wrote (a partition of the :mod:`ledger <.ledger>`) to its offset on A
(:func:`~.positions.position_on_source`), and decides:

* ``refused`` (one line) when the group has members on B (its position still moves) or on A (an active
  group is never repositioned), or when a partition would move back on A past what the group already
  committed there (a rewind) without ``allow_rewind``;
* ``unproved`` partitions: no offset sync proves the position (the syncs expired); they are never
  committed (the group keeps its offset on A there), and the command stops before committing anything
  unless told ``--accept-unverified``.

A position between two runs of offset syncs (:class:`~.positions.Between`) is left ``between`` until the
caller counts the records around it and plans again with them (``settled``, by partition of B).

A partition of one of B's own topics that the reverse flow copies (``own``: under DefaultReplicationPolicy
B's ``orders``, copied to ``B.orders`` on A) returns on its copy on A
(:func:`~.positions.position_on_copy`), decided the same way. Partitions of B neither covers (topics the
forward flow did not write and the reverse flow does not copy, or that appeared on B after the failback
measured) are left out and named in ``others``: the reverse flow of this failback does not carry them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from connectors.mirror.failback.ledger import MirrorEnd
from connectors.mirror.failback.positions import (
    Between,
    Run,
    SourcePosition,
    Unproved,
    position_on_copy,
    position_on_source,
)
from pyconnect.kafka.group_view import GroupView

__all__ = ["GroupReturn", "PartitionReturn", "plan_return"]

Partition = tuple[str, int]


@dataclass(frozen=True)
class PartitionReturn:
    """One partition of the group: its committed offset on B (``target_topic``), its offset on A now,
    and where it returns (``position``; ``None`` with the reason in ``unproved``)."""

    target_topic: str
    source_topic: str
    partition: int
    committed_on_target: int
    committed_on_source: int | None
    position: SourcePosition | None
    unproved: str | None = None
    between: Between | None = None
    """Set (with ``position`` and ``unproved`` ``None``) until the caller has counted the records around
    the group's offset (:func:`~.positions.settle`) and planned again with them."""


@dataclass(frozen=True)
class GroupReturn:
    group: str
    partitions: tuple[PartitionReturn, ...]
    refused: str | None
    others: tuple[str, ...] = ()

    @property
    def unproved(self) -> list[PartitionReturn]:
        return [p for p in self.partitions if p.position is None and p.between is None]

    @property
    def between(self) -> list[PartitionReturn]:
        """The partitions waiting for their records to be counted."""
        return [p for p in self.partitions if p.between is not None]

    def offsets(self) -> dict[Partition, int]:
        """The offsets to commit on A (proved partitions only)."""
        return {(p.source_topic, p.partition): p.position.offset for p in self.partitions if p.position}


def plan_return(
    group: str,
    on_target: tuple[GroupView, Mapping[Partition, int]],
    on_source: tuple[GroupView, Mapping[Partition, int]],
    ends: Mapping[Partition, tuple[str, MirrorEnd]],
    forward_runs: Mapping[Partition, Sequence[Run]],
    reverse_runs: Mapping[Partition, Sequence[Run]],
    reverse_starts: Mapping[Partition, int],
    *,
    allow_rewind: bool,
    settled: Mapping[Partition, SourcePosition] | None = None,
    own: Mapping[Partition, tuple[str, int | None]] | None = None,
) -> GroupReturn:
    """The group's return (see the module docstring). ``ends`` maps each partition of B the forward flow
    wrote to its source topic and :class:`MirrorEnd`; ``own`` each partition of B's own topics the reverse
    flow copies to its copy's topic on A and the first offset whose copy is proved (``None``: none);
    ``forward_runs`` are by source partition, ``reverse_runs`` by partition of B, ``reverse_starts`` (A's
    end when the reverse flow began, of A's topics and of the copies) by partition of A."""
    target_view, target_offsets = on_target
    source_view, source_offsets = on_source
    rows: list[PartitionReturn] = []
    others: list[str] = []
    for (topic, partition), committed in sorted(target_offsets.items()):
        found = ends.get((topic, partition))
        copy = (own or {}).get((topic, partition))
        if found is not None:
            source_topic = found[0]
        elif copy is not None:
            source_topic = copy[0]
        else:
            others.append(f"{topic}-{partition}")
            continue
        source_tp = (source_topic, partition)
        back = reverse_runs.get((topic, partition), ())
        between = None
        located: SourcePosition | Between | None
        try:
            if found is not None:
                end = found[1]
                located = position_on_source(
                    committed,
                    end.target_end,
                    forward_runs.get(source_tp, ()),
                    back,
                    reverse_starts.get(source_tp, end.last_copied + 1),
                )
            else:
                assert copy is not None
                located = position_on_copy(committed, copy[1], back, reverse_starts.get(source_tp, 0))
            reason = None
        except Unproved as exc:
            located, reason = None, str(exc)
        position: SourcePosition | None = None
        if isinstance(located, Between):
            position = (settled or {}).get((topic, partition))
            between = None if position is not None else located
        else:
            position = located
        rows.append(
            PartitionReturn(
                topic,
                source_topic,
                partition,
                committed,
                source_offsets.get(source_tp),
                position,
                reason,
                between,
            )
        )
    refused = None
    if not target_view.idle:
        refused = f"group {group} has members on the cluster it failed over to ({target_view.describe()})"
    elif not source_view.idle:
        refused = f"group {group} is active on the original cluster ({source_view.describe()})"
    else:
        rewinds = [
            f"{r.source_topic}-{r.partition} from {r.committed_on_source} to {r.position.offset}"
            for r in rows
            if r.position and r.committed_on_source is not None and r.position.offset < r.committed_on_source
        ]
        if rewinds and not allow_rewind:
            refused = f"group {group} would move back on the original cluster ({', '.join(rewinds)}): give --allow-rewind"
    return GroupReturn(group, tuple(rows), refused, tuple(others))
