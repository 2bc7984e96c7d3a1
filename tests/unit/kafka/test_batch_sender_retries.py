"""BatchSender's hand-over (pyconnect.kafka.target_lanes) against a fake producer: a target partition
that is not ready (missing, refused, not draining) holds back only its own batches, in order, with the
task's conditions saying why, until it is ready or the wait bound passes; a stop abandons what waits.
The Kafka side is tested on real brokers in tests/integration/test_target_waits.py."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError
from aiokafka.structs import TopicPartition

from pyconnect.conditions import ConditionBoard
from pyconnect.kafka import target_lanes
from pyconnect.kafka.batch_sender import BatchSender, OutgoingRecord
from pyconnect.kafka.target_lanes import SendAbandoned, TargetLanes
from pyconnect.kafka.target_waits import TargetWaitExceeded, WaitBounds
from pyconnect.kafka.target_watch import TargetWatch


class Refused(Exception):
    def __init__(self, errno: int) -> None:
        super().__init__(f"[Error {errno}]")
        self.errno = errno


class FakeBatch:
    def __init__(self, size: int = 10) -> None:
        self.records: list[bytes | None] = []
        self._size = size

    def append(self, **record: Any) -> object:
        self.records.append(record["value"])
        return object()

    def size(self) -> int:
        return self._size

    def record_count(self) -> int:
        return max(1, len(self.records))

    def close(self) -> None:
        pass


class Queued:
    """What aiokafka's accumulator queues: the batch's future and its drain waiter."""

    def __init__(self, builder: FakeBatch) -> None:
        loop = asyncio.get_running_loop()
        self.builder = builder
        self.future: asyncio.Future[Any] = loop.create_future()
        self._drain_waiter: asyncio.Future[Any] = loop.create_future()

    def failure(self, exception: BaseException) -> None:
        self.future.set_exception(exception)
        self._drain_waiter.set_exception(exception)


class FakeCluster:
    def __init__(self, partitions: dict[str, set[int]]) -> None:
        self.partitions = partitions
        self.unauthorized_topics: set[str] = set()

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self.partitions.get(topic)

    def leader_for_partition(self, tp: TopicPartition) -> int | None:
        return 1 if tp.partition in self.partitions.get(tp.topic, ()) else None


class FakeClient:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.refreshes = 0
        self.on_refresh: Callable[[int], object] = lambda _count: None
        self._topics: set[str] = set()
        self._client_id = "producer-1"
        self.topic_updates: list[set[str]] = []

    async def set_topics(self, topics: set[str]) -> None:
        self._topics = set(topics)
        self.topic_updates.append(set(topics))

    def add_topic(self, topic: str) -> None:
        self._topics.add(topic)
        self.force_metadata_update()

    def force_metadata_update(self) -> None:
        self.refreshes += 1
        self.on_refresh(self.refreshes)

    def get_random_node(self) -> None:
        return None


class FakeAccumulator:
    def __init__(self) -> None:
        self._batches: dict[TopicPartition, deque[Queued]] = {}


class FakeProducer:
    """Queues every batch it takes (``queued``), in order per partition; the test drains, acknowledges
    or refuses them. ``timeouts`` hand-overs fail with KafkaTimeoutError first."""

    _max_request_size = 1_000_000

    def __init__(
        self, partitions: dict[str, set[int]], *, transactional: bool = False, timeouts: int = 0
    ) -> None:
        self.client = FakeClient(FakeCluster(partitions))
        self._message_accumulator = FakeAccumulator()
        self._txn_manager = type("Txn", (), {"transactional_id": "tx"})() if transactional else None
        self.timeouts_left = timeouts
        self.sent: list[tuple[str, int, FakeBatch]] = []

    def create_batch(self) -> FakeBatch:
        return FakeBatch()

    async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> asyncio.Future[Any]:
        if self.timeouts_left:
            self.timeouts_left -= 1
            raise KafkaTimeoutError()
        assert partition in (self.client.cluster.partitions_for_topic(topic) or ()), "Unrecognized partition"
        queued = Queued(batch)
        self._message_accumulator._batches.setdefault(TopicPartition(topic, partition), deque()).append(
            queued
        )
        self.sent.append((topic, partition, batch))
        return queued.future

    def drain(self, topic: str, partition: int) -> Queued:
        """The partition's first queued batch goes on the wire."""
        queues = self._message_accumulator._batches
        tp = TopicPartition(topic, partition)
        queued = queues[tp].popleft()
        if not queues[tp]:
            del queues[tp]
        queued._drain_waiter.set_result(None)
        return queued

    def ack_all(self, topic: str, partition: int) -> None:
        while TopicPartition(topic, partition) in self._message_accumulator._batches:
            self.drain(topic, partition).future.set_result(Metadata(len(self.sent)))


