"""The source task loop on real Kafka: records land, only acknowledged offsets commit, pause, stop, failure."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.converters.header import SimpleHeaderConverter
from pyconnect.api.converters.string import StringConverter
from pyconnect.api.data import OPTIONAL_STRING_SCHEMA, STRING_SCHEMA
from pyconnect.api.source import (
    Header,
    MemoryOffsetStorageReader,
    RecordMetadata,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionContext,
)
from pyconnect.kafka.task_transactions import OWN_OFFSETS_TOPIC_MESSAGE, TaskTransactions
from pyconnect.protocol.internal_records import State, TargetState, encode_offset_key, encode_offset_value
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.testing.backends import ClusterHandle
from pyconnect.transforms.config import transformation_chain
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.source_commits import CommitPolicy, OffsetCommits, OffsetEncoder, TransactionCommits
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters
from tests.integration.fleet import RECENT_MS

pytestmark = pytest.mark.kafka


class CountingTask(SourceTask):
    """Emits ``batch`` records per poll up to ``limit``, then idles; optionally fails at ``fail_at``."""

    def __init__(self, topic: str, limit: int, batch: int = 100, fail_at: int | None = None) -> None:
        self.topic, self.limit, self.batch, self.fail_at = topic, limit, batch, fail_at
        self.next = 0
        self.stopped = False
        self.commits = 0

    def version(self) -> str:
        return "test"

    async def start(self, props: Mapping[str, str]) -> None:
        self.prefix = props["prefix"]

    async def poll(self) -> list[SourceRecord] | None:
        if self.fail_at is not None and self.next >= self.fail_at:
            raise RuntimeError("source broke")
        if self.next >= self.limit:
            await asyncio.sleep(0.05)
            return None
        out = []
        for _ in range(min(self.batch, self.limit - self.next)):
            n = self.next
            out.append(
                SourceRecord(
                    {"p": n % 2},
                    {"n": n},
                    self.topic,
                    n % 3,
                    STRING_SCHEMA,
                    f"k{n}",
                    STRING_SCHEMA,
                    f"{self.prefix}-{n}",
                    RECENT_MS + n,
                    [Header("h", STRING_SCHEMA, f"v{n}"), Header("n", OPTIONAL_STRING_SCHEMA, None)],
                )
            )
            self.next += 1
        return out

    async def commit(self) -> None:
        self.commits += 1

    async def stop(self) -> None:
        self.stopped = True


async def make_topic(bootstrap: str, name: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 3, 1)])
    finally:
        await admin.close()


def build(
    cluster: ClusterHandle,
    task: CountingTask,
    committed: dict[str, Any],
    reporter: RecordingReporter,
    *,
    producer: AIOKafkaProducer | None = None,
    context: SourceTaskContext | None = None,
    value_converter: Any = None,
    flush_interval_s: float = 0.2,
    close_producer: Callable[[], Awaitable[None]] | None = None,
    target_state: TargetState = TargetState.STARTED,
    transactions: TaskTransactions | None = None,
    encode_offsets: OffsetEncoder | None = None,
    transaction_interval_s: float | None = None,
    transaction_context: TransactionContext | None = None,
    preflight: Callable[[], Awaitable[None]] | None = None,
    postflight: Callable[[], Awaitable[None]] | None = None,
    **parts: Any,
) -> tuple[WorkerSourceTask, AIOKafkaProducer]:
    """A task on ``cluster`` with a string converter; ``parts``: more :class:`SourceTaskParts` fields."""
    producer = producer or AIOKafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers, acks="all", enable_idempotence=True, linger_ms=5
    )

    async def write(offsets: dict[str, Any]) -> None:
        committed.update({key: offset for key, (_partition, offset) in offsets.items()})

    converter = StringConverter()
    converter.configure({}, False)
    header_converter = SimpleHeaderConverter()
    header_converter.configure({})
    commits: CommitPolicy = (
        OffsetCommits(write, interval_s=flush_interval_s)
        if transactions is None
        else TransactionCommits(
            transactions,
            encode_offsets or (lambda pairs: []),
            interval_s=transaction_interval_s,
            context=transaction_context,
            preflight=preflight,
            postflight=postflight,
        )
    )
    runner = WorkerSourceTask(
        ConnectorTaskId("c", 0),
        task,
        {"prefix": "val"},
        context or SourceTaskContext({"prefix": "val"}, MemoryOffsetStorageReader()),
        SourceTaskParts(
            producer,
            TaskConverters(converter, value_converter or converter, header_converter),
            reporter,
            close_producer=close_producer or producer.stop,
            **parts,
        ),
        commits,
        target_state,
    )
    return runner, producer


async def consume_all(bootstrap: str, topic: str, count: int) -> list[Any]:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    seen: list[Any] = []
    try:
        async with asyncio.timeout(60):
            while len(seen) < count:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    seen.extend(messages)
    finally:
        await consumer.stop()
    return seen


async def test_records_land_and_acknowledged_offsets_commit(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, committed, reporter = CountingTask(topic, 1000), {}, RecordingReporter()
    runner, producer = build(cluster_a, task, committed, reporter)
    await producer.start()
    runner.start()
    seen = await consume_all(cluster_a.bootstrap_servers, topic, 1000)
    async with asyncio.timeout(30):
        while len(committed) < 2 or max(o["n"] for o in committed.values()) < 999:
            await asyncio.sleep(0.1)
    runner.stop()
    assert await runner.wait_stopped(30)

    assert len(seen) == 1000
    by_value = {m.value.decode(): m for m in seen}
    m = by_value["val-7"]
    assert (m.key, m.partition, m.timestamp, list(m.headers)) == (
        b"k7",
        7 % 3,
        RECENT_MS + 7,
        [("h", b"v7"), ("n", None)],
    ), "a null header value stays null"
    assert sorted(o["n"] for o in committed.values()) == [998, 999], "last offset of each source partition"
    assert task.stopped and task.commits >= 1
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]
    assert runner.records_written == 1000 and runner.records_polled == 1000


async def test_paused_task_does_not_poll_until_resumed(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, reporter = CountingTask(topic, 50), RecordingReporter()
    runner, producer = build(cluster_a, task, {}, reporter, target_state=TargetState.PAUSED)
    await producer.start()
    runner.start()
    await asyncio.sleep(0.5)
    assert task.next == 0, "a task paused from the start is not started"
    runner.transition_to(TargetState.STARTED)
    await consume_all(cluster_a.bootstrap_servers, topic, 50)
    runner.transition_to(TargetState.PAUSED)
    await asyncio.sleep(0.3)
    runner.stop()
    assert await runner.wait_stopped(30)
    assert reporter.states(ConnectorTaskId("c", 0)) == [
        State.PAUSED,
        State.RUNNING,
        State.PAUSED,
        State.UNASSIGNED,
    ]


async def test_a_failing_task_reports_failed_with_its_trace(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, committed, reporter = CountingTask(topic, 1000, fail_at=300), {}, RecordingReporter()
    runner, producer = build(cluster_a, task, committed, reporter)
    await producer.start()
    runner.start()
    assert await runner.wait_stopped(30), "a failed task ends its loop by itself"
    _item, state, trace = reporter.reports[-1]
    assert state == State.FAILED and trace and "RuntimeError: source broke" in trace
    assert task.stopped, "stop() still runs after a failure"
    assert sorted(o["n"] for o in committed.values()) == [298, 299], (
        "acknowledged records are committed on the way out"
    )


async def test_a_task_stopped_before_its_loop_begins_closes_its_producer(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """As Java's WorkerTask: no plugin start or stop, the producer closed, UNASSIGNED reported (a
    herder that starts a task and stops it in the same tick, e.g. on new task configs)."""
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, reporter = CountingTask(topic, 10), RecordingReporter()
    closed: list[bool] = []
    producers: list[AIOKafkaProducer] = []

    async def close() -> None:
        await producers[0].stop()
        closed.append(True)

    runner, producer = build(cluster_a, task, {}, reporter, close_producer=close)
    producers.append(producer)
    await producer.start()
    runner.start()
    runner.stop()
    assert await runner.wait_stopped(30)
    assert closed == [True]
    assert not hasattr(task, "prefix") and not task.stopped, "the plugin was never started, so not stopped"
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.UNASSIGNED]


class HangingStopTask(CountingTask):
    async def stop(self) -> None:
        await asyncio.sleep(3600)


async def test_a_task_that_will_not_stop_is_cancelled_at_the_graceful_bound(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, reporter = HangingStopTask(topic, 10), RecordingReporter()
    runner, producer = build(cluster_a, task, {}, reporter)
    await producer.start()
    runner.start()
    await consume_all(cluster_a.bootstrap_servers, topic, 10)
    runner.stop()
    started = asyncio.get_running_loop().time()
    assert not await runner.wait_stopped(1.0), "the loop did not end cleanly"
    assert asyncio.get_running_loop().time() - started < 5, "cancelled at the bound, not after stop() returns"
    assert not runner.running
    assert State.UNASSIGNED not in reporter.states(ConnectorTaskId("c", 0)), (
        "no UNASSIGNED for a cancelled task"
    )


class HangingStartTask(CountingTask):
    async def start(self, props: Mapping[str, str]) -> None:
        await asyncio.sleep(3600)


async def test_a_task_cancelled_in_start_is_still_stopped(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """The plugin's stop() closes what a half-done start() opened, even when the loop is cancelled."""
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, reporter = HangingStartTask(topic, 10), RecordingReporter()
    runner, producer = build(cluster_a, task, {}, reporter)
    await producer.start()
    runner.start()
    await asyncio.sleep(0.2)
    runner.stop()
    assert not await runner.wait_stopped(0.5), "start() never returned, so the loop was cancelled"
    assert task.stopped, "stop() ran after the cancelled start()"
    assert not runner.running


