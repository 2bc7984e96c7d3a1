"""At-least-once bookkeeping: offsets never pass an unacknowledged record of the same partition."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from pyconnect.worker.submitted_records import DispatchedRuns, SubmittedRecords, partition_key


def test_out_of_order_acks_commit_only_the_acked_prefix() -> None:
    records = SubmittedRecords()
    p = {"file": "a"}
    r = [records.submit(p, {"pos": i}) for i in range(4)]
    r[1].ack()
    r[2].ack()
    first = records.committable()
    assert first.is_empty() and first.uncommittable_records == 4
    r[0].ack()
    second = records.committable()
    assert second.offsets == {partition_key(p): (p, {"pos": 2})}
    assert (second.committable_records, second.uncommittable_records) == (3, 1)
    r[3].ack()
    assert records.committable().offsets == {partition_key(p): (p, {"pos": 3})}
    assert records.committable().is_empty(), "a prefix is handed out once"


def test_partitions_are_independent() -> None:
    records = SubmittedRecords()
    a, b = {"p": 0}, {"p": 1}
    ra = records.submit(a, {"o": 1})
    records.submit(b, {"o": 1})
    ra.ack()
    assert records.committable().offsets == {partition_key(a): (a, {"o": 1})}
    assert records.in_flight == 1


def test_partition_key_ignores_map_order() -> None:
    assert partition_key({"a": 1, "b": 2}) == partition_key({"b": 2, "a": 1})
    assert partition_key(None) != partition_key({})


async def test_wait_all_acked() -> None:
    records = SubmittedRecords()
    assert await records.wait_all_acked(0)
    rec = records.submit({"p": 0}, {"o": 0})
    assert not await records.wait_all_acked(0.01)
    asyncio.get_running_loop().call_soon(rec.ack)
    assert await records.wait_all_acked(1)
    rec.ack()
    assert records.in_flight == 0, "a second ack of the same record changes nothing"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
    st.lists(st.integers(min_value=0, max_value=39), max_size=60),
)
def test_committed_offset_never_passes_an_unacked_record(
    partitions: list[int], rnd, commit_points: list[int]
) -> None:
    records = SubmittedRecords()
    submitted = [(p, i, records.submit({"p": p}, {"i": i})) for i, p in enumerate(partitions)]
    order = list(range(len(submitted)))
    rnd.shuffle(order)
    committed: dict[int, int] = {}
    checkpoints = set(commit_points)
    for step, index in enumerate(order):
        submitted[index][2].ack()
        if step in checkpoints or step == len(order) - 1:
            for partition, offset in records.committable().offsets.values():
                p, i = partition["p"], offset["i"]
                assert committed.get(p, -1) < i, "committed offsets only move forward"
                committed[p] = i
                earlier = [rec for q, j, rec in submitted if q == p and j <= i]
                assert all(rec.acked for rec in earlier), (
                    "every record up to the committed one is acknowledged"
                )
    for p in set(partitions):
        assert committed[p] == max(i for q, i, _ in submitted if q == p), (
            "once all are acked, the last offset commits"
        )


def test_an_acknowledged_prefix_is_released_at_once() -> None:
    """Held records are bounded by what is in flight, not by what was sent since the last commit."""
    records = SubmittedRecords()
    p = {"p": 0}
    batch = [records.submit(p, {"o": i}) for i in range(1000)]
    for record in batch[1:]:
        record.ack()
    assert records.committable().uncommittable_records == 1000, "the unacked head holds the rest"
    batch[0].ack()
    assert not records._queues, "nothing is held once every record is acknowledged"
    more = records.submit(p, {"o": 1000})
    result = records.committable()
    assert result.offsets == {partition_key(p): (p, {"o": 999})}
    assert (result.committable_records, result.uncommittable_records) == (1000, 1)
    more.ack()
    assert records.committable().offsets == {partition_key(p): (p, {"o": 1000})}


class Rec:
    """A dispatched record as the worker sees it: its source partition map and offset."""

    def __init__(self, partition: dict[str, int], offset: dict[str, int]) -> None:
        self.source_partition = partition
        self.source_offset = offset


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=40),
    st.booleans(),
    st.integers(min_value=1, max_value=7),
    st.randoms(use_true_random=False),
)
def test_runs_commit_exactly_what_one_entry_per_record_commits(
    partitions: list[int], one_target: bool, batch_size: int, rnd
) -> None:
    """Producer batches as the batch sender forms them (by target partition, in order, split at a size;
    a source partition to one target partition, or records spread over targets), acknowledged in any
    order. After every acknowledgement: the same records in flight as with one entry per record, and
    the committed offset of each partition is that of one entry per record when it ends a run, else
    the last record of that partition before the run holding it (never past an unacknowledged one)."""
    maps = {p: {"p": p} for p in set(partitions)}
    records = [  # mostly the same map object per partition; sometimes an equal copy, as plugins do
        Rec(maps[p] if rnd.random() < 0.8 else dict(maps[p]), {"i": i}) for i, p in enumerate(partitions)
    ]
    targets = [r.source_partition["p"] if one_target else rnd.randrange(2) for r in records]
    by_target: dict[int, list[int]] = {}
    for index, target in enumerate(targets):
        by_target.setdefault(target, []).append(index)
    batches = [
        indices[start : start + batch_size]
        for indices in by_target.values()
        for start in range(0, len(indices), batch_size)
    ]
    rnd.shuffle(batches)
    run_of: list[tuple[int, int]] = []  # each record's run: consecutive records of one partition
    start = 0
    for i in range(1, len(partitions) + 1):
        if i == len(partitions) or partitions[i] != partitions[start]:
            run_of += [(start, i)] * (i - start)
            start = i

    reference = SubmittedRecords()
    entries = [reference.submit(r.source_partition, r.source_offset) for r in records]
    tested = SubmittedRecords()
    runs = DispatchedRuns(tested, records)
    assert [e.count for e in runs.entries] == [e - s for s, e in dict.fromkeys(run_of)]
    assert tested.in_flight == reference.in_flight == len(records)
    want: dict[int, int] = {}
    got: dict[int, int] = {}
    for batch in batches:
        for i in batch:
            entries[i].ack()
        runs.ack(batch)
        assert tested.in_flight == reference.in_flight
        for committed, source in ((want, reference), (got, tested)):
            for partition, offset in source.committable().offsets.values():
                committed[partition["p"]] = offset["i"]
        for p, i in want.items():
            start, end = run_of[i]
            before = [j for j in range(start) if partitions[j] == p]
            expected = i if i == end - 1 else (before[-1] if before else None)
            assert got.get(p) == expected, (p, i, got)
    assert got == want and tested.in_flight == 0 and not tested._queues


def test_a_producer_batch_within_one_run_acknowledges_without_a_pass_over_its_records() -> None:
    records = [Rec({"p": 0}, {"o": i}) for i in range(3)]
    partition = {"p": 1}
    records += [Rec(partition, {"o": i}) for i in range(1000)]
    submitted = SubmittedRecords()
    runs = DispatchedRuns(submitted, records)
    assert [e.count for e in runs.entries] == [3, 1000]  # equal maps are one partition, objects or not
    runs.ack(list(range(503, 1003)))
    assert submitted.committable().offsets == {}
    assert submitted.in_flight == 503  # records, acknowledged one by one
    runs.ack(list(range(3, 503)))
    assert submitted.committable().offsets == {partition_key(partition): (partition, {"o": 999})}
    runs.ack([0, 1, 2])
    assert submitted.in_flight == 0


def test_one_entry_per_record_is_acknowledged_by_index() -> None:
    submitted = SubmittedRecords()
    entries = [submitted.submit({"p": 0}, {"o": i}) for i in range(4)]
    runs = DispatchedRuns.one_per_record(entries[1:])
    runs.ack([0, 2])
    assert [e.acked for e in entries] == [False, True, False, True]
