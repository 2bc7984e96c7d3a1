"""Incremental fetch sessions (KIP-227) and held answers of the raw mirror fetch
(pyconnect.kafka.raw_source_fetch) on real Kafka.

Every FetchRequest the fetch builds is observed on its way to the wire (the struct
``SessionFetchRequest.build`` returns), so these check what the broker is sent and what it answers:

* the first fetch is full (every partition, epoch 0) and opens a session; from then on an idle fetch
  carries no partition, is answered with none, and still counts every partition as answered;
* records produced to 2 of N partitions arrive through incremental requests, answered with those
  partitions only, and the next request sends only the 2 positions moved;
* a seek back is sent as that one partition and its records are fetched again;
* a session the broker no longer recognises (an epoch out of step, an unknown session id) or a
  request cancelled in flight is followed by a full request, with no record lost or repeated;
* with sessions off, every request is full and sessionless;
* closing the fetch ends its session on the broker (the session id is unknown to it afterwards);
* what a poll capped by max.poll.records leaves of an answer is held: the next polls take it without
  a request, while one prefetch asks for what follows it; a seek drops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.consumer.fetcher import Fetcher

from connectors.mirror import raw_copy
from pyconnect.api.source import RawBatchTarget, RawRecordBatch
from pyconnect.kafka.fetch_session import FETCH_SESSION_ID_NOT_FOUND, FINAL_EPOCH
from pyconnect.kafka.raw_batches_io import SessionFetchRequest, decode_records, fetch_raw_session
from pyconnect.kafka.raw_source_fetch import AIOKAFKA_FETCHER_WAKE_S, RawSourceFetch
from pyconnect.kafka.source_consumer import SourceConsumer
from pyconnect.testing.backends import ClusterHandle
from tests.integration.fleet import create_topic

pytestmark = pytest.mark.kafka

PARTITIONS = 24
FIRST = 5


class Sent:
    """The fetch requests built for the wire: (session id, epoch, partitions sent, partitions forgotten)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests: list[tuple[int, int, list[tuple[str, int]], list[tuple[str, int]]]] = []
        self.offsets: list[dict[tuple[str, int], int]] = []  # per request, the fetch offset of each partition
        original = SessionFetchRequest.build

        def build(request: SessionFetchRequest, struct_class: Any) -> Any:
            struct = original(request, struct_class)
            sent = [(topic, part[0]) for topic, parts in struct.topics for part in parts]
            forgotten = [(topic, p) for topic, parts in struct.forgotten_topics_data for p in parts]
            self.requests.append((struct.session_id, struct.session_epoch, sent, forgotten))
            topics: Any = request._topics
            self.offsets.append({(t, p): offset for t, parts in topics for p, offset, _max in parts})
            return struct

        monkeypatch.setattr(SessionFetchRequest, "build", build)

    def take(self) -> list[tuple[int, int, list[tuple[str, int]], list[tuple[str, int]]]]:
        taken, self.requests, self.offsets = self.requests, [], []
        return taken


async def produce(bootstrap: str, topic: str, partitions: list[int], first: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        for p in partitions:
            for n in range(first, first + count):
                await producer.send(topic, f"{p}:{n}".encode(), partition=p)
        await producer.flush()
    finally:
        await producer.stop()


class Mirror:
    """A RawSourceFetch over all partitions of ``topic``, taking (decoding) whatever it fetches."""

    def __init__(self, bootstrap: str, topic: str, *, sessions: bool = True) -> None:
        self.topic = topic
        self.source = SourceConsumer(
            {"bootstrap.servers": bootstrap, "client.id": "fetch-sessions-test", "fetch.max.wait.ms": "300"},
            "source",
        )
        self.sessions = sessions
        self.fetcher: RawSourceFetch
        self.seen: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}

    async def start(self) -> None:
        await self.source.start()
        partitions = [(self.topic, p) for p in range(PARTITIONS)]
        self.source.assign(partitions)
        for p in range(PARTITIONS):
            self.source.seek(self.topic, p, 0)
        self.fetcher = RawSourceFetch(self.source, sessions=self.sessions)
        self.fetcher.pause(partitions)

    async def stop(self) -> None:
        await self.fetcher.close()
        await self.source.close()

    async def fetch(self) -> set[int]:
        """One fetch, its records taken; the partitions answered."""
        answered = set()
        for answer in await self.fetcher.fetch(1000):
            answered.add(answer.partition)
            records = decode_records(answer.fetch.records, answer.position)
            if records:
                self.seen[answer.partition].extend(int(r.value.split(b":")[1]) for r in records)
                self.fetcher.advance(answer.topic, answer.partition, records[-1].offset + 1, len(records))
        return answered

    async def until(self, done: Callable[[], bool], timeout: float = 20) -> None:
        async with asyncio.timeout(timeout):
            while not done():
                await self.fetch()

    def counts(self) -> dict[int, int]:
        return {p: len(values) for p, values in self.seen.items()}

    def exactly(self, expected: dict[int, int]) -> bool:
        return all(self.seen[p] == list(range(expected.get(p, 0))) for p in range(PARTITIONS))

    def positions(self) -> dict[int, int]:
        client: Any = self.source._consumer
        states = client._subscription.subscription.assignment
        return {p: states.state_value(TopicPartition(self.topic, p)).position for p in range(PARTITIONS)}