class SometimesBadValueTask(CountingTask):
    """Every seventh record carries a value the ByteArrayConverter refuses (a ``str``)."""

    async def poll(self) -> list[SourceRecord] | None:
        records = await super().poll()
        for record in records or ():
            record.value_schema = None
            record.value = record.value if record.source_offset["n"] % 7 == 3 else record.value.encode()
        return records


async def test_tolerance_all_skips_only_the_records_that_fail_conversion(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, committed, reporter = SometimesBadValueTask(topic, 70, batch=35), {}, RecordingReporter()
    runner, producer = build(
        cluster_a,
        task,
        committed,
        reporter,
        errors=RetryWithTolerance(tolerate_all=True),
        value_converter=ByteArrayConverter(),
    )
    await producer.start()
    runner.start()
    seen = await consume_all(cluster_a.bootstrap_servers, topic, 60)
    runner.stop()
    assert await runner.wait_stopped(30)
    assert sorted(int(m.value.decode().split("-")[1]) for m in seen) == [n for n in range(70) if n % 7 != 3]
    assert runner.records_skipped == 10 and runner.records_written == 60


async def test_while_commits_are_refused_the_task_writes_nothing_and_commits_nothing(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """The stale-membership fence's side in the task: while ``may_commit()`` refuses, polled records are
    held back, no offset is written and ``task.commit()`` is not called; allowed again, all flows."""
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, committed, reporter = CountingTask(topic, 200), {}, RecordingReporter()
    allowed = [False]
    runner, producer = build(cluster_a, task, committed, reporter, may_commit=lambda: allowed[0])
    await producer.start()
    runner.start()
    await asyncio.sleep(0.6)  # three commit intervals, all refused
    assert (task.next, runner.records_written, committed, task.commits) == (100, 0, {}, 0)
    assert runner.commits_refused >= 2
    allowed[0] = True
    await consume_all(cluster_a.bootstrap_servers, topic, 200)
    async with asyncio.timeout(30):
        while len(committed) < 2 or max(o["n"] for o in committed.values()) < 199:
            await asyncio.sleep(0.05)
    assert sorted(o["n"] for o in committed.values()) == [198, 199] and task.commits >= 1
    runner.stop()
    assert await runner.wait_stopped(30)
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]


async def test_a_task_stopped_while_commits_are_refused_drops_its_offsets(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """Acknowledged offsets the fence refused are dropped at stop: the task's new owner resumes from
    what was committed before, never from offsets older than its own."""
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    task, committed, reporter = CountingTask(topic, 200), {}, RecordingReporter()
    allowed = [True]
    runner, producer = build(
        cluster_a, task, committed, reporter, may_commit=lambda: allowed[0], flush_interval_s=60.0
    )
    await producer.start()
    runner.start()
    await consume_all(cluster_a.bootstrap_servers, topic, 200)
    async with asyncio.timeout(30):
        while runner.records_written < 200:
            await asyncio.sleep(0.05)
    allowed[0] = False  # the membership lapsed before the first offset commit
    runner.stop()
    assert await runner.wait_stopped(30)
    assert (committed, task.commits, runner.commits_refused) == ({}, 0, 1)
    assert task.stopped


class HookedTask(CountingTask):
    """Every fourth record (n % 4 == 3) is a tombstone; ``commit_record`` calls are recorded."""

    def __init__(self, topic: str, limit: int) -> None:
        super().__init__(topic, limit, batch=50)
        self.hooked: list[tuple[int, str, str | None, int | None]] = []

    async def poll(self) -> list[SourceRecord] | None:
        records = await super().poll()
        for record in records or []:
            if record.source_offset is not None and record.source_offset["n"] % 4 == 3:
                record.value = None
        return records

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert record.source_offset is not None
        self.hooked.append(
            (
                record.source_offset["n"],
                record.topic,
                None if metadata is None else metadata.topic,
                None if metadata is None else metadata.offset,
            )
        )


async def test_transformed_records_are_routed_and_dropped_ones_still_commit(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    renamed = f"copy.{topic}"
    await make_topic(cluster_a.bootstrap_servers, renamed)
    chain = transformation_chain(
        PluginRegistry.from_entry_points(),
        {
            "transforms": "dropTombstones,route",
            "transforms.dropTombstones.type": "Filter",
            "transforms.dropTombstones.predicate": "isTombstone",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "copy.$1",
            "predicates": "isTombstone",
            "predicates.isTombstone.type": "RecordIsTombstone",
        },
    )
    task, committed, reporter = HookedTask(topic, 400), {}, RecordingReporter()
    runner, producer = build(cluster_a, task, committed, reporter, transformations=chain)
    await producer.start()
    runner.start()
    seen = await consume_all(cluster_a.bootstrap_servers, renamed, 300)
    async with asyncio.timeout(30):
        while len(committed) < 2 or max(o["n"] for o in committed.values()) < 399 or len(task.hooked) < 400:
            await asyncio.sleep(0.1)
    runner.stop()
    assert await runner.wait_stopped(30)

    assert sorted(int(m.value.decode().rsplit("-", 1)[1]) for m in seen) == [
        n for n in range(400) if n % 4 != 3
    ]
    assert sorted(o["n"] for o in committed.values()) == [398, 399], "a dropped record's offset commits too"
    dropped = [h for h in task.hooked if h[2] is None]
    assert sorted(h[0] for h in dropped) == [n for n in range(400) if n % 4 == 3]
    sent = [h for h in task.hooked if h[2] is not None]
    assert len(sent) == 300 and all(h[1] == topic and h[2] == renamed for h in sent), (
        "hooks see the record as polled and where the transformed record landed"
    )
    assert runner.records_written == 300


async def test_tolerance_all_skips_records_a_transformation_rejects_and_commits_them(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    await make_topic(cluster_a.bootstrap_servers, topic)
    chain = transformation_chain(
        PluginRegistry.from_entry_points(),
        {
            "transforms": "extract",
            "transforms.extract.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
            "transforms.extract.field": "x",
        },
    )
    task, committed, reporter = HookedTask(topic, 40), {}, RecordingReporter()
    runner, producer = build(
        cluster_a,
        task,
        committed,
        reporter,
        transformations=chain,
        errors=RetryWithTolerance(tolerate_all=True),
    )
    await producer.start()
    runner.start()
    async with asyncio.timeout(30):
        while len(committed) < 2 or max(o["n"] for o in committed.values()) < 39:
            await asyncio.sleep(0.1)
    runner.stop()
    assert await runner.wait_stopped(30)
    assert (runner.records_written, runner.records_skipped) == (0, 40), "a STRING schema has no field x"
    assert sorted(h[0] for h in task.hooked if h[2] is None) == list(range(40))
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]


class OversizedTask(HookedTask):
    """Every record of partition 0 (n % 3 == 0) carries a value larger than the topic accepts."""

    async def poll(self) -> list[SourceRecord] | None:
        records = await CountingTask.poll(self)
        for record in records or []:
            if record.kafka_partition == 0:
                record.value = "x" * 8000
        return records


async def test_tolerance_all_skips_records_the_broker_refuses_and_hands_them_to_commit_record(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """Java's ``producerSendFailed`` under ``errors.tolerance=all``: the refused records are counted as
    skipped, their offsets commit, and ``commit_record(record, None)`` runs for each."""
    topic = unique("src")
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster_a.bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 3, 1, topic_configs={"max.message.bytes": "4096"})])
    finally:
        await admin.close()
    task, committed, reporter = OversizedTask(topic, 60), {}, RecordingReporter()
    producer = AIOKafkaProducer(bootstrap_servers=cluster_a.bootstrap_servers, acks="all", linger_ms=5)
    runner, producer = build(
        cluster_a, task, committed, reporter, producer=producer, errors=RetryWithTolerance(tolerate_all=True)
    )
    await producer.start()
    runner.start()
    async with asyncio.timeout(30):
        while len(task.hooked) < 60 or not committed or max(o["n"] for o in committed.values()) < 59:
            await asyncio.sleep(0.1)
    runner.stop()
    assert await runner.wait_stopped(30)
    refused = sorted(h[0] for h in task.hooked if h[2] is None)
    assert refused == [n for n in range(60) if n % 3 == 0]
    assert (runner.records_written, runner.records_skipped) == (40, 20)
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]


