"""A source task's runs end where a producer batch begins (``DispatchedRuns`` with ``splits``,
``batch_starts``): what one batch's acknowledgement releases commits on its own, so a task stopped
while a later batch of the same run waits still commits the records the target has."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pyconnect.kafka.batch_sender import SentBatch
from pyconnect.worker.submitted_records import DispatchedRuns, SubmittedRecords, batch_starts


@dataclass
class Record:
    source_partition: dict[str, Any]
    source_offset: dict[str, Any]


def records(partition: int, count: int, first: int = 0) -> list[Record]:
    return [Record({"p": partition}, {"n": first + n}) for n in range(count)]


def test_each_batch_of_a_run_commits_once_it_is_acknowledged() -> None:
    submitted = SubmittedRecords()
    polled = records(0, 30)
    runs = DispatchedRuns(submitted, polled, [0, 10, 20])
    assert [entry.count for entry in runs.entries] == [10, 10, 10]
    runs.ack(list(range(10)))
    assert list(submitted.committable().offsets.values()) == [({"p": 0}, {"n": 9})]
    runs.ack(list(range(20, 30)))  # a later batch first: nothing past the one still waiting
    assert submitted.committable().offsets == {}
    runs.ack(list(range(10, 20)))
    assert list(submitted.committable().offsets.values()) == [({"p": 0}, {"n": 29})]
    assert submitted.in_flight == 0


def test_splits_only_cut_runs_they_fall_inside() -> None:
    submitted = SubmittedRecords()
    polled = records(0, 4) + records(1, 4)
    runs = DispatchedRuns(submitted, polled, [0, 2, 4, 6])
    assert [(e.partition, e.offset, e.count) for e in runs.entries] == [
        ({"p": 0}, {"n": 1}, 2),
        ({"p": 0}, {"n": 3}, 2),
        ({"p": 1}, {"n": 1}, 2),
        ({"p": 1}, {"n": 3}, 2),
    ]
    assert [e.count for e in DispatchedRuns(SubmittedRecords(), polled).entries] == [4, 4]


def test_batch_starts_of_slices_and_of_interleaved_batches() -> None:
    loop = asyncio.new_event_loop()
    try:

        def batch(indices: list[int]) -> SentBatch:
            return SentBatch("t", 0, indices, loop.create_future())

        assert batch_starts([batch([5, 6, 7]), batch([0, 1, 2, 3, 4])], 8) == [0, 5]
        assert batch_starts([batch([0, 2, 4]), batch([1, 3]), batch([5])], 6) == [0, 1, 2, 3, 4, 5]
        assert batch_starts([batch([0, 1, 3]), batch([2])], 4) == [0, 2, 3]
    finally:
        loop.close()
