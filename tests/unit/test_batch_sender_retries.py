"""BatchSender hands a batch over the way Java's producer blocks in ``send``: retrying a missing
partition (refreshing metadata) and a full queue or missing topic (KafkaTimeoutError) until
``max.block.ms``, then one KafkaTimeoutError (Java's TimeoutException) naming the cause."""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError

from pyconnect.kafka import batch_sender
from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord


class FakeBatch:
    def __init__(self) -> None:
        self.records: list[bytes | None] = []

    def append(self, **record: Any) -> object:
        self.records.append(record["value"])
        return object()

    def size(self) -> int:
        return 10

    def close(self) -> None:
        pass


class FakeCluster:
    def __init__(self, partitions: dict[str, set[int]]) -> None:
        self.partitions = partitions

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self.partitions.get(topic)


class FakeClient:
    def __init__(self, cluster: FakeCluster, grow_after: int) -> None:
        self.cluster = cluster
        self.refreshes = 0
        self._grow_after = grow_after
        self._topics: set[str] = set()
        self.topic_updates: list[set[str]] = []

    async def set_topics(self, topics: set[str]) -> None:
        self._topics = set(topics)
        self.topic_updates.append(set(topics))

    def force_metadata_update(self) -> None:
        self.refreshes += 1
        if self.refreshes == self._grow_after:
            self.cluster.partitions["t"] = {0, 1, 2, 3}


class FakeProducer:
    _max_request_size = 1_000_000

    def __init__(self, *, grow_after: int = 0, timeouts: int = 0) -> None:
        self.client = FakeClient(FakeCluster({"t": {0}}), grow_after)
        self.timeouts_left = timeouts
        self.sent: list[tuple[str, int]] = []

    def create_batch(self) -> FakeBatch:
        return FakeBatch()

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> Any:
        if self.timeouts_left:
            self.timeouts_left -= 1
            raise KafkaTimeoutError()
        self.sent.append((topic, partition))
        return object()


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_sender, "FIRST_PAUSE_S", 0.001)
    monkeypatch.setattr(batch_sender, "LONGEST_PAUSE_S", 0.002)


def record(partition: int) -> OutgoingRecord:
    return OutgoingRecord("t", None, b"v", partition)


async def test_a_partition_missing_from_metadata_is_waited_for_with_refreshes() -> None:
    producer = FakeProducer(grow_after=3)
    sender = BatchSender(producer)  # type: ignore[arg-type]
    sent = await sender.send([record(2)])
    assert [(b.topic, b.partition) for b in sent] == [("t", 2)] == producer.sent
    assert producer.client.refreshes == 3


async def test_a_full_queue_or_missing_topic_is_retried() -> None:
    producer = FakeProducer(timeouts=4)
    sent = await BatchSender(producer).send([record(0)])  # type: ignore[arg-type]
    assert len(sent) == 1 and producer.sent == [("t", 0)]


async def test_past_max_block_the_cause_is_raised_as_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    producer = FakeProducer()
    monkeypatch.setattr(batch_sender, "max_block_seconds", lambda _producer: 0.05)
    with pytest.raises(KafkaTimeoutError, match=r"Partition 3 of topic t with partition count 1 .* 50 ms"):
        await BatchSender(producer).send([record(3)])  # type: ignore[arg-type]
    assert producer.sent == [] and producer.client.refreshes > 1


async def test_new_topics_are_learnt_in_one_metadata_update_per_call() -> None:
    producer = FakeProducer()
    sender = BatchSender(producer)  # type: ignore[arg-type]
    producer.client.cluster.partitions.update({f"n{i}": {0} for i in range(50)})
    await sender.send([OutgoingRecord(f"n{i}", None, b"v", 0) for i in range(50)] + [record(0)])
    assert producer.client.topic_updates == [{"t", *(f"n{i}" for i in range(50))}]
    await sender.learn_topics(["t", "n3"])  # all tracked: no update
    await sender.learn_topics(["t", "late"])
    assert producer.client.topic_updates[1:] == [{"t", "late", *(f"n{i}" for i in range(50))}]
    assert len(producer.sent) == 51
