"""Whether a source task on this worker may commit its offsets now: the stale-membership fence.

Beyond Java. A Java worker whose group membership lapsed (it was paused past ``session.timeout.ms``, or
the coordinator fenced it) keeps committing the source offsets its tasks hold, and commits them once more
when it stops the tasks it lost. By then another worker may own those tasks and have committed further:
the stale commit rewinds the connector's offsets, and the next start of the task copies the records in
between again (thousands after a long pause). Here a worker commits a task's offsets only while

1. its membership is current: the member holds a generation and heard from the coordinator within
   ``session.timeout.ms`` (checked on the clock at commit time, so a worker waking from a pause is fenced
   before its heartbeat loop has noticed anything), and
2. no lapse happened since the start of the last completed round: once the member lost its generation
   (session timeout, ``UNKNOWN_MEMBER_ID``, ``ILLEGAL_GENERATION``), nothing is committed until a round
   that started after the lapse completed, and
3. that round's assignment (the holding) still includes the task.

A task the worker lost while fenced is stopped without committing the offsets it holds: they are dropped
(the new owner resumes from the offsets committed before the lapse, or its own). A task the worker keeps
commits what it holds after the round: nobody else ran it meanwhile. Offsets refused while the round is
pending are kept by the task and retried at its next commit. While refused, a task also dispatches no
polled record (:mod:`pyconnect.worker.source_task`), so a woken zombie writes no stale copies either.

Concurrency: one event loop. :meth:`OffsetCommitFence.round_starting` and
:meth:`OffsetCommitFence.round_completed` bracket each round (the herder's tick, one at a time);
:meth:`OffsetCommitFence.may_commit` is called from the source tasks' commits at any time.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from pyconnect.protocol.task_id import ConnectorTaskId


class MemberStanding(Protocol):
    """What the fence reads from the group member (``pyconnect.kafka.group_member.ConnectGroupMember``)."""

    @property
    def in_session(self) -> bool:
        """Holds a generation and heard from the coordinator within ``session.timeout.ms``."""
        ...

    @property
    def lapses(self) -> int:
        """How many times the member lost its generation (never decreases)."""
        ...


class OffsetCommitFence:
    """The stale-membership fence of one worker (see the module docstring).

    Ownership is the assignment of the last completed round, kept until the next one completes: work
    revoked by the herder itself (the coordinator unreachable) still commits while the membership is
    current, as in Java.
    """

    def __init__(self, member: MemberStanding) -> None:
        self._member = member
        self._held: frozenset[ConnectorTaskId] = frozenset()
        self._lapses_at_round_start = member.lapses
        self._cleared_lapses = member.lapses

    def round_starting(self) -> None:
        """A JoinGroup/SyncGroup round begins: a lapse before this point is cleared once it completes."""
        self._lapses_at_round_start = self._member.lapses

    def round_completed(self, held: Collection[ConnectorTaskId]) -> None:
        """The round completed: revoked work was stopped and ``held`` are the tasks this worker now owns."""
        self._held = frozenset(held)
        self._cleared_lapses = self._lapses_at_round_start

    @property
    def fenced(self) -> bool:
        """True while this worker must commit no source offset at all."""
        return not self._member.in_session or self._member.lapses != self._cleared_lapses

    def may_commit(self, task: ConnectorTaskId) -> bool:
        """Whether ``task`` may write its offsets now."""
        return not self.fenced and task in self._held
