"""Which source offsets may be committed: the at-least-once bookkeeping of a source task.

Every record handed to the producer is submitted here, in dispatch order, under its source
partition. Acknowledgements may arrive in any order. The committable offset of a source partition is
the source offset of the last record of the longest prefix (in dispatch order) of that partition's
records that are all acknowledged (or dropped). So an offset is never committed past a record Kafka
has not acknowledged, whatever the acknowledgement order (Connect's SubmittedRecords, spec §5.2).

Entries, not records: one entry may stand for a run of ``count`` consecutive records of one source
partition (its offset is the run's last), acknowledged once all of them are. :class:`DispatchedRuns`
makes those runs for a dispatched batch and turns the producer's per-batch acknowledgements into
entry acknowledgements, so that neither submitting nor acknowledging does work per record when a
producer batch holds records of one source partition (a mirror's case). A run's records become
committable together, once the whole run and everything before it in that partition is
acknowledged: never past an unacknowledged record, and at most one run behind one entry per record.
``in_flight`` counts records, acknowledged one by one.

Memory: an acknowledged prefix is released when it becomes one (at ``ack``), not at the next offset
commit, so what is held is bounded by the records in flight rather than by everything sent in one
``offset.flush.interval.ms``; ``committable()`` hands out the newest released record per partition.

Concurrency: used from one event loop; ``ack`` may be called from producer callbacks on that loop.
"""

from __future__ import annotations

import asyncio
import json
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyconnect.kafka.batch_sender import SentBatch


def partition_key(partition: Mapping[str, Any] | None) -> str:
    """A hashable identity for a source partition map (stable for equal maps)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"), default=str)


class SubmittedRecord:
    """One dispatched record, or a run of ``count`` of one partition whose last has ``offset``;
    ``ack()`` once Kafka acknowledged it all (or it was dropped)."""

    __slots__ = ("_key", "_left", "_owner", "acked", "count", "offset", "partition")

    def __init__(
        self,
        partition: Mapping[str, Any] | None,
        offset: Mapping[str, Any] | None,
        owner: SubmittedRecords | None = None,
        key: str = "",
        count: int = 1,
    ) -> None:
        self.partition = partition
        self.offset = offset
        self.acked = False
        self._owner = owner
        self._key = key
        self.count = self._left = count

    @property
    def key(self) -> str:
        """The partition's identity (:func:`partition_key`)."""
        return self._key

    def ack(self) -> None:
        """Every record of it acknowledged (a second call changes nothing)."""
        self.ack_part(self._left)

    def ack_part(self, count: int) -> None:
        """``count`` more of its records acknowledged; the entry is once all of them are."""
        if self.acked or count <= 0:
            return
        count = min(count, self._left)
        self._left -= count
        if self._owner is not None:
            self._owner._in_flight -= count
        if self._left == 0:
            self.acked = True
            if self._owner is not None:
                self._owner._acked(self)


@dataclass(frozen=True)
class CommittableOffsets:
    """Offsets that may be committed now, and how much is still held back."""

    offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    committable_records: int
    uncommittable_records: int
    largest_deque: int

    def is_empty(self) -> bool:
        return not self.offsets


