"""A failover drill on real clusters: sequence-numbered records on the source, consumer groups reading
them there, the cut, and what each group re-reads or skips once moved to the target.

- :class:`Traffic`: one thread with one event loop: a producer writing every partition of a topic,
  record ``n`` of partition ``p`` holding ``n`` (so on a fresh topic ``n`` is also its source offset),
  with the headers :func:`headers_of` gives, and *classic* consumer groups (aiokafka) reading the topic and committing every 250 ms until each is
  told to stop (it commits its position and leaves). Every loop is bounded by a deadline.
- :class:`ConsumerProtocolGroup`: Java's console consumer in a ``group.protocol=consumer`` group (KIP-848,
  auto-commit every 250 ms; SIGTERM closes it, committing).
- :func:`measure`: with the group's committed offsets on the source at the cut, reads the remote topic on
  the target and the group's offsets there: per group the records a consumer resuming there re-reads
  (sequence number below the group's source position), skips (a copied record at or past it that the
  consumer never reaches) and reads twice because the mirror copied them twice.

Every client takes Java client keys (``config``), so the same drill runs on secured clusters.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError
from aiokafka.structs import OffsetAndMetadata

from pyconnect.kafka.clients import create_consumer, create_producer
from pyconnect.kafka.group_admin import GroupAdmin
from pyconnect.testing.distribution import ensure_distribution
from pyconnect.testing.java_process import JavaProcess

CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
COMMIT_EVERY_S = 0.25
MAX_DRILL_S = 600.0


def headers_of(n: int) -> list[tuple[str, bytes]]:
    """The headers of record ``n``: its number as text and three bytes that are not text."""
    return [("seq", b"%d" % n), ("bin", bytes([0, 255, n % 256]))]


@dataclass
class ClassicGroup:
    name: str
    stop: threading.Event = field(default_factory=threading.Event)
    stopped_at: float | None = None
    read: int = 0


class Traffic:
    """The producer and the classic groups (see the module docstring); ``start`` then ``stop``."""

    def __init__(
        self, config: Mapping[str, Any], topic: str, partitions: int, rate: float, groups: Sequence[str]
    ) -> None:
        self.config = dict(config)
        self.topic = topic
        self.partitions = partitions
        self.rate = rate
        self.groups = {g: ClassicGroup(g) for g in groups}
        self.produced = [0] * partitions
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"traffic-{topic}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop_group(self, group: str, timeout: float = 30.0) -> float:
        """Stop ``group`` (it commits its position and leaves); returns when it stopped (monotonic)."""
        entry = self.groups[group]
        entry.stop.set()
        deadline = time.monotonic() + timeout
        while entry.stopped_at is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert entry.stopped_at is not None, f"group {group} did not stop: {self.errors}"
        return entry.stopped_at

    def stop(self) -> None:
        self._stop.set()
        for entry in self.groups.values():
            entry.stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        jobs = [asyncio.create_task(self._produce())]
        jobs += [asyncio.create_task(self._consume(g)) for g in self.groups.values()]
        for outcome in await asyncio.gather(*jobs, return_exceptions=True):
            if isinstance(outcome, Exception):
                self.errors.append(repr(outcome))

    async def _produce(self) -> None:
        producer = create_producer(self.config, acks="all", enable_idempotence=True, linger_ms=5)
        await producer.start()
        per_round = max(1, int(self.rate / 20))
        started = time.monotonic()
        try:
            while not self._stop.is_set() and time.monotonic() - started < MAX_DRILL_S:
                sends = []
                for p in range(self.partitions):
                    for n in range(self.produced[p], self.produced[p] + per_round):
                        sends.append(
                            await producer.send(
                                self.topic, b"%d" % n, key=b"k%d" % n, partition=p, headers=headers_of(n)
                            )
                        )
                await asyncio.gather(*sends)
                self.produced = [n + per_round for n in self.produced]
                await asyncio.sleep(0.05)
        finally:
            await producer.stop()

    async def _consume(self, entry: ClassicGroup) -> None:
        consumer = create_consumer(
            self.config,
            self.topic,
            group_id=entry.name,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=10000,
            heartbeat_interval_ms=1000,
        )
        await consumer.start()
        try:
            committed_at = time.monotonic()
            deadline = committed_at + MAX_DRILL_S
            while not entry.stop.is_set() and time.monotonic() < deadline:
                for messages in (await consumer.getmany(timeout_ms=100)).values():
                    entry.read += len(messages)
                if time.monotonic() - committed_at >= COMMIT_EVERY_S:
                    await consumer.commit()
                    committed_at = time.monotonic()
            positions = {tp: await consumer.position(tp) for tp in consumer.assignment()}
            await consumer.commit({tp: OffsetAndMetadata(o, "") for tp, o in positions.items()})
            entry.stopped_at = time.monotonic()
        finally:
            await consumer.stop()


class ConsumerProtocolGroup:
    """A console consumer of Java in a consumer-protocol group; ``stop`` returns when it exited."""

    def __init__(
        self, bootstrap: str, topic: str, group: str, log_dir: Path, client_file: Path | None = None
    ):
        args = ["--bootstrap-server", bootstrap, "--topic", topic, "--group", group, "--from-beginning"]
        args += ["--command-property", "group.protocol=consumer"]
        args += ["--command-property", f"auto.commit.interval.ms={int(COMMIT_EVERY_S * 1000)}"]
        args += ["--timeout-ms", "180000"]
        if client_file is not None:
            args += ["--command-config", str(client_file)]
        command = ensure_distribution().java_command(
            CONSOLE_CONSUMER, *args, heap="192m", jvm_opts=("-XX:TieredStopAtLevel=1",)
        )
        self.group = group
        self.process = JavaProcess(
            command, log_dir / f"console-{group}.log", f"drill-{log_dir.name}-{group}", die_with_parent=True
        )

    def start(self) -> None:
        self.process.start()

    def stop(self) -> float:
        self.process.stop(timeout=30)
        return time.monotonic()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()


async def committed(config: Mapping[str, Any], group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets of ``topic`` (``{}`` while its coordinator is not available yet)."""
    admin = GroupAdmin(dict(config))
    try:
        found = await admin.committed_offsets(group)
    except KafkaError as exc:
        if not exc.retriable:
            raise
        return {}
    finally:
        await admin.close()
    return {p: c.offset for (t, p), c in found.items() if t == topic}


