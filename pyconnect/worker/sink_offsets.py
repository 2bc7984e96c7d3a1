"""A sink task's offset bookkeeping (Java ``WorkerSinkTask``'s ``currentOffsets`` and
``lastCommittedOffsets``): pure, no I/O, used from the task's loop only.

Offsets are "next offset to read" per :class:`~pyconnect.api.sink.TopicPartition`, as Kafka commits
them. Contract:

* ``assigned(positions)``: newly assigned partitions start at their consumer positions, both current
  and last committed (nothing delivered yet, nothing to commit).
* ``delivered(batch)``: after ``put`` returned for a batch, each partition's current offset moves to
  one past the last offset delivered from it.
* ``rewound(offsets)``: the task asked to seek (``context.offset``); current and last committed
  follow, so a commit never moves a partition back behind the task's request by accident.
* ``to_commit(requested, provided, assignment)``: what ``pre_commit`` returned (``provided``) turned
  into what may be committed, or ``None`` when nothing changed since the last commit. An offset
  beyond the current one ("not yet consumed") or for a partition not assigned is ignored with a
  reason in ``warnings``; a partition assigned but not requested is ignored silently (Java logs it
  at DEBUG).
* ``committed(offsets)`` after the commit succeeded; ``revoked(partitions)`` forgets partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyconnect.api.sink import TopicPartition


@dataclass
class CommitPlan:
    """What one commit should write, and the provided offsets it ignored (one line each)."""

    offsets: dict[TopicPartition, int]
    warnings: list[str] = field(default_factory=list)


class SinkOffsets:
    def __init__(self) -> None:
        self.current: dict[TopicPartition, int] = {}
        self.last_committed: dict[TopicPartition, int] = {}

    def assigned(self, positions: Mapping[TopicPartition, int]) -> None:
        for partition, position in positions.items():
            self.current[partition] = position
            self.last_committed[partition] = position

    def revoked(self, partitions: Iterable[TopicPartition]) -> None:
        for partition in partitions:
            self.current.pop(partition, None)
            self.last_committed.pop(partition, None)

    def delivered(self, next_offsets: Mapping[TopicPartition, int]) -> None:
        """``next_offsets``: one past the last delivered offset of each partition of a batch."""
        self.current.update(next_offsets)

    def rewound(self, offsets: Mapping[TopicPartition, int]) -> None:
        for partition, offset in offsets.items():
            self.current[partition] = offset
            self.last_committed[partition] = offset

    def requested(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, int]:
        """The current offsets ``pre_commit`` is given (of ``partitions``, else of all)."""
        if partitions is None:
            return dict(self.current)
        wanted = set(partitions)
        return {p: o for p, o in self.current.items() if p in wanted}

    def to_commit(
        self,
        requested: Mapping[TopicPartition, int],
        provided: Mapping[TopicPartition, int],
        assignment: Iterable[TopicPartition],
    ) -> CommitPlan | None:
        assigned = set(assignment)
        plan = CommitPlan({p: self.last_committed[p] for p in requested if p in self.last_committed})
        for partition, offset in provided.items():
            if partition in requested:
                if offset <= requested[partition]:
                    plan.offsets[partition] = offset
                else:
                    plan.warnings.append(
                        f"Ignoring invalid task provided offset {partition}/{offset} -- not yet consumed, "
                        f"taskOffset={offset} currentOffset={requested[partition]}"
                    )
            elif partition not in assigned:
                plan.warnings.append(
                    f"Ignoring invalid task provided offset {partition}/{offset} -- partition not assigned, "
                    f"assignment={sorted(str(p) for p in assigned)}"
                )
        changed = {p: o for p, o in plan.offsets.items() if self.last_committed.get(p) != o}
        if not changed:
            return None if not plan.warnings else CommitPlan({}, plan.warnings)
        plan.offsets = changed
        return plan

    def committed(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.last_committed.update(offsets)
