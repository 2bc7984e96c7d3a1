"""When MirrorSourceTask emits offset syncs: Java's ``OffsetSyncWriter`` rules (spec §3.1.1), without I/O,
except that a triggered sync is never lost to back-pressure and a break in the copy is synced on both sides.

Contract:

* :meth:`OffsetSyncWriter.maybe_queue_offset_syncs` runs for every acknowledged record (the task's
  ``commit_record``), in acknowledgement order per partition. A sync is *triggered* by the first
  record of this writer's lifetime, by ``down - (last_sync_down + 1) >= offset.lag.max``, by an
  upstream gap (``up - prev_up != 1``) or by the downstream offset going back. A triggered sync drops
  the partition's delayed one; otherwise the record becomes the partition's *delayed* sync (latest
  wins).
* **Both sides of a break (beyond Java).** When a record breaks the copy (an upstream gap: transaction
  markers, compaction, aborted records under ``read_committed``, records a transform dropped; or a
  downstream step back), the previous record of this writer is synced too, right before it: its delayed
  sync is queued instead of dropped, or its promoted unsent sync stays queued. The two syncs then lie
  one downstream offset apart (unless the target adds transaction markers) with the hole between them,
  which proves where the hole is: exact translation (:mod:`connectors.mirror.offsets.translation`)
  answers the true position for every offset of the hole and of the run before it, and Java's ``+1``
  rule does for the hole while its array still holds the record before it. A new writer has no
  previous record: the one before it synced its last record at its final offset commit, if it stopped
  gracefully.
* :meth:`promote_delayed_offset_syncs` (each Connect offset commit) queues every delayed sync
  (KAFKA-15906: idle partitions still translate to their end).
* :meth:`fire_pending_offset_syncs` hands queued syncs, oldest first, to ``send`` while fewer than
  ``max_outstanding`` sends are unfinished (Java: 10; here 100 by default, see
  ``MAX_OUTSTANDING_OFFSET_SYNCS``); the rest stay queued for the next call.
  ``send(sync, done)`` must start sending and call ``done(error_or_None)`` exactly once when the
  send finished; that releases the permit. A failed sync is only logged, never retried (as Java).
* **Where we differ from Java.** Java keeps one unsent sync per partition: under back-pressure a newer
  sync replaces an unsent *triggered* one, and the gap it recorded vanishes from the stream. Exact
  offset translation relies on every triggered sync reaching the topic, so here an unsent triggered
  sync (or one synced before a break) is never replaced: a newer sync queues behind it. An unsent sync
  that was not triggered (a promoted delayed one) only marks progress inside a run and is still replaced
  in place by a newer one, as in Java, unless a break follows it. Memory stays bounded: past
  ``max_pending_per_partition`` unsent syncs of one partition the newest is replaced as Java does,
  counted in ``syncs_dropped`` (and logged once per writer). The stream is a superset of what Java
  emits for the same records (the extra syncs are records Java would have synced at an offset commit
  had no break followed), so Java's checkpoint task reads it unchanged.
* Single-threaded: call everything from one event loop. State lives in memory only; a new writer
  (task restart) starts over with "first record" syncs.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence

from connectors.mirror.records import OffsetSync, TopicPartition

log = logging.getLogger(__name__)

MAX_OUTSTANDING_OFFSET_SYNCS = 100
"""Unfinished sync sends at a time (Java: 10). No sync is dropped here, and the task's producer has one
produce request in flight per broker, so the permits bound the syncs per round trip: with Java's 10 a
copy of 100-byte records (a sync every ``offset.lag.max`` records) queued syncs faster than they left,
and a stopping task spent seconds sending the backlog."""
MAX_PENDING_PER_PARTITION = 10_000

SendDone = Callable[[BaseException | None], None]
SendOffsetSync = Callable[[OffsetSync, SendDone], None]


class PartitionState:
    """Java's ``OffsetSyncWriter.PartitionState`` for one source partition."""

    __slots__ = (
        "last_sync_downstream_offset",
        "max_offset_lag",
        "previous_downstream_offset",
        "previous_upstream_offset",
        "should_sync_offsets",
    )

    def __init__(self, max_offset_lag: int) -> None:
        self.previous_upstream_offset = -1
        self.previous_downstream_offset = -1
        self.last_sync_downstream_offset = -1
        self.max_offset_lag = max_offset_lag
        self.should_sync_offsets = False

    def update(self, upstream_offset: int, downstream_offset: int) -> bool:
        """Record one acknowledged record; True when an offset sync should be emitted for it."""
        last_sync = self.last_sync_downstream_offset
        if (
            last_sync == -1
            or downstream_offset - (last_sync + 1) >= self.max_offset_lag
            or upstream_offset - self.previous_upstream_offset != 1
            or downstream_offset < self.previous_downstream_offset
        ):
            self.last_sync_downstream_offset = downstream_offset
            self.should_sync_offsets = True
        self.previous_upstream_offset = upstream_offset
        self.previous_downstream_offset = downstream_offset
        return self.should_sync_offsets

    def reset(self) -> None:
        self.should_sync_offsets = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionState):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"PartitionState(prev_up={self.previous_upstream_offset}, prev_down={self.previous_downstream_offset}, "
            f"last_sync_down={self.last_sync_downstream_offset}, flag={self.should_sync_offsets})"
        )


