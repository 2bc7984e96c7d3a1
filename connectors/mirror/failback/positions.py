"""Where a consumer group resumes on the original cluster A after consuming on B (pure).

A group moved to B by a failover reads, on each partition of B, first the records the forward flow
(A->B) copied (offsets below the partition's mirror end ``M``, :mod:`.ledger`), then the records the
applications wrote on B after the failover (offsets from ``M``), which the reverse flow (B->A) copies
back to A after the orphans. Given the group's committed offset ``c`` on B, :func:`position_on_source`
answers the offset on A where it resumes, reading next exactly the record it would have read next on B:

* ``c < M``: the next record is a forward copy. A forward *run* ``(first_up, first_down, last_up)``
  (:meth:`connectors.mirror.offsets.translation.OffsetSyncStore.runs`) proves that B offset
  ``first_down + k`` is the copy of A offset ``first_up + k`` for ``k <= last_up - first_up``: inside a
  run the answer is its A offset. No run reaching ``c``: unproved (the syncs that would prove it are
  gone), :class:`Unproved`.
* ``c >= M``: the next record was written on B; the reverse runs (upstream B offsets, downstream A
  offsets) answer the same way, and past the last reverse run (the group read every record copied back)
  the answer is ``last_down + 1`` of that run. With no reverse run at or after ``c`` (nothing written on B
  past ``c`` was copied back) the answer is the reverse flow's start on A: where A's log ended when the
  reverse flow began (``reverse_start``), after the orphans, which the group never saw.
* ``c`` between two runs of either flow: the syncs prove the pair before (B ``b``, A ``a``: the run's
  last copy) and the one after (its next run's first, A ``a'``), not which of the offsets between them
  hold records: an exactly-once writer leaves a transaction marker after every transaction, so runs break
  wherever a marker lies between two syncs. Between two such pairs one task copied in order, one to one,
  so the group's next record is the ``k+1``-th record of B after ``b``, where ``k`` counts the records of B
  in ``(b, c)``, and its copy is the ``k+1``-th record of A after ``a`` (``a'`` when fewer lie before
  it). :func:`position_on_source` answers :class:`Between` there; the caller reads both counts
  (:func:`settle`). Never an offset in between by arithmetic: that skips the records a marker displaced.

A group that consumed one of B's own topics (under DefaultReplicationPolicy B's ``orders``, where the
producers write after a failover) returns on A to the copy of that topic (``B.orders``), which holds
only what the reverse flow copied from its start ``S`` on B (the topic's end when the failover executed,
:mod:`.reverse_flow`): :func:`position_on_copy` answers as above for ``c >= S`` (the reverse runs, or the
copy's end on A when the reverse flow began); ``c < S`` (the group had not read what B held before the
failover, which was never copied) is :class:`Unproved`: no position on A holds what it would read next.

The answers assume the reverse flow has caught up with every record below B's end (the caller waits for
that) and that nothing else wrote to the topic on A since the reverse flow began.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyconnect.errors import ConnectError

__all__ = ["Between", "Run", "SourcePosition", "Unproved", "position_on_copy", "position_on_source", "settle"]

Run = tuple[int, int, int]
"""``(first_up, first_down, last_up)`` of a run of offset syncs, oldest first."""


class Unproved(ConnectError, ValueError):
    """No offset sync proves where the group resumes on the source (message: one line, why)."""


@dataclass(frozen=True)
class SourcePosition:
    """The group's offset on the source, and how it was found (``forward run``, ``reverse run``,
    ``reverse start``)."""

    offset: int
    evidence: str


@dataclass(frozen=True)
class Between:
    """The group's next record lies between two proved pairs of copies (see the module docstring): B
    ``b_after`` and A ``a_after`` are a record and its copy (or original), the next pair is at A
    ``a_before``; ``committed`` is the group's offset on B."""

    committed: int
    b_after: int
    a_after: int
    a_before: int
    evidence: str


def settle(between: Between, b_records: int, a_offsets: Sequence[int]) -> SourcePosition:
    """Where the group of ``between`` resumes on A: ``b_records`` counts the records of B in
    ``(b_after, committed)``, ``a_offsets`` are the offsets of the records of A in ``(a_after, a_before)``
    in order."""
    if b_records < len(a_offsets):
        return SourcePosition(a_offsets[b_records], between.evidence)
    return SourcePosition(between.a_before, between.evidence)


def _through(
    segments: Sequence[tuple[int, int, int]], offset: int
) -> tuple[int, str] | tuple[int, int, int] | None:
    """Map ``offset`` through ``(from_start, to_start, length)`` segments, ascending: ``(answer, "inside")``
    in a segment, ``(last end + 1, "past")`` after the last, and between two ``(from end, to end, next
    to_start)``: the previous segment's last pair and where the next one starts; ``None`` before the
    first (or without segments)."""
    for index, (from_start, to_start, length) in enumerate(segments):
        if offset < from_start:
            if not index:
                return None
            before_from, before_to, before_length = segments[index - 1]
            return before_from + before_length, before_to + before_length, to_start
        if offset <= from_start + length:
            return to_start + (offset - from_start), "inside"
    if not segments:
        return None
    _, to_start, length = segments[-1]
    return to_start + length + 1, "past"


def position_on_source(
    committed: int,
    mirror_end: int,
    forward_runs: Sequence[Run],
    reverse_runs: Sequence[Run],
    reverse_start: int,
) -> SourcePosition | Between:
    """Where a group committed at ``committed`` on B resumes on A, or the :class:`Between` to
    :func:`settle` (see the module docstring)."""
    if committed < mirror_end:
        backwards = [(down, up, last_up - up) for up, down, last_up in forward_runs]
        found = _through(backwards, committed)
        if found is None or found[1] == "past":
            raise Unproved(
                f"no forward offset sync covers offset {committed} below the mirror end {mirror_end}"
            )
        if len(found) == 3:
            b_after, a_after, a_before = found
            return Between(committed, b_after, a_after, a_before, "forward runs")
        return SourcePosition(found[0], "forward run")
    return _copied_back(committed, mirror_end, reverse_runs, reverse_start)


def position_on_copy(
    committed: int, start: int | None, reverse_runs: Sequence[Run], copy_start: int
) -> SourcePosition | Between:
    """Where a group committed at ``committed`` on one of B's own partitions resumes on its copy on A, given
    the first offset ``start`` of B whose copy the reverse flow proves (``None``: none) and the copy's end
    on A when the reverse flow began (``copy_start``); see the module docstring."""
    if start is None:
        raise Unproved("no offset sync of the reverse flow proves where any record of it lies on A")
    if committed < start:
        raise Unproved(
            f"offset {committed} lies before {start}, where the proved copy back begins: what the group has "
            "not read below it is not proved to be on the original cluster"
        )
    return _copied_back(committed, start, reverse_runs, copy_start)


def _copied_back(
    committed: int, start: int, reverse_runs: Sequence[Run], reverse_start: int
) -> SourcePosition | Between:
    """The position on A of B offset ``committed >= start`` through the reverse runs (those reaching
    ``start``), the :class:`Between` to settle between two of them, or ``reverse_start`` when no run covers
    it or lies after it."""
    forwards = [(up, down, last_up - up) for up, down, last_up in reverse_runs if last_up >= start]
    found = _through(forwards, committed)
    if found is not None and len(found) == 3:
        b_after, a_after, a_before = found
        return Between(committed, b_after, a_after, a_before, "reverse runs")
    if found is not None:
        return SourcePosition(found[0], "reverse run")
    if forwards:
        return SourcePosition(forwards[0][1], "reverse run")
    return SourcePosition(reverse_start, "reverse start")
