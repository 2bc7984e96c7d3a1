"""When MirrorSourceTask emits offset syncs: Java's ``OffsetSyncWriter`` rules (spec §3.1.1), without I/O.

Contract:

* :meth:`OffsetSyncWriter.maybe_queue_offset_syncs` runs for every acknowledged record (the task's
  ``commit_record``), in acknowledgement order per partition. A sync is *triggered* by the first
  record of this writer's lifetime, by ``down - (last_sync_down + 1) >= offset.lag.max``, by an
  upstream gap (``up - prev_up != 1``) or by the downstream offset going back. A triggered sync
  replaces any unsent pending sync of the partition (keeping its queue position) and drops its
  delayed one; otherwise the record becomes the partition's *delayed* sync (latest wins).
* :meth:`promote_delayed_offset_syncs` (each Connect offset commit) moves every delayed sync into
  the pending queue (KAFKA-15906: idle partitions still translate to their end).
* :meth:`fire_pending_offset_syncs` hands pending syncs, oldest first, to ``send`` while fewer than
  ``max_outstanding`` (Java: 10) sends are unfinished; the rest stay pending for the next call.
  ``send(sync, done)`` must start sending and call ``done(error_or_None)`` exactly once when the
  send finished; that releases the permit. A failed sync is only logged, never retried (as Java).
* Single-threaded: call everything from one event loop. State lives in memory only; a new writer
  (task restart) starts over with "first record" syncs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from connectors.mirror.records import OffsetSync, TopicPartition

log = logging.getLogger(__name__)

MAX_OUTSTANDING_OFFSET_SYNCS = 10

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


class OffsetSyncWriter:
    """Decides which offset syncs to emit and hands them to ``send`` (see the module docstring)."""

    def __init__(
        self,
        send: SendOffsetSync,
        max_offset_lag: int,
        *,
        max_outstanding: int = MAX_OUTSTANDING_OFFSET_SYNCS,
        name: str = "",
    ) -> None:
        self._send = send
        self.max_offset_lag = max_offset_lag
        self.max_outstanding = max_outstanding
        self._name = name
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.pending: dict[TopicPartition, OffsetSync] = {}
        self.delayed: dict[TopicPartition, OffsetSync] = {}
        self.outstanding = 0
        self.syncs_sent = 0
        self.syncs_failed = 0

    def maybe_queue_offset_syncs(
        self, topic_partition: TopicPartition, upstream: int, downstream: int
    ) -> None:
        state = self.partition_states.get(topic_partition)
        if state is None:
            state = self.partition_states[topic_partition] = PartitionState(self.max_offset_lag)
        sync = OffsetSync(topic_partition.topic, topic_partition.partition, upstream, downstream)
        if state.update(upstream, downstream):
            self.delayed.pop(topic_partition, None)
            self.pending[topic_partition] = sync
            state.reset()
        else:
            self.delayed[topic_partition] = sync

    def promote_delayed_offset_syncs(self) -> None:
        self.pending.update(self.delayed)
        self.delayed.clear()

    def fire_pending_offset_syncs(self) -> None:
        while self.pending and self.outstanding < self.max_outstanding:
            topic_partition = next(iter(self.pending))
            sync = self.pending.pop(topic_partition)
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
