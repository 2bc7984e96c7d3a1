"""The order a poll's raw batches go to the producer in (pyconnect.worker.raw_batches.interleaved)."""

from __future__ import annotations

from typing import Any

from pyconnect.api.source import RawRecordBatch
from pyconnect.worker.raw_batches import interleaved


def batch(
    partition: int, first: int, *, topic: str = "A.t", source: dict[str, Any] | None = None
) -> RawRecordBatch:
    source_partition = (
        source if source is not None else {"cluster": "A", "topic": "t", "partition": partition}
    )
    return RawRecordBatch(source_partition, {"offset": first + 9}, topic, partition, b"", 10, first, 0, 0)


def order(batches: list[RawRecordBatch]) -> list[tuple[str, int, int]]:
    return [(b.topic, b.kafka_partition, b.first_offset) for b in batches]


def test_one_batch_of_each_partition_in_turn_each_partition_in_its_own_order() -> None:
    polled = [batch(0, 0), batch(0, 10), batch(0, 20), batch(1, 0), batch(1, 10), batch(2, 0)]
    assert order(interleaved(polled)) == [
        ("A.t", 0, 0),
        ("A.t", 1, 0),
        ("A.t", 2, 0),
        ("A.t", 0, 10),
        ("A.t", 1, 10),
        ("A.t", 0, 20),
    ]
    other_topic = [batch(0, 0), batch(0, 10), batch(0, 0, topic="A.u", source={"topic": "u", "partition": 0})]
    assert order(interleaved(other_topic)) == [("A.t", 0, 0), ("A.u", 0, 0), ("A.t", 0, 10)]


def test_a_single_partition_or_an_empty_poll_is_left_as_it_is() -> None:
    single = [batch(3, 0), batch(3, 10)]
    assert interleaved(single) is single
    assert interleaved([]) == []


def test_batches_keep_their_order_unless_source_and_target_partitions_pair_one_to_one() -> None:
    # a target partition fed by two source partitions: its order would change
    shared_target = [batch(0, 0), batch(1, 0), batch(0, 10, source={"topic": "other", "partition": 0})]
    assert interleaved(shared_target) is shared_target
    # one source partition written to two target partitions: its offsets could commit out of order
    source = {"cluster": "A", "topic": "t", "partition": 0}
    split_source = [
        batch(0, 0, source=source),
        batch(0, 10, source=source),
        batch(1, 20, source=dict(source)),
    ]
    assert interleaved(split_source) is split_source