class Metadata:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(target_lanes, "FIRST_PAUSE_S", 0.001)
    monkeypatch.setattr(target_lanes, "LONGEST_PAUSE_S", 0.002)
    monkeypatch.setattr(target_lanes, "REFUSED_PAUSE_S", 0.002)
    monkeypatch.setattr(target_lanes, "REVIEW_S", 3600.0)  # the tests review on their own clock


async def until(what: str, probe: Callable[[], bool]) -> None:
    for _ in range(2000):
        if probe():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never: {what}")


def lanes_for(
    producer: FakeProducer, clock: ManualClock, **bounds: float
) -> tuple[TargetLanes, ConditionBoard]:
    board = ConditionBoard("c", 0, clock_ms=lambda: int(clock.now * 1000))
    lanes = TargetLanes(producer, clock=clock)
    lanes.observe(TargetWatch(board, "cluster B", "c-0", WaitBounds(**bounds)))
    return lanes, board


async def test_a_missing_partition_holds_back_only_its_own_batches_until_it_exists() -> None:
    producer, clock = FakeProducer({"t": {0}, "u": {0}}), ManualClock()
    lanes, board = lanes_for(producer, clock)
    waiting = await lanes.submit("t", 2, FakeBatch(), 1)
    flowing = [await lanes.submit(topic, 0, FakeBatch(), 1) for topic in ("t", "u")]
    assert [(t, p) for t, p, _ in producer.sent] == [("t", 0), ("u", 0)] and not waiting.done()
    producer.ack_all("t", 0)
    producer.ack_all("u", 0)
    await asyncio.gather(*flowing)
    await until("metadata refreshed", lambda: producer.client.refreshes >= 2)
    clock.now += 1.0
    lanes.review()
    (condition,) = board.active()
    assert (condition.code, condition.subject, condition.cluster, condition.client) == (
        "TARGET_TOPIC_MISSING",
        "t",
        "cluster B",
        "producer-1",
    )
    assert "has 1 partition(s) (3 wanted, 1 present)" in condition.message
    producer.client.cluster.partitions["t"] = {0, 1, 2}  # the operator added partitions
    await until("the parked batch handed over", lambda: ("t", 2) in [(t, p) for t, p, _ in producer.sent])
    producer.ack_all("t", 2)
    assert (await waiting).offset == 3
    lanes.review()
    assert board.active() == []
    await lanes.close()


async def test_a_refused_batch_and_those_queued_behind_it_wait_and_resume_in_order() -> None:
    producer, clock = FakeProducer({"t": {0}}), ManualClock()
    lanes, board = lanes_for(producer, clock)
    builders = [FakeBatch() for _ in range(3)]
    futures = [await lanes.submit("t", 0, builder, 1) for builder in builders]
    producer.drain("t", 0).future.set_exception(Refused(29))  # WRITE refused: the others are queued
    await until("parked again", lambda: lanes.parked == 3)
    assert not producer._message_accumulator._batches  # withdrawn from the producer
    clock.now += 1.0
    lanes.review()
    (condition,) = board.active()
    assert (condition.code, condition.subject) == ("ACL_DENIED", "t")
    await until("a probe", lambda: len(producer.sent) == 4)
    assert producer.sent[3][2] is builders[0]
    producer.drain("t", 0).future.set_exception(Refused(29))  # still refused
    await until("another probe", lambda: len(producer.sent) == 5)
    producer.drain("t", 0).future.set_result(Metadata(0))  # granted: the first goes, the rest follow
    await until("the rest handed over", lambda: len(producer.sent) == 7)
    assert [b for _, _, b in producer.sent[4:]] == builders
    producer.ack_all("t", 0)
    assert [m.offset for m in await asyncio.gather(*futures)] == [0, 7, 7]
    lanes.review()
    assert board.active() == []
    await lanes.close()


async def test_a_batch_too_large_for_the_topic_names_its_partition_and_size() -> None:
    producer, clock = FakeProducer({"t": {0, 1}}), ManualClock()
    lanes, board = lanes_for(producer, clock)
    big = await lanes.submit("t", 1, FakeBatch(size=5000), 1)
    other = await lanes.submit("t", 0, FakeBatch(), 1)
    producer.drain("t", 1).future.set_exception(Refused(10))
    await until("parked", lambda: lanes.parked == 1)
    producer.ack_all("t", 0)
    await other
    clock.now += 1.0
    lanes.review()
    (condition,) = board.active()
    assert (condition.code, condition.subject) == ("RECORD_TOO_LARGE", "t-1")
    assert "a batch of 1 record(s), 5000 bytes, for t-1" in condition.message
    await until("a probe", lambda: len(producer.sent) == 3)
    producer.ack_all("t", 1)
    await big
    lanes.review()
    assert board.active() == []
    await lanes.close()


