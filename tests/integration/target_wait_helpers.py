"""What the target-wait tests share: a planned source task, a Connect-like task producer, a runner whose
offsets land in a dict, and reads of what the target holds."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiokafka import AIOKafkaProducer

from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.data import BYTES_SCHEMA
from pyconnect.api.source import MemoryOffsetStorageReader, SourceRecord, SourceTask, SourceTaskContext
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.protocol.internal_records import State, encode_offset_key, encode_offset_value
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.source_commits import CommitPolicy, OffsetCommits, TransactionCommits
from pyconnect.worker.source_parts import SourceTaskParts
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import RecordingReporter
from pyconnect.worker.task_converters import TaskConverters
from tests.integration.fleet import read_topic

T = TypeVar("T")
TASK = ConnectorTaskId("c", 0)
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

TopicPartition = tuple[str, int]


def connect_producer(bootstrap: str, **extra: str) -> AIOKafkaProducer:
    """A producer as Connect gives a source task (no idempotence, one request in flight, never expiring,
    never giving up on metadata), with a short linger."""
    return create_producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": "false",
            "max.in.flight.requests.per.connection": "1",
            "delivery.timeout.ms": str(INT_MAX),
            "max.block.ms": str(LONG_MAX),
            "linger.ms": "5",
            "client.id": "connector-producer-c-0",
            **extra,
        }
    )


class PlannedTask(SourceTask):
    """For each target (topic, partition) of ``limits``: records ``n`` from ``start[tp] + 1`` up to
    ``limits[tp]`` (exclusive; raise it to emit more), ``batch`` per partition and poll, value
    ``topic:partition:n`` padded to ``sizes.get((topic, partition, n), 0)`` bytes; then idles."""

    def __init__(
        self,
        limits: Mapping[TopicPartition, int],
        *,
        start: Mapping[TopicPartition, int] | None = None,
        batch: int = 50,
        sizes: Mapping[tuple[str, int, int], int] | None = None,
    ) -> None:
        self.limits = dict(limits)
        self.next = {tp: (start or {}).get(tp, -1) + 1 for tp in limits}
        self.batch = batch
        self.sizes = dict(sizes or {})

    def version(self) -> str:
        return "test"

    async def start(self, props: Mapping[str, str]) -> None:
        return None

    async def poll(self) -> list[SourceRecord] | None:
        out = []
        for (topic, partition), limit in self.limits.items():
            first = self.next[(topic, partition)]
            for n in range(first, min(first + self.batch, limit)):
                value = f"{topic}:{partition}:{n}".encode()
                size = self.sizes.get((topic, partition, n), 0)
                out.append(
                    SourceRecord(
                        {"topic": topic, "partition": partition},
                        {"n": n},
                        topic,
                        partition,
                        BYTES_SCHEMA,
                        b"k",
                        BYTES_SCHEMA,
                        value.ljust(size, b"x"),
                    )
                )
            self.next[(topic, partition)] = max(first, min(first + self.batch, limit))
        if not out:
            await asyncio.sleep(0.05)
            return None
        return out

    async def stop(self) -> None:
        return None


@dataclass
class Run:
    """One task instance: its runner, producer, status reports and committed offsets."""

    runner: WorkerSourceTask
    producer: AIOKafkaProducer
    reporter: RecordingReporter
    committed: dict[TopicPartition, int] = field(default_factory=dict)

    def trace(self) -> str | None:
        """The trace of the task's latest RUNNING report."""
        running = [trace for _item, state, trace in self.reporter.reports if state == State.RUNNING]
        return running[-1] if running else None

    def states(self) -> list[State]:
        return self.reporter.states(TASK)


async def start_run(
    task: PlannedTask,
    producer: AIOKafkaProducer,
    *,
    bounds: WaitBounds | None = None,
    committed: dict[TopicPartition, int] | None = None,
    transactions: TaskTransactions | None = None,
    cluster: str = "cluster T",
    graceful_s: float = 5.0,
) -> Run:
    """Start ``task`` as a worker's source task writing to ``producer``; offsets commit into
    ``run.committed`` (every 0.3 s, and at stop)."""
    reporter = RecordingReporter()
    run = Run(None, producer, reporter, committed if committed is not None else {})  # type: ignore[arg-type]

    async def write(offsets: dict[str, Any]) -> None:
        for partition, offset in offsets.values():
            run.committed[(partition["topic"], partition["partition"])] = offset["n"]

    def encode(pairs: list[tuple[Any, Any]]) -> list[tuple[bytes, bytes | None]]:
        return [(encode_offset_key("c", p), encode_offset_value(o)) for p, o in pairs]

    converter = ByteArrayConverter()
    commits: CommitPolicy = (
        OffsetCommits(write, interval_s=0.3)
        if transactions is None
        else TransactionCommits(transactions, encode)
    )
    run.runner = WorkerSourceTask(
        TASK,
        task,
        {},
        SourceTaskContext({}, MemoryOffsetStorageReader()),
        SourceTaskParts(
            producer,
            TaskConverters(converter, converter, converter),
            reporter,
            close_producer=producer.stop,
            cluster=cluster,
            stop_timeout_s=graceful_s,
            target_bounds=bounds or WaitBounds(),
        ),
        commits,
    )
    await producer.start()
    run.runner.start()
    return run


async def until(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll ``probe`` every 50 ms until it is truthy; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def all_committed(run: Run, limits: Mapping[TopicPartition, int]) -> bool:
    return all(run.committed.get(tp, -1) >= limit - 1 for tp, limit in limits.items())


async def copies(bootstrap: str, topics: list[str], isolation: str = "read_uncommitted") -> Counter[str]:
    """How many times each value (``topic:partition:n``, padding dropped) is on the target."""
    counted: Counter[str] = Counter()
    for topic in topics:
        for _partition, _offset, _key, value in await read_topic(bootstrap, topic, isolation, idle_reads=2):
            if value is not None:
                counted[value.rstrip(b"x").decode()] += 1
    return counted


def expected(limits: Mapping[TopicPartition, int]) -> set[str]:
    return {f"{topic}:{partition}:{n}" for (topic, partition), limit in limits.items() for n in range(limit)}