class SubmittedRecords:
    """Per-source-partition queues of dispatched records; see the module docstring."""

    # Cached partition keys by map identity: a task usually hands the same partition map object for
    # every record of a partition, and serializing it per record was a fifth of the data path's CPU.
    # (A map mutated after it was handed over keeps its first key: as with Java's HashMap keys.)
    KEY_CACHE_SIZE = 4096

    def __init__(self) -> None:
        self._keys: dict[int, tuple[Mapping[str, Any] | None, str]] = {}
        self._queues: dict[str, deque[SubmittedRecord]] = {}
        self._released: dict[str, SubmittedRecord] = {}
        self._released_count = 0
        self._in_flight = 0
        self._drained = asyncio.Event()
        self._drained.set()

    @property
    def in_flight(self) -> int:
        """Records submitted and not yet acknowledged."""
        return self._in_flight

    def submit(
        self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None, count: int = 1
    ) -> SubmittedRecord:
        """Submit ``count`` records of ``partition`` (next in dispatch order), the last at ``offset``."""
        cached = self._keys.get(id(partition))
        if cached is not None and cached[0] is partition:
            key = cached[1]
        else:
            key = partition_key(partition)
            if len(self._keys) >= self.KEY_CACHE_SIZE:
                self._keys.clear()
            self._keys[id(partition)] = (partition, key)
        record = SubmittedRecord(partition, offset, self, key, count)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(record)
        self._in_flight += count
        self._drained.clear()
        return record

    def _acked(self, record: SubmittedRecord) -> None:
        if self._in_flight == 0:
            self._drained.set()
        key = record._key
        queue = self._queues.get(key)
        if queue is None or not queue[0].acked:
            return
        last = queue.popleft()
        popped = last.count
        while queue and queue[0].acked:
            last = queue.popleft()
            popped += last.count
        self._released[key] = last
        self._released_count += popped
        if not queue:
            del self._queues[key]

    def committable(self) -> CommittableOffsets:
        """The last offset of each partition's acknowledged prefix released since the previous call."""
        offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}
        for key, last in self._released.items():
            if last.offset is not None:
                offsets[key] = (last.partition, last.offset)
        committable, self._released, self._released_count = self._released_count, {}, 0
        held = [sum(entry.count for entry in queue) for queue in self._queues.values()]
        return CommittableOffsets(offsets, committable, sum(held), max(held, default=0))

    async def wait_all_acked(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every submitted record to be acknowledged."""
        if self._in_flight == 0:
            return True
        try:
            await asyncio.wait_for(self._drained.wait(), timeout)
            return True
        except TimeoutError:
            return False


class DispatchedRuns:
    """The entries of one dispatched batch of records, by record index (see the module docstring).

    ``DispatchedRuns(submitted, records, splits)`` submits, in order, one entry per run of consecutive
    records with equal source partitions (``record.source_partition``; the entry's offset is the run's
    last record's ``source_offset``), a run also ending before each index of ``splits`` (ascending: where
    a producer batch begins, so that what one batch's acknowledgement releases commits on its own).
    ``ack(indices)`` acknowledges the records at these ascending indices (``in_flight`` drops at once;
    an entry is acknowledged once every record of its run is). Each record must be acknowledged once.
    O(log runs) for indices within one run, else O(len(indices))."""

    __slots__ = ("_ends", "_single", "_starts", "entries")

    def __init__(
        self, submitted: SubmittedRecords | None, records: Sequence[Any], splits: Sequence[int] = ()
    ) -> None:
        self._single = False
        if submitted is None:  # see one_per_record
            return
        starts: list[int] = []
        ends: list[int] = []
        entries: list[SubmittedRecord] = []
        submit = submitted.submit
        end = 0
        for partition, run in groupby([r.source_partition for r in records]):
            start, end = end, end + len(list(run))
            cuts = splits[bisect_right(splits, start) : bisect_left(splits, end)]
            for low, high in zip([start, *cuts], [*cuts, end], strict=True):
                starts.append(low)
                ends.append(high)
                entries.append(submit(partition, records[high - 1].source_offset, high - low))
        self._starts = starts
        self._ends = ends
        self.entries = entries

    @classmethod
    def one_per_record(cls, entries: Sequence[SubmittedRecord]) -> DispatchedRuns:
        """Entries already submitted, one per record (index ``i`` is ``entries[i]``)."""
        runs = cls(None, ())
        runs._single = True
        runs.entries = list(entries)
        return runs

    def ack(self, indices: Sequence[int]) -> None:
        if self._single:
            entries = self.entries
            for i in indices:
                entries[i].ack()
            return
        if not indices:
            return
        starts, ends = self._starts, self._ends
        run = bisect_right(starts, indices[0]) - 1
        entries = self.entries
        if indices[-1] < ends[run]:  # the usual case: a producer batch within one run
            entries[run].ack_part(len(indices))
            return
        end, count = ends[run], 0
        for i in indices:
            if i >= end:
                entries[run].ack_part(count)
                run = bisect_right(starts, i) - 1
                end, count = ends[run], 0
            count += 1
        entries[run].ack_part(count)


def batch_starts(batches: Sequence[SentBatch], count: int) -> list[int]:
    """The record indices (ascending) where a producer batch begins, for ``count`` records."""
    if all(b.indices[-1] - b.indices[0] == len(b.indices) - 1 for b in batches):  # each batch a slice
        return sorted(b.indices[0] for b in batches)
    owner = [0] * count
    for number, batch in enumerate(batches):
        for index in batch.indices:
            owner[index] = number
    return [0] + [i for i in range(1, count) if owner[i] != owner[i - 1]]