async def test_past_the_wait_bound_the_waiting_batches_fail_naming_what_the_target_has() -> None:
    producer, clock = FakeProducer({"t": {0}}), ManualClock()
    lanes, board = lanes_for(producer, clock, wait_max_s=30)
    waiting = await lanes.submit("t", 3, FakeBatch(), 1)
    await until("metadata refreshed", lambda: producer.client.refreshes >= 1)
    clock.now += 29
    lanes.review()
    assert not waiting.done()
    clock.now += 1
    lanes.review()
    with pytest.raises(
        TargetWaitExceeded, match=r"partition 3 of topic t on cluster B after 30000 ms .*1 partition"
    ):
        await waiting
    assert board.active() == [] and lanes.parked == 0
    await lanes.close()


async def test_a_stop_abandons_what_waits_and_leaves_what_was_handed_over() -> None:
    producer, clock = FakeProducer({"t": {0}}), ManualClock()
    lanes, _board = lanes_for(producer, clock)
    waiting = await lanes.submit("t", 5, FakeBatch(), 1)
    handed = await lanes.submit("t", 0, FakeBatch(), 1)
    lanes.abandon()
    with pytest.raises(SendAbandoned):
        await waiting
    assert not await lanes.wait_settled(0.01)
    producer.ack_all("t", 0)
    assert await lanes.wait_settled(1) and (await handed).offset == 1
    later = await lanes.submit("t", 7, FakeBatch(), 1)  # would wait: abandoned at once
    with pytest.raises(SendAbandoned):
        await later
    await lanes.close()


async def test_a_transactional_producer_waits_in_place_with_the_condition() -> None:
    producer, clock = FakeProducer({"t": {0}}, transactional=True), ManualClock()
    lanes, board = lanes_for(producer, clock)
    producer.client.on_refresh = lambda count: (
        count == 5 and producer.client.cluster.partitions.update(t={0, 1})
    )
    handing = asyncio.ensure_future(lanes.submit("t", 1, FakeBatch(), 1))
    await until("metadata refreshed", lambda: producer.client.refreshes >= 2)
    clock.now += 1
    lanes.review()
    assert [c.code for c in board.active()] == ["TARGET_TOPIC_MISSING"] and not handing.done()
    future = await handing
    assert producer.sent[0][:2] == ("t", 1) and not future.done()
    lanes.review()
    assert board.active() == []
    producer.ack_all("t", 1)
    await lanes.close()


async def test_a_queue_that_does_not_drain_in_time_parks_the_batch_and_retries() -> None:
    producer, clock = FakeProducer({"t": {0}}, timeouts=3), ManualClock()
    lanes, board = lanes_for(producer, clock)
    future = await lanes.submit("t", 0, FakeBatch(), 1)
    await until("handed over", lambda: len(producer.sent) == 1)
    producer.ack_all("t", 0)
    await future
    assert board.active() == []
    await lanes.close()


async def test_the_target_is_unreachable_while_nothing_handed_over_is_acknowledged() -> None:
    producer, clock = FakeProducer({"t": {0}}), ManualClock()
    lanes, board = lanes_for(producer, clock, unreachable_after_s=15)
    future = await lanes.submit("t", 0, FakeBatch(), 1)
    clock.now += 15
    lanes.review()
    assert [c.code for c in board.active()] == ["TARGET_UNREACHABLE"]
    producer.ack_all("t", 0)
    await future
    lanes.review()
    assert board.active() == []
    await lanes.close()


async def test_records_without_a_partition_wait_for_their_topic() -> None:
    producer = FakeProducer({})
    sender = BatchSender(producer)
    producer.client.on_refresh = lambda count: (
        count == 4 and producer.client.cluster.partitions.update(k={0, 1})
    )
    sent = await sender.send([OutgoingRecord("k", b"key", b"v")])
    assert [(b.topic, b.partition) for b in sent] == [("k", 1)]
    producer.ack_all("k", 1)
    await sender.close()


async def test_new_topics_are_learnt_in_one_metadata_update_per_call() -> None:
    producer = FakeProducer({"t": {0}})
    sender = BatchSender(producer)
    producer.client.cluster.partitions.update({f"n{i}": {0} for i in range(50)})
    await sender.send(
        [OutgoingRecord(f"n{i}", None, b"v", 0) for i in range(50)] + [OutgoingRecord("t", None, b"v", 0)]
    )
    assert producer.client.topic_updates == [{"t", *(f"n{i}" for i in range(50))}]
    await sender.learn_topics(["t", "n3"])  # all tracked: no update
    await sender.learn_topics(["t", "late"])
    assert producer.client.topic_updates[1:] == [{"t", "late", *(f"n{i}" for i in range(50))}]
    assert len(producer.sent) == 51
    for topic, partition, _ in list(producer.sent):
        producer.ack_all(topic, partition)
    await sender.close()
