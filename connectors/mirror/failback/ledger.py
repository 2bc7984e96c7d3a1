"""Where the forward flow's copy of each partition ended, and what the source holds past it (pure).

After a failover from A to B, A comes back holding records B never got: the *orphans*. This module
decides, per source partition, the last record the forward mirror (A->B) copied and where its copy ends
on B, from two independent records of the same fact:

* the newest **offset sync** of the partition (``up``, ``down``): our sync writer
  (:mod:`connectors.mirror.offsets.sync_writer`) syncs the last record it copied at every Connect offset
  commit, and a stopped task syncs its last record at its final commit, so once the forward mirror has
  committed after its last copy, ``up`` is that record and ``down`` its copy on B;
* the forward source connector's **committed Connect offset** ``o`` (MirrorSourceTask stores the
  upstream offset of the last record it copied; a restart resumes at ``o + 1``).

Verdicts (:class:`MirrorEnd`):

* ``offset syncs`` (proved): a sync exists and ``up >= o`` (or no connector offset was read). A record is
  synced only once the target acknowledged it, so ``up`` was copied; the mirror end on B is
  ``down + 1``. ``up > o`` is normal under at-least-once: the records were acknowledged, the offset
  flush had not happened yet.
* ``connector offsets`` (unverified): ``o > up`` or no sync at all (the syncs of the last records were
  not written, or the offset-syncs topic lost them to retention). The copy ends at ``o``, but where its
  copy lies on B is not proved: the mirror end on B is only a guess, so a failback stops unless told
  ``--accept-unverified``.
* ``nothing copied``: neither exists. Every record of the partition is an orphan; the copy on B "ends"
  at B's log start.

The orphans of a partition are A's committed records past ``last_copied`` (read, not computed: markers,
aborted records and compaction leave holes), :class:`OrphanRange` their first and last offsets and
count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Evidence", "MirrorEnd", "OrphanRange", "mirror_end"]

Evidence = Literal["offset syncs", "connector offsets", "nothing copied"]


@dataclass(frozen=True)
class MirrorEnd:
    """Where the forward copy of ``topic``-``partition`` (source side) ended.

    ``last_copied``: the upstream offset of the last record copied (``-1``: none); ``target_end``: the
    offset on the target right after its copy (the first offset the reverse flow may copy back);
    ``proved``: whether ``target_end`` is proved (evidence ``offset syncs``)."""

    topic: str
    partition: int
    last_copied: int
    target_end: int
    evidence: Evidence

    @property
    def proved(self) -> bool:
        return self.evidence != "connector offsets"


@dataclass(frozen=True)
class OrphanRange:
    """The records of ``topic``-``partition`` on the source past the forward copy: ``count`` committed
    records from offset ``first`` to ``last`` (inclusive; both ``None`` when there are none) holding
    ``size`` bytes of keys and values."""

    topic: str
    partition: int
    first: int | None
    last: int | None
    count: int
    size: int = 0


def mirror_end(
    topic: str,
    partition: int,
    last_sync: tuple[int, int] | None,
    committed: int | None,
    target_start: int,
) -> MirrorEnd:
    """The :class:`MirrorEnd` of one source partition from its newest offset sync ``(up, down)`` and the
    forward connector's committed offset (see the module docstring); ``target_start`` is the log start of
    the partition's copy on the target (used only when nothing was copied)."""
    if last_sync is not None:
        up, down = last_sync
        if committed is None or up >= committed:
            return MirrorEnd(topic, partition, up, down + 1, "offset syncs")
        return MirrorEnd(topic, partition, committed, down + 1 + (committed - up), "connector offsets")
    if committed is not None and committed >= 0:
        return MirrorEnd(topic, partition, committed, target_start, "connector offsets")
    return MirrorEnd(topic, partition, -1, target_start, "nothing copied")