def is_full(request: tuple[int, int, list[Any], list[Any]]) -> bool:
    return request[1] in (0, -1)


@contextlib.asynccontextmanager
async def opened(
    cluster: ClusterHandle, topic: str, monkeypatch: pytest.MonkeyPatch, *, sessions: bool = True
) -> AsyncIterator[tuple[Sent, Mirror, dict[int, int]]]:
    """A topic of PARTITIONS partitions with FIRST records each, a Mirror over it that has fetched them
    all (exactly), and the requests observed; the expected counts per partition."""
    bootstrap = cluster.bootstrap_servers
    await create_topic(bootstrap, topic, PARTITIONS)
    await produce(bootstrap, topic, list(range(PARTITIONS)), 0, FIRST)
    sent = Sent(monkeypatch)
    mirror = Mirror(bootstrap, topic, sessions=sessions)
    await mirror.start()
    expected = dict.fromkeys(range(PARTITIONS), FIRST)
    try:
        await mirror.until(lambda: mirror.counts() == expected)
        assert mirror.exactly(expected)
        yield sent, mirror, expected
    finally:
        await mirror.stop()


async def test_idle_fetches_carry_no_partition_and_new_records_come_incrementally(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("sessions")
    bootstrap = cluster_a.bootstrap_servers
    async with opened(cluster_a, topic, monkeypatch) as (sent, mirror, expected):
        await mirror.fetch()  # the positions moved: sent incrementally
        requests = sent.take()
        first = requests[0]
        assert (first[0], first[1]) == (0, 0) and len(first[2]) == PARTITIONS  # full, opening a session
        session_id = requests[1][0]
        assert session_id != 0, "the broker opened a session"
        for number, (sid, epoch, partitions, forgotten) in enumerate(requests[1:], start=1):
            assert (sid, epoch) == (session_id, number) and forgotten == []
            assert len(partitions) <= PARTITIONS

        # Idle: nothing sent, nothing answered, yet every partition counts as answered.
        await asyncio.sleep(1.2)
        assert len(mirror.source.unanswered(1000)) == PARTITIONS  # nothing fetched for 1.2 s
        for _ in range(3):
            assert await mirror.fetch() == set()
        idle = sent.take()
        assert [(sid, len(p), len(f)) for sid, _, p, f in idle] == [(session_id, 0, 0)] * 3
        assert [epoch for _, epoch, _, _ in idle] == list(range(len(requests), len(requests) + 3))
        assert mirror.source.unanswered(1000) == []

        # New records on 2 of the partitions: only they are answered, only their positions sent next.
        await produce(bootstrap, topic, [3, 17], FIRST, 3)
        expected.update({3: FIRST + 3, 17: FIRST + 3})
        answered: set[int] = set()
        async with asyncio.timeout(20):
            while mirror.counts() != expected:
                answered |= await mirror.fetch()
        assert answered == {3, 17} and mirror.exactly(expected)
        await mirror.fetch()
        moved = sent.take()
        assert all(r[0] == session_id and not is_full(r) for r in moved) and moved[0][2] == []
        assert {p for r in moved for _, p in r[2]} == {3, 17}  # only the positions moved are sent

        # A seek back is sent as that one partition and its records come again.
        mirror.source.seek(topic, 5, 2)
        mirror.seen[5] = mirror.seen[5][:2]
        await mirror.until(lambda: mirror.counts() == expected)
        assert mirror.exactly(expected)
        seek = sent.take()
        assert seek[0][2] == [(topic, 5)] and not is_full(seek[0])


async def test_a_session_the_broker_lost_recovers_with_nothing_lost_or_repeated(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("sessions-reset")
    bootstrap = cluster_a.bootstrap_servers
    produced = FIRST
    async with opened(cluster_a, topic, monkeypatch) as (sent, mirror, expected):
        await mirror.fetch()
        (leader,) = mirror.fetcher._sessions
        session = mirror.fetcher._sessions[leader]
        assert session.session_id != 0 and session.epoch > 0

        def out_of_step() -> None:
            session._epoch += 5  # the broker expects another epoch: INVALID_FETCH_SESSION_EPOCH

        def unknown() -> None:
            session._session_id ^= 0x5A5A5A5A  # FETCH_SESSION_ID_NOT_FOUND

        for breaking, reopened_with in ((out_of_step, "same id"), (unknown, "no id")):
            sent.take()
            old_id = session.session_id
            breaking()
            await produce(bootstrap, topic, [1, 2, 20], produced, 4)
            produced += 4
            expected.update({1: produced, 2: produced, 20: produced})
            await mirror.until(lambda: mirror.counts() == expected)
            await mirror.fetch()
            assert mirror.exactly(expected)
            requests = sent.take()
            assert not is_full(requests[0])  # answered with the session error
            full = requests[1]
            assert full[1] == 0 and len(full[2]) == PARTITIONS
            assert full[0] == (old_id if reopened_with == "same id" else 0)
            assert session.session_id not in (0, old_id) and not is_full(requests[-1])

        # A prefetch cancelled in flight (as the task's stop does): the next request is full.
        sent.take()
        mirror.fetcher.prefetch(1000)
        async with asyncio.timeout(5):
            while not sent.requests:  # the request is on its way: the broker holds it up to 300 ms
                await asyncio.sleep(0.005)
        await mirror.fetcher.cancel_prefetch()
        await produce(bootstrap, topic, [1], produced, 2)
        produced += 2
        expected[1] = produced
        await mirror.until(lambda: mirror.counts() == expected)
        assert mirror.exactly(expected)
        requests = sent.take()
        assert not is_full(requests[0]) and is_full(requests[1]) and len(requests[1][2]) == PARTITIONS
        assert requests[1][0] == requests[0][0] != 0  # closing the session it had


async def test_closing_the_fetch_ends_its_session_on_the_broker(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("sessions-close")
    async with opened(cluster_a, topic, monkeypatch) as (sent, mirror, _expected):
        await mirror.fetch()
        (leader,) = mirror.fetcher._sessions
        session = mirror.fetcher._sessions[leader]
        session_id, epoch = session.session_id, session.epoch
        client: Any = mirror.source._consumer._client
        in_step = await fetch_raw_session(
            client, leader, {}, session_id=session_id, session_epoch=epoch, max_wait_ms=0
        )
        assert (in_step.error_code, in_step.session_id) == (0, session_id)  # the broker holds it
        sent.take()
        await mirror.fetcher.close()
        assert sent.take() == [(session_id, FINAL_EPOCH, [], [])]
        after = await fetch_raw_session(
            client, leader, {}, session_id=session_id, session_epoch=epoch + 1, max_wait_ms=0
        )
        assert after.error_code == FETCH_SESSION_ID_NOT_FOUND  # in step, but the session is gone


async def test_sessions_off_fetches_every_partition_sessionless(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("sessionless")
    async with opened(cluster_a, topic, monkeypatch, sessions=False) as (sent, mirror, expected):
        assert await mirror.fetch() == set(range(PARTITIONS))  # idle, and every partition answered
        assert mirror.exactly(expected)
        requests = sent.take()
        assert {(sid, epoch, len(p)) for sid, epoch, p, _ in requests} == {(0, -1, PARTITIONS)}


async def test_aiokafkas_own_fetcher_stays_asleep_under_the_raw_fetch(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """aiokafka's fetcher routine walks every assigned partition each time it wakes; under the raw
    fetch (every partition paused) it must wake neither every 200 ms nor at each partition taken."""
    walks: list[float] = []
    original = Fetcher._get_actions_per_node

    def counted(fetcher: Any, assignment: Any) -> Any:
        walks.append(time.monotonic())
        return original(fetcher, assignment)

    monkeypatch.setattr(Fetcher, "_get_actions_per_node", counted)
    topic = unique("sessions-asleep")
    bootstrap = cluster_a.bootstrap_servers
    async with opened(cluster_a, topic, monkeypatch) as (_sent, mirror, expected):
        walks.clear()
        await produce(bootstrap, topic, list(range(PARTITIONS)), FIRST, 2)  # every partition moves
        expected = dict.fromkeys(range(PARTITIONS), FIRST + 2)
        await mirror.until(lambda: mirror.counts() == expected)
        assert mirror.exactly(expected)
        started = time.monotonic()
        for _ in range(4):  # idle fetches, 300 ms each
            await mirror.fetch()
        idle_s = time.monotonic() - started
        assert len(walks) <= 2 + idle_s / AIOKAFKA_FETCHER_WAKE_S, (len(walks), idle_s)


async def poll_one_batch(mirror: Mirror) -> int:
    """One poll as MirrorSourceTask's raw path makes it with ``max.poll.records`` = 1: one whole batch
    taken, the rest of the answer held, the next fetch started; the records taken."""
    fetcher = mirror.fetcher
    taken_records = 0
    answers = await fetcher.fetch(1000)
    for answer in answers:
        taken = raw_copy.take(
            answer.fetch,
            answer.position,
            RawBatchTarget(0, 1 << 20),
            read_committed=False,
            remote=answer.topic,
            partition=answer.partition,
            source_partition={},
            max_records=max(0, 1 - taken_records),
        )
        taken_records += taken.records
        for item in taken.items:  # a batch starting before the position (after a seek) is decoded
            values = (
                [r.value for r in decode_records(item.data, item.first_offset)]
                if isinstance(item, RawRecordBatch)
                else [item.value]
            )
            mirror.seen[answer.partition].extend(int(v.split(b":")[1]) for v in values)
        if taken.rest is not None:
            fetcher.hold(answer, taken.next_position, taken.rest, taken.end)
        if taken.next_position != answer.position:
            fetcher.advance(answer.topic, answer.partition, taken.next_position, taken.records)
    if taken_records:
        fetcher.prefetch(1000)
    return taken_records


async def test_the_rest_of_a_capped_poll_is_held_and_what_follows_it_is_fetched_ahead(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("held")
    bootstrap = cluster_a.bootstrap_servers
    async with opened(cluster_a, topic, monkeypatch) as (sent, mirror, expected):
        for _ in range(4):  # four batches on partition 7, one producer each
            await produce(bootstrap, topic, [7], expected[7], 10)
            expected[7] += 10
        sent.take()
        assert await poll_one_batch(mirror) == 10  # one request, one batch taken, three held
        assert len(sent.take()) == 1
        end = mirror.positions()[7] + 30
        await produce(bootstrap, topic, [7], expected[7], 10)  # what follows the held batches
        expected[7] += 10
        held_polls = 0
        while mirror.fetcher._held:
            assert await poll_one_batch(mirror) == 10
            held_polls += 1
        assert held_polls == 3
        offsets = sent.offsets
        assert len(sent.take()) == 1, "the held batches were taken without a request but the one prefetch"
        assert offsets == [{(topic, 7): end}]  # the prefetch asked for what follows the held batches
        async with asyncio.timeout(20):
            while mirror.counts() != expected:
                await poll_one_batch(mirror)
        assert mirror.exactly(expected)


async def test_a_seek_drops_the_held_rest(
    cluster_a: ClusterHandle, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = unique("held-seek")
    bootstrap = cluster_a.bootstrap_servers
    async with opened(cluster_a, topic, monkeypatch) as (_sent, mirror, expected):
        for _ in range(3):
            await produce(bootstrap, topic, [9], expected[9], 10)
            expected[9] += 10
        assert await poll_one_batch(mirror) == 10 and mirror.fetcher._held
        mirror.source.seek(topic, 9, 2)  # back into what was taken
        mirror.seen[9] = mirror.seen[9][:2]
        async with asyncio.timeout(20):
            while mirror.counts() != expected:
                await poll_one_batch(mirror)
        assert mirror.exactly(expected)
