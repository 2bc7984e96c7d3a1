"""Which source offsets may be committed: the at-least-once bookkeeping of a source task.

Every record handed to the producer is submitted here, in dispatch order, under its source
partition. Acknowledgements may arrive in any order. The committable offset of a source partition is
the source offset of the last record of the longest prefix (in dispatch order) of that partition's
records that are all acknowledged (or dropped). So an offset is never committed past a record Kafka
has not acknowledged, whatever the acknowledgement order (Connect's SubmittedRecords, spec §5.2).

Concurrency: used from one event loop; ``ack`` may be called from producer callbacks on that loop.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def partition_key(partition: Mapping[str, Any] | None) -> str:
    """A hashable identity for a source partition map (stable for equal maps)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(slots=True)
class SubmittedRecord:
    """One dispatched record; ``ack()`` once Kafka acknowledged it (or it was dropped)."""

    partition: Mapping[str, Any] | None
    offset: Mapping[str, Any] | None
    acked: bool = False
    _owner: SubmittedRecords | None = field(default=None, repr=False)

    def ack(self) -> None:
        if not self.acked:
            self.acked = True
            if self._owner is not None:
                self._owner._acked()


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
        record = SubmittedRecord(partition, offset, _owner=self)
        cached = self._keys.get(id(partition))
        if cached is not None and cached[0] is partition:
            key = cached[1]
        else:
            key = partition_key(partition)
            if len(self._keys) >= self.KEY_CACHE_SIZE:
                self._keys.clear()
            self._keys[id(partition)] = (partition, key)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(record)
        self._in_flight += 1
        self._drained.clear()
        return record

    def _acked(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._drained.set()

    def committable(self) -> CommittableOffsets:
        """Remove every fully-acknowledged prefix and return the last offset of each."""
        offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}
        committable = uncommittable = largest = 0
        for key in list(self._queues):
            queue = self._queues[key]
            last: SubmittedRecord | None = None
            while queue and queue[0].acked:
                last = queue.popleft()
                committable += 1
            if last is not None and last.offset is not None:
                offsets[key] = (last.partition, last.offset)
            uncommittable += len(queue)
            largest = max(largest, len(queue))
            if not queue:
                del self._queues[key]
        return CommittableOffsets(offsets, committable, uncommittable, largest)

    async def wait_all_acked(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every submitted record to be acknowledged."""
        if self._in_flight == 0:
            return True
        try:
            await asyncio.wait_for(self._drained.wait(), timeout)
            return True
        except TimeoutError:
            return False