async def read_all(
    config: Mapping[str, Any], topic: str, partitions: int, altered: list[int] | None = None
) -> dict[int, list[tuple[int, int]]]:
    """partition -> ``(offset, sequence number)`` of every committed record of ``topic``, to its end;
    ``altered`` collects the sequence numbers of records whose headers are not :func:`headers_of` them."""
    consumer = create_consumer(config, enable_auto_commit=False, isolation_level="read_committed")
    await consumer.start()
    rows: dict[int, list[tuple[int, int]]] = {p: [] for p in range(partitions)}
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            positions = [await consumer.position(tp) for tp in tps]
            if all(position >= ends[tp] for tp, position in zip(tps, positions, strict=True)):
                break
            for tp, messages in (await consumer.getmany(timeout_ms=500)).items():
                for m in messages:
                    seq = int(m.value or b"-1")
                    rows[tp.partition].append((m.offset, seq))
                    if altered is not None and [(k, bytes(v)) for k, v in m.headers] != headers_of(seq):
                        altered.append(seq)
        return rows
    finally:
        await consumer.stop()


@dataclass(frozen=True)
class Measured:
    group: str
    reread: int
    skipped: int
    duplicates: int
    read: int


def measure(
    group: str,
    source_position: Mapping[int, int],
    target_offsets: Mapping[int, int],
    records: Mapping[int, list[tuple[int, int]]],
) -> Measured:
    """What a consumer of ``group`` resuming on the target at ``target_offsets`` reads (see module docstring);
    ``source_position``: the group's committed offsets on the source (= its next sequence numbers)."""
    reread = skipped = duplicates = read = 0
    for p, rows in records.items():
        start = target_offsets.get(p, 0)
        nxt = source_position.get(p, 0)
        ahead = [s for o, s in rows if o >= start]
        read += len(ahead)
        reread += sum(1 for s in ahead if s < nxt)
        duplicates += sum(1 for s in ahead if s >= nxt) - len({s for s in ahead if s >= nxt})
        skipped += len({s for o, s in rows if s >= nxt} - set(ahead))
    return Measured(group, reread, skipped, duplicates, read)
