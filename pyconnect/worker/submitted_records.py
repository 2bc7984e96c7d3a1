"""Which source offsets may be committed: the at-least-once bookkeeping of a source task.

Every record handed to the producer is submitted here, in dispatch order, under its source
partition. Acknowledgements may arrive in any order. The committable offset of a source partition is
the source offset of the last record of the longest prefix (in dispatch order) of that partition's
records that are all acknowledged (or dropped). So an offset is never committed past a record Kafka
has not acknowledged, whatever the acknowledgement order (Connect's SubmittedRecords, spec §5.2).

Memory: an acknowledged prefix is released when it becomes one (at ``ack``), not at the next offset
commit, so what is held is bounded by the records in flight rather than by everything sent in one
``offset.flush.interval.ms``; ``committable()`` hands out the newest released record per partition.

Concurrency: used from one event loop; ``ack`` may be called from producer callbacks on that loop.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def partition_key(partition: Mapping[str, Any] | None) -> str:
    """A hashable identity for a source partition map (stable for equal maps)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"), default=str)


class SubmittedRecord:
    """One dispatched record; ``ack()`` once Kafka acknowledged it (or it was dropped)."""

    __slots__ = ("_key", "_owner", "acked", "offset", "partition")

    def __init__(
        self,
        partition: Mapping[str, Any] | None,
        offset: Mapping[str, Any] | None,
        owner: SubmittedRecords | None = None,
        key: str = "",
    ) -> None:
        self.partition = partition
        self.offset = offset
        self.acked = False
        self._owner = owner
        self._key = key

    def ack(self) -> None:
        if not self.acked:
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
        self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None
    ) -> SubmittedRecord:
        cached = self._keys.get(id(partition))
        if cached is not None and cached[0] is partition:
            key = cached[1]
        else:
            key = partition_key(partition)
            if len(self._keys) >= self.KEY_CACHE_SIZE:
                self._keys.clear()
            self._keys[id(partition)] = (partition, key)
        record = SubmittedRecord(partition, offset, self, key)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(record)
        self._in_flight += 1
        self._drained.clear()
        return record

    def _acked(self, record: SubmittedRecord) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._drained.set()
        key = record._key
        queue = self._queues.get(key)
        if queue is None or not queue[0].acked:
            return
        last = queue.popleft()
        popped = 1
        while queue and queue[0].acked:
            last = queue.popleft()
            popped += 1
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
        lengths = [len(queue) for queue in self._queues.values()]
        return CommittableOffsets(offsets, committable, sum(lengths), max(lengths, default=0))

    async def wait_all_acked(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every submitted record to be acknowledged."""
        if self._in_flight == 0:
            return True
        try:
            await asyncio.wait_for(self._drained.wait(), timeout)
            return True
        except TimeoutError:
            return False
