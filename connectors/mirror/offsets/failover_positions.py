"""Where a consumer group resumes on the target of a failover: the pure part (no I/O).

For one source partition the failover knows the group's *source position* ``u`` (its committed offset on
the source, or the upstream offset of its latest checkpoint when the source is gone), the checkpoint,
the offset syncs of the partition in topic order, and an exact-mode
:class:`~connectors.mirror.offsets.translation.OffsetSyncStore`. The target offset must not pass
``F(u)``, the first copy on the target of the group's next record (the safety rule of
:mod:`connectors.mirror.offsets.translation`); at ``F(u)`` the group re-reads nothing.

**Verified positions** (beyond the offset syncs). Syncs alone cannot place ``u`` between two syncs whose
downstream distance exceeds their upstream distance: the target holds more offsets than records there
(transaction markers of an exactly-once mirror, an aborted transaction). The target's records can: the
failover reads the offsets of the target's *committed data records* (``read_committed``) of a short
stretch and checks them against the syncs. :func:`segment_for` names the stretch, :func:`verified_position`
checks it and answers ``F(u)``. With ``lag`` the source connector's ``offset.lag.max``, the stretch is
``chain``: the syncs of the stream from the first one whose ``up + lag >= u`` up to the first one at or
past ``u`` (or to the stream's end). It is used only when

1. every sync before it has ``up + lag < u`` (by construction), and every sync from its start on has
   ``down >= chain[0].down``;
2. the chain increases strictly in both offsets;
3. between each two consecutive chain syncs ``c``, ``d`` the target holds exactly ``d.up - c.up - 1``
   committed data records (past the last sync of an open chain: none at all).

Then the data records between ``c.down`` and ``d.down`` are the copies of ``c.up+1 .. d.up-1`` in order,
and no record ``>= u`` has a copy below ``chain[0].down``: a writer copies contiguously and syncs again
before it gets ``lag`` records past its last sync, so every copy of a record ``v >= u`` lies after a sync
whose ``up + lag >= v``, which is in the chain or after it (condition 1). Condition 3 rejects any
stretch with a copy too many (a re-copied run, a foreign record) or too few (a hole upstream). The
answer needs what exact translation needs (every sync the writer triggered is in the stream, spec
§3.1.1); the check of condition 3 is what it adds. Past the chain's last sync ``c`` with no data record
after it, the answer is ``c.down + 1``: nothing lies between it and ``F(u)``.

**The decision** (:func:`decide`): a verified position, else the store's exact-mode translation, else the
checkpoint's downstream offset. Re-read and skipped records follow from what is proven: ``0``/``0`` at a
proven ``F(u)``, the store's proven distance otherwise, ``None`` (unknown) when nothing proves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from connectors.mirror.offsets.translation import Translation

__all__ = [
    "Action",
    "Basis",
    "Position",
    "Segment",
    "action_for",
    "decide",
    "segment_for",
    "verified_position",
]

Action = Literal["commit", "keep", "skip-rewind", "rewind", "no-checkpoint", "no-translation"]
Basis = Literal["target records", "offset syncs", "checkpoint", "share sync", "none"]
SyncPair = tuple[int, int]


@dataclass(frozen=True)
class Segment:
    """The syncs (``(up, down)``, stream order) a verified position reads, and the target offsets whose
    committed data records must be read: ``(read_from, read_to)`` exclusive of both ends, ``read_to``
    ``None`` for an open chain (to the partition's end)."""

    chain: tuple[SyncPair, ...]
    open_end: bool

    @property
    def read_from(self) -> int:
        return self.chain[0][1]

    @property
    def read_to(self) -> int | None:
        return None if self.open_end else self.chain[-1][1]


def segment_for(syncs: Sequence[SyncPair], upstream: int, lag: int) -> Segment | None:
    """The stretch to verify for source position ``upstream`` (conditions 1-2 of the module docstring
    checked here), or ``None`` when the syncs cannot support a verified position."""
    start = next((i for i, (up, _) in enumerate(syncs) if up + lag >= upstream), None)
    if start is None:
        return None
    floor_down = syncs[start][1]
    if any(down < floor_down for _, down in syncs[start:]):
        return None
    chain: list[SyncPair] = []
    open_end = True
    for up, down in syncs[start:]:
        if chain and (up <= chain[-1][0] or down <= chain[-1][1]):
            return None
        chain.append((up, down))
        if up >= upstream:
            open_end = False
            break
    return Segment(tuple(chain), open_end)


def verified_position(segment: Segment, upstream: int, record_offsets: Sequence[int]) -> int | None:
    """``F(upstream)`` when the committed data records of the segment (``record_offsets``: their offsets,
    ascending, strictly between ``read_from`` and ``read_to``) match its syncs (condition 3), else ``None``."""
    chain = segment.chain
    at = 0
    for (up, down), (next_up, next_down) in pairwise(chain):
        between = []
        while at < len(record_offsets) and record_offsets[at] < next_down:
            if record_offsets[at] > down:
                between.append(record_offsets[at])
            at += 1
        if len(between) != next_up - up - 1:
            return None
        if up < upstream <= next_up:
            return next_down if upstream == next_up else between[upstream - up - 1]
        if upstream <= up:
            return down
    last_up, last_down = chain[-1]
    if upstream <= last_up:
        return last_down if len(chain) == 1 or upstream == last_up else None
    if not segment.open_end:
        return None
    after = [o for o in record_offsets if o > last_down]
    return last_down + 1 if not after else None


@dataclass(frozen=True)
class Position:
    """Where a group resumes on one target partition, and what that costs.

    ``target_offset`` is ``None`` when nothing translates ``source_position``. ``reread``/``skipped``:
    records the group reads again / never reads, ``None`` when not proven; ``max_reread`` an upper bound of
    the re-read when one is known. ``basis`` says what proves the offset.
    """

    target_offset: int | None
    reread: int | None
    skipped: int | None
    max_reread: int | None
    basis: Basis


def decide(
    source_position: int,
    checkpoint: SyncPair | None,
    translation: Translation | None,
    verified: int | None,
) -> Position:
    """The target offset for ``source_position`` from the best available evidence (module docstring).

    ``checkpoint`` is ``(upstream, downstream)`` of the group's latest checkpoint of the partition;
    ``translation`` the store's exact-mode translation of ``source_position`` (``None`` without syncs).
    """
    if verified is not None:
        return Position(verified, 0, 0, 0, "target records")
    if translation is not None and translation.downstream_offset >= 0:
        offset = translation.downstream_offset
        reread = translation.reread
        bound = translation.reread_bound
        if translation.exact:
            return Position(offset, 0, 0, 0, "offset syncs")
        if reread is None:
            return Position(offset, None, 0 if bound is not None else None, bound, "offset syncs")
        return Position(offset, max(reread, 0), max(-reread, 0), max(reread, 0), "offset syncs")
    if checkpoint is not None:
        upstream, downstream = checkpoint
        skipped = 0 if upstream <= source_position else None
        return Position(downstream, None, skipped, None, "checkpoint")
    return Position(None, None, None, None, "none")


def action_for(target: int | None, current: int | None, allow_rewind: bool) -> Action:
    """What executing does for one partition: commit a new or larger offset, keep an equal one, and
    leave a larger one alone unless rewinding is allowed."""
    if target is None:
        return "no-checkpoint"
    if current is None or current < target:
        return "commit"
    if current == target:
        return "keep"
    return "rewind" if allow_rewind else "skip-rewind"