async def read_committed(bootstrap: str, topic: str, count: int, settle_s: float = 0.0) -> list[Any]:
    """At least ``count`` records visible to ``read_committed``, reading for at least ``settle_s``."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", isolation_level="read_committed"
    )
    await consumer.start()
    seen: list[Any] = []
    try:
        settled = asyncio.get_running_loop().time() + settle_s
        async with asyncio.timeout(30):
            while len(seen) < count or asyncio.get_running_loop().time() < settled:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    seen.extend(messages)
    finally:
        await consumer.stop()
    return seen


class MetadataTask(CountingTask):
    """Records the metadata its ``commit_record`` hook gets."""

    def __init__(self, topic: str, limit: int) -> None:
        super().__init__(topic, limit)
        self.hooked: list[RecordMetadata | None] = []

    async def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.hooked.append(metadata)


@pytest.mark.parametrize(
    ("interval_s", "transactions", "task_commits"),
    [(None, 10, 11), (3600.0, 1, 1)],  # poll: the clean stop's empty commit calls commit() too (Java)
)
async def test_exactly_once_commits_records_with_their_offsets_at_each_boundary(
    cluster_a: ClusterHandle,
    unique: Callable[[str], str],
    interval_s: float | None,
    transactions: int,
    task_commits: int,
) -> None:
    """``poll``: one transaction per polled batch (10 batches of 100); ``interval`` longer than the run:
    one transaction, committed at the clean stop. Each transaction holds its records and the offsets
    of both source partitions."""
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("src"), unique("offsets")
    await make_topic(bootstrap, topic)
    await make_topic(bootstrap, offsets_topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        transactional_id=unique("g") + "-c-0",
    )
    task, reporter = MetadataTask(topic, 1000), RecordingReporter()

    def encode(pairs: list[tuple[Any, Any]]) -> list[tuple[bytes, bytes | None]]:
        return [(encode_offset_key("c", p), encode_offset_value(o)) for p, o in pairs]

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
        encode_offsets=encode,
        transaction_interval_s=interval_s,
    )
    await producer.start()
    runner.start()
    async with asyncio.timeout(30):
        while task.next < 1000:
            await asyncio.sleep(0.05)
    if interval_s is not None:
        visible = await read_committed(bootstrap, topic, 0, settle_s=2.0)
        assert (visible, runner.commits) == ([], 0), "nothing is visible before the transaction commits"
        assert task.hooked == [], "commit_record waits for the transaction to commit"
    runner.stop()
    assert await runner.wait_stopped(30)

    records = await read_committed(bootstrap, topic, 1000)
    assert sorted(int(m.value.decode().split("-")[1]) for m in records) == list(range(1000))
    offsets = await read_committed(bootstrap, offsets_topic, 2 * transactions)
    assert len(offsets) == 2 * transactions
    last = {m.key: json.loads(m.value) for m in offsets}
    assert last == {
        encode_offset_key("c", {"p": 0}): {"n": 998},
        encode_offset_key("c", {"p": 1}): {"n": 999},
    }
    assert (runner.commits, task.commits) == (transactions, task_commits)
    assert len(task.hooked) == 1000 and all(m is not None and m.topic == topic for m in task.hooked)
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]


async def test_an_interval_transaction_commits_when_the_source_goes_quiet(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """``interval``: a task whose source has nothing more after one batch still commits that batch's
    transaction once the interval has passed (Java's ``batchDispatched`` after an empty poll); it does
    not hang open until more records come or the broker aborts it at the transaction timeout."""
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("src"), unique("offsets")
    await make_topic(bootstrap, topic)
    await make_topic(bootstrap, offsets_topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        transactional_id=unique("g") + "-c-0",
    )
    task, reporter = MetadataTask(topic, 100), RecordingReporter()  # one batch, then nothing

    def encode(pairs: list[tuple[Any, Any]]) -> list[tuple[bytes, bytes | None]]:
        return [(encode_offset_key("c", p), encode_offset_value(o)) for p, o in pairs]

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
        encode_offsets=encode,
        transaction_interval_s=1.0,
    )
    await producer.start()
    runner.start()
    try:
        records = await read_committed(bootstrap, topic, 100)  # within read_committed's 30 s bound
        assert len(records) == 100 and runner.commits == 1, "committed while the task still runs"
        assert len(task.hooked) == 100
    finally:
        runner.stop()
        assert await runner.wait_stopped(30)


@pytest.mark.parametrize("step", ["preflight", "postflight"])
async def test_a_failed_fencing_check_fails_the_task_before_the_plugin_starts(
    cluster_a: ClusterHandle, unique: Callable[[str], str], step: str
) -> None:
    """KIP-618: the preflight (zombie fencing, then the producer's start) and the postflight (still the
    current generation, still assigned here) run before the plugin starts; either failing fails the task."""
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("src"), unique("offsets")
    await make_topic(bootstrap, topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        transactional_id=unique("g") + "-c-0",
    )
    task, reporter = CountingTask(topic, 10), RecordingReporter()
    steps: list[str] = []

    async def preflight() -> None:
        steps.append("preflight")
        if step == "preflight":
            raise RuntimeError("Failed to perform zombie fencing: leader unreachable")
        await producer.start()

    async def postflight() -> None:
        steps.append("postflight")
        raise RuntimeError("Cannot start source task c-0 as it has already been revoked from this worker")

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
        preflight=preflight,
        postflight=postflight,
    )
    runner.start()
    assert await runner.wait_stopped(30), "a failed check ends the loop by itself"
    _item, state, trace = reporter.reports[-1]
    assert state == State.FAILED and trace
    assert ("zombie fencing" if step == "preflight" else "already been revoked") in trace
    assert steps == (["preflight"] if step == "preflight" else ["preflight", "postflight"])
    assert not hasattr(task, "prefix"), "the plugin never started"


async def test_an_exactly_once_task_may_not_produce_to_its_own_offsets_topic(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    """Java ``ExactlyOnceWorkerSourceTask.prepareToSendRecord``: the task fails with Java's message and
    nothing of its batch reaches the topic."""
    bootstrap = cluster_a.bootstrap_servers
    offsets_topic = unique("offsets")
    await make_topic(bootstrap, offsets_topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        transactional_id=unique("g") + "-c-0",
    )
    task, reporter = CountingTask(offsets_topic, 10), RecordingReporter()

    async def preflight() -> None:
        await producer.start()

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
        preflight=preflight,
    )
    runner.start()
    assert await runner.wait_stopped(30), "the refusal ends the loop by itself"
    _item, state, trace = reporter.reports[-1]
    assert state == State.FAILED and trace
    assert trace.splitlines()[0].endswith(OWN_OFFSETS_TOPIC_MESSAGE), trace
    assert await read_committed(bootstrap, offsets_topic, 0, settle_s=1.0) == []


async def test_stopping_a_task_does_not_wait_for_its_fencing_round(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    topic = unique("src")
    producer = AIOKafkaProducer(
        bootstrap_servers=cluster_a.bootstrap_servers, transactional_id=unique("g") + "-c-0"
    )
    task, reporter = CountingTask(topic, 10), RecordingReporter()
    entered = asyncio.Event()

    async def preflight() -> None:
        entered.set()
        await asyncio.sleep(3600)  # a fencing round that never ends

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        transactions=TaskTransactions(producer, unique("offsets"), "c-0"),
        preflight=preflight,
    )
    runner.start()
    await asyncio.wait_for(entered.wait(), 10)
    runner.stop()
    assert await runner.wait_stopped(5), "the stop cancels the waiting preflight"
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.UNASSIGNED]


class BoundaryTask(CountingTask):
    """Defines its own transactions (``transaction.boundary=connector``) over 4 batches of 10 records:
    commit after record 4; abort the rest of the first transaction at the end of batch 1; abort after
    record 24 and commit the end of batch 2; nothing for batch 3 (open at the stop)."""

    def __init__(self, topic: str) -> None:
        super().__init__(topic, 40, batch=10)
        self.polls = 0

    async def poll(self) -> list[SourceRecord] | None:
        records = await super().poll()
        if not records:
            return records
        context = self.context.transaction_context
        assert context is not None
        self.polls += 1
        if self.polls == 1:
            context.commit_transaction(records[4])
        elif self.polls == 2:
            context.abort_transaction()
        elif self.polls == 3:
            context.abort_transaction(records[4])
            context.commit_transaction()
        return records


async def test_connector_defined_transactions_commit_and_abort_where_the_task_asks(
    cluster_a: ClusterHandle, unique: Callable[[str], str]
) -> None:
    bootstrap = cluster_a.bootstrap_servers
    topic, offsets_topic = unique("src"), unique("offsets")
    await make_topic(bootstrap, topic)
    await make_topic(bootstrap, offsets_topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        enable_idempotence=True,
        transactional_id=unique("g") + "-c-0",
    )
    task, reporter = BoundaryTask(topic), RecordingReporter()
    context = TransactionContext()

    def encode(pairs: list[tuple[Any, Any]]) -> list[tuple[bytes, bytes | None]]:
        return [(encode_offset_key("c", p), encode_offset_value(o)) for p, o in pairs]

    runner, _ = build(
        cluster_a,
        task,
        {},
        reporter,
        producer=producer,
        context=SourceTaskContext(
            {"prefix": "val"}, MemoryOffsetStorageReader(), transaction_context=context
        ),
        transactions=TaskTransactions(producer, offsets_topic, "c-0"),
        encode_offsets=encode,
        transaction_context=context,
    )
    await producer.start()
    runner.start()
    async with asyncio.timeout(30):
        while task.next < 40:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    runner.stop()
    assert await runner.wait_stopped(30)

    records = await read_committed(bootstrap, topic, 10, settle_s=2.0)
    visible = sorted(int(m.value.decode().split("-")[1]) for m in records)
    assert visible == [0, 1, 2, 3, 4, 25, 26, 27, 28, 29]
    offsets = await read_committed(bootstrap, offsets_topic, 1, settle_s=1.0)
    last = {m.key: json.loads(m.value) for m in offsets}
    assert last == {
        encode_offset_key("c", {"p": 0}): {"n": 28},
        encode_offset_key("c", {"p": 1}): {"n": 29},
    }, "aborted records' offsets are committed; the transaction open at the stop is not"
    assert reporter.states(ConnectorTaskId("c", 0)) == [State.RUNNING, State.UNASSIGNED]