class QueuedSync:
    """One unsent sync; ``kept`` ones (triggered, or right before a break) are never replaced (below the
    per-partition bound)."""

    __slots__ = ("kept", "sync")

    def __init__(self, sync: OffsetSync, kept: bool) -> None:
        self.sync = sync
        self.kept = kept


class OffsetSyncWriter:
    """Decides which offset syncs to emit and hands them to ``send`` (see the module docstring)."""

    def __init__(
        self,
        send: SendOffsetSync,
        max_offset_lag: int,
        *,
        max_outstanding: int = MAX_OUTSTANDING_OFFSET_SYNCS,
        max_pending_per_partition: int = MAX_PENDING_PER_PARTITION,
        name: str = "",
    ) -> None:
        self._send = send
        self.max_offset_lag = max_offset_lag
        self.max_outstanding = max_outstanding
        self.max_pending_per_partition = max(1, max_pending_per_partition)
        self._name = name
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.delayed: dict[TopicPartition, OffsetSync] = {}
        self._queue: deque[QueuedSync] = deque()
        self._newest: dict[TopicPartition, QueuedSync] = {}
        self._unsent: dict[TopicPartition, int] = {}
        self.outstanding = 0
        self.syncs_sent = 0
        self.syncs_failed = 0
        self.syncs_dropped = 0

    def pending_syncs(self) -> list[OffsetSync]:
        """The queued, unsent syncs, oldest first."""
        return [queued.sync for queued in self._queue]

    def maybe_queue_offset_syncs(
        self, topic_partition: TopicPartition, upstream: int, downstream: int
    ) -> None:
        state = self.partition_states.get(topic_partition)
        if state is None:
            state = self.partition_states[topic_partition] = PartitionState(self.max_offset_lag)
        sync = OffsetSync(topic_partition.topic, topic_partition.partition, upstream, downstream)
        previous_up, previous_down = state.previous_upstream_offset, state.previous_downstream_offset
        breaks = previous_up != -1 and (upstream - previous_up != 1 or downstream < previous_down)
        if state.update(upstream, downstream):
            previous = self.delayed.pop(topic_partition, None)
            if breaks and previous is not None:
                self._enqueue(topic_partition, previous, kept=True)
            self._enqueue(topic_partition, sync, kept=True, keep_previous=breaks)
            state.reset()
        else:
            self.delayed[topic_partition] = sync

    def queue_batch(
        self, topic_partition: TopicPartition, upstream_offsets: Sequence[int], base: int
    ) -> None:
        """:meth:`maybe_queue_offset_syncs` for records written contiguously downstream at ``base``,
        ``base + 1``, ...; same outcome, without an ``OffsetSync`` per record."""
        if not upstream_offsets:
            return
        state = self.partition_states.get(topic_partition)
        if state is None:
            state = self.partition_states[topic_partition] = PartitionState(self.max_offset_lag)
        topic, partition = topic_partition.topic, topic_partition.partition
        lag = self.max_offset_lag
        last_sync = state.last_sync_downstream_offset
        prev_up, prev_down = state.previous_upstream_offset, state.previous_downstream_offset
        # a delayed sync is always the previous record's
        previous_delayed = self.delayed.pop(topic_partition, None) is not None
        down = base
        for up in upstream_offsets:
            if last_sync == -1 or down - (last_sync + 1) >= lag or up - prev_up != 1 or down < prev_down:
                breaks = prev_up != -1 and (up - prev_up != 1 or down < prev_down)
                last_sync = down
                if breaks and previous_delayed:
                    self._enqueue(
                        topic_partition, OffsetSync(topic, partition, prev_up, prev_down), kept=True
                    )
                sync = OffsetSync(topic, partition, up, down)
                self._enqueue(topic_partition, sync, kept=True, keep_previous=breaks)
                previous_delayed = False
            else:
                previous_delayed = True
            prev_up, prev_down = up, down
            down += 1
        state.last_sync_downstream_offset = last_sync
        state.previous_upstream_offset, state.previous_downstream_offset = prev_up, prev_down
        state.should_sync_offsets = False
        if previous_delayed:
            self.delayed[topic_partition] = OffsetSync(topic, partition, prev_up, prev_down)

    def queue_run(self, topic_partition: TopicPartition, first_upstream: int, count: int, base: int) -> None:
        """:meth:`queue_batch` for ``count`` records of consecutive upstream offsets from
        ``first_upstream``, written at ``base``, ``base + 1``, ...: the same outcome, in time linear in
        the syncs it queues rather than in the records. Inside such a run only the lag rule can trigger
        (no upstream gap, no downstream step back), so the triggered records are found by arithmetic."""
        if count <= 0:
            return
        self.queue_batch(topic_partition, (first_upstream,), base)  # the first record: every rule
        if count == 1:
            return
        state = self.partition_states[topic_partition]
        topic, partition = topic_partition.topic, topic_partition.partition
        last_down = base + count - 1
        last_sync = state.last_sync_downstream_offset
        previous_delayed = self.delayed.pop(topic_partition, None) is not None
        down = max(base + 1, last_sync + 1 + self.max_offset_lag)
        while down <= last_down:
            sync = OffsetSync(topic, partition, first_upstream + (down - base), down)
            self._enqueue(topic_partition, sync, kept=True, keep_previous=False)
            last_sync = down
            down += 1 + self.max_offset_lag
        previous_delayed = last_sync != last_down
        last_up = first_upstream + count - 1
        state.last_sync_downstream_offset = last_sync
        state.previous_upstream_offset, state.previous_downstream_offset = last_up, last_down
        state.should_sync_offsets = False
        if previous_delayed:
            self.delayed[topic_partition] = OffsetSync(topic, partition, last_up, last_down)

    def promote_delayed_offset_syncs(self) -> None:
        for topic_partition, sync in self.delayed.items():
            self._enqueue(topic_partition, sync, kept=False)
        self.delayed.clear()

    def _enqueue(
        self, topic_partition: TopicPartition, sync: OffsetSync, *, kept: bool, keep_previous: bool = False
    ) -> None:
        """Queue ``sync`` behind the partition's unsent ones. It replaces the newest unsent sync in place
        when that one is not kept and ``keep_previous`` is false (a break keeps it), or when the partition
        is at ``max_pending_per_partition``."""
        newest = self._newest.get(topic_partition)
        if newest is not None:
            full = self._unsent[topic_partition] >= self.max_pending_per_partition
            if full or not (newest.kept or keep_previous):
                if newest.kept:
                    self._drop_warning(newest.sync)
                newest.sync = sync
                newest.kept = newest.kept or kept
                return
            newest.kept = True
        queued = QueuedSync(sync, kept)
        self._queue.append(queued)
        self._newest[topic_partition] = queued
        self._unsent[topic_partition] = self._unsent.get(topic_partition, 0) + 1

    def _drop_warning(self, sync: OffsetSync) -> None:
        self.syncs_dropped += 1
        if self.syncs_dropped == 1:
            log.warning(
                "%s%d unsent offset syncs queued for %s-%d: replacing the newest one as Java does; "
                "exact offset translation may fall back to Java's for this stretch",
                self._name and f"{self._name}: ",
                self.max_pending_per_partition,
                sync.topic,
                sync.partition,
            )

    def fire_pending_offset_syncs(self) -> None:
        while self._queue and self.outstanding < self.max_outstanding:
            queued = self._queue.popleft()
            sync = queued.sync
            topic_partition = TopicPartition(sync.topic, sync.partition)
            left = self._unsent[topic_partition] - 1
            if left:
                self._unsent[topic_partition] = left
            else:
                del self._unsent[topic_partition]
            if self._newest.get(topic_partition) is queued:
                del self._newest[topic_partition]
            self.outstanding += 1
            done = self._release_once(sync)
            try:
                self._send(sync, done)
            except Exception as exc:
                done(exc)

    def _release_once(self, sync: OffsetSync) -> SendDone:
        released = False

        def done(error: BaseException | None) -> None:
            nonlocal released
            if released:
                return
            released = True
            self.outstanding -= 1
            if error is None:
                self.syncs_sent += 1
            else:
                self.syncs_failed += 1
                log.error(
                    "%sFailure sending offset sync %s: %s", self._name and f"{self._name}: ", sync, error
                )

        return done
